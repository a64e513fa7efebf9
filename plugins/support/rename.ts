import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { Located } from '../../core/content/rows.js'
import { isValidId } from '../../core/content/validation.js'
import { NotFound, ValidationFailed } from '../../core/errors.js'
import { can } from '../../core/security/permissions.js'
import { Permission } from '../../core/security/roles.js'
import { denied } from './access.js'

/**
 * A PATCH whose `id` is not the object's renames it first (Volto's folder
 * contents sends `{id, title}`): a move within its folder (core/content/relocations.ts),
 * which leaves a redirect at the old path. As a move, it needs Delete objects
 * on the object; an id another object of the folder has is 409. Answers the
 * object as it is after the rename (the same when `id` is absent or its own).
 */
export async function renameIfAsked (fastify: FastifyInstance, request: FastifyRequest, located: Located): Promise<Located> {
  const body = request.body as Record<string, unknown> | null
  if (body === null || typeof body !== 'object' || !Object.hasOwn(body, 'id') || body.id === located.obj.id) return located
  const { id } = body
  if (!isValidId(id)) throw ValidationFailed([{ field: 'id', message: 'An id is 1 to 255 letters, digits, dots, dashes or underscores.', error: 'ValidationError' }])
  if (!can(request.principal, Permission.Delete, located)) throw denied(request, `You may not rename ${located.obj.path}.`)
  const { to } = await fastify.relocations.rename(located, id)
  const { found } = await fastify.content.locate(to)
  if (found === null) throw NotFound(to, `${to} was deleted while the request ran.`)
  return found
}
