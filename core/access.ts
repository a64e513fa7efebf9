import type { FastifyRequest } from 'fastify'
import type { ContentStore, Located } from './content-store.js'
import { Forbidden, NotFound, Unauthorized } from './errors.js'
import { allows, Permission, SITE_ROLE_MAP, type PermissionName } from './security.js'
import { addressOf, urlOf } from './url.js'

/** 401 for anonymous callers (log in), 403 for users who lack the permission. */
export function denied (request: FastifyRequest, message: string): Error {
  return request.principal.userId === null ? Unauthorized() : Forbidden(message)
}

/** Site-wide management (control panels, vocabularies, Solr maintenance): the Manager role, else `denied`. */
export function requireManager (request: FastifyRequest, message: string): void {
  if (!allows(SITE_ROLE_MAP[Permission.ManagePortal], new Set(request.principal.roles))) throw denied(request, message)
}

/**
 * The request's context object, checked for `permission`. A missing or
 * invisible object is 404 with `context` = the nearest ancestor the caller
 * may view (API.md §2).
 */
export async function requireContext (store: ContentStore, request: FastifyRequest, permission: PermissionName = Permission.View): Promise<Located> {
  const { found, nearest } = await store.locate(request.contextPath)
  if (found === null) {
    const error = NotFound(request.absoluteUrl(addressOf(request.raw).originalUrl))
    for (let depth = nearest.length; depth > 0; depth--) {
      const lineage = nearest.slice(0, depth)
      if (store.can(request.principal, Permission.View, { lineage, type: store.typeOf(lineage[depth - 1]) })) {
        error.context = urlOf(request.baseUrl, lineage[depth - 1].path)
        break
      }
    }
    throw error
  }
  if (!store.can(request.principal, Permission.View, found)) throw denied(request, `You may not view ${found.obj.path}.`)
  if (permission !== Permission.View && !store.can(request.principal, permission, found)) {
    throw denied(request, `You lack the permission '${permission}' on ${found.obj.path}.`)
  }
  return found
}
