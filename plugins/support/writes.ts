import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { Located } from '../../core/content/rows.js'
import { changedFields, type CheckedWrite, type WriteContext } from '../../core/content/validation.js'
import type { Queryable } from '../../core/db/db.js'
import { Forbidden } from '../../core/errors.js'
import { can } from '../../core/security/permissions.js'

/**
 * What validation (`checkWrite`) reads besides the body; `q`: where the
 * write reads the object's current state. With `memo`, each vocabulary is
 * read once (a bulk import checks many bodies against the same terms).
 */
export function writeContext (fastify: FastifyInstance, stored: Record<string, unknown>, mode: 'create' | 'update', q?: Queryable, memo?: Map<string, Promise<string[]>>): WriteContext {
  const tokens = async (name: string): Promise<string[]> => await fastify.vocabularies.tokens(name, q)
  return {
    mode,
    stored,
    tokens: memo === undefined
      ? tokens
      : async name => {
        if (!memo.has(name)) memo.set(name, tokens(name))
        return await memo.get(name)!
      },
    imageMaxBytes: fastify.config.IMAGE_MAX_BYTES
  }
}

/** Refuses changes to fields whose write permission the caller lacks; sending the stored value back is fine. */
export function checkWritePermissions (request: FastifyRequest, located: Pick<Located, 'lineage' | 'type'>, write: CheckedWrite, stored: Record<string, unknown>): void {
  for (const name of changedFields(write.values, stored)) {
    const permission = located.type.fields.get(name)?.writePermission
    if (permission !== undefined && !can(request.principal, permission, located)) {
      throw Forbidden(`Changing '${name}' needs the permission '${permission}'.`)
    }
  }
}
