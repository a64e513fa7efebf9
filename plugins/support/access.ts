import type { FastifyRequest } from 'fastify'
import type { Caller } from '../../core/catalog/listing.js'
import type { ContentStore } from '../../core/content/store.js'
import type { Located, Traversal } from '../../core/content/rows.js'
import { Forbidden, NotFound, Unauthorized } from '../../core/errors.js'
import { Permission, type PermissionName } from '../../core/security/roles.js'
import { addressOf } from './url.js'
import { urlOf } from '../../core/content/urls.js'
import { can, holdsSiteWide } from '../../core/security/permissions.js'

/** Who asks, and the addresses the answer is written in (core/catalog/listing.ts). */
export function callerOf (request: FastifyRequest): Caller {
  return { principal: request.principal, baseUrl: request.baseUrl, url: request.absoluteUrl(addressOf(request.raw).originalUrl) }
}

/** 401 for anonymous callers (log in), 403 for users who lack the permission. */
export function denied (request: FastifyRequest, message: string): Error {
  return request.principal.userId === null ? Unauthorized() : Forbidden(message)
}

/** Site-wide management (control panels, vocabularies, Solr maintenance): the Manager role, else `denied`. */
export function requireManager (request: FastifyRequest, message: string): void {
  if (!holdsSiteWide(request.principal, Permission.ManagePortal)) throw denied(request, message)
}

/**
 * The request's context object, checked for `permission`. A missing or
 * invisible object is 404 with `context` = the nearest ancestor the caller
 * may view (docs/api.md, "Errors").
 */
export async function requireContext (store: ContentStore, request: FastifyRequest, permission: PermissionName = Permission.View): Promise<Located> {
  // A request that only shows the object may use the one kept since the last write; any other reads it as it is now.
  const showsOnly = request.method === 'GET' || request.method === 'HEAD'
  const traversal = showsOnly ? await store.locateForReading(request.contextPath) : await store.locate(request.contextPath)
  return checkedContext(store, request, traversal, permission)
}

function checkedContext (store: ContentStore, request: FastifyRequest, { found, nearest }: Traversal<Located>, permission: PermissionName): Located {
  if (found === null) {
    const error = NotFound(request.absoluteUrl(addressOf(request.raw).originalUrl))
    for (let depth = nearest.length; depth > 0; depth--) {
      const lineage = nearest.slice(0, depth)
      if (can(request.principal, Permission.View, { lineage, type: store.typeOf(lineage[depth - 1]) })) {
        error.context = urlOf(request.baseUrl, lineage[depth - 1].path)
        break
      }
    }
    throw error
  }
  if (!can(request.principal, Permission.View, found)) throw denied(request, `You may not view ${found.obj.path}.`)
  if (permission !== Permission.View && !can(request.principal, permission, found)) {
    throw denied(request, `You lack the permission '${permission}' on ${found.obj.path}.`)
  }
  return found
}
