import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { Located } from '../../core/content/rows.js'
import { changedFields, type CheckedWrite, type WriteContext } from '../../core/content/validation.js'
import type { Queryable } from '../../core/db/db.js'
import { querystringQuery } from '../../core/catalog/querystring.js'
import type { StoredQuery } from '../../core/content/declaration.js'
import { keptLinks } from '../../core/content/links.js'
import { ApiError, Forbidden } from '../../core/errors.js'
import { searchParams } from '../../core/query/search-params.js'
import { ANONYMOUS } from '../../core/security/roles.js'
import { can } from '../../core/security/permissions.js'

/**
 * What validation (`checkWrite`) reads besides the body; `baseUrl`: the
 * request's, which links to the site's objects start with; `q`: where the
 * write reads the object's current state. With `memo`, each vocabulary is
 * read once (a bulk import checks many bodies against the same terms).
 */
export function writeContext (fastify: FastifyInstance, baseUrl: string, stored: Record<string, unknown>, mode: 'create' | 'update', q?: Queryable, memo?: Map<string, Promise<string[]>>): WriteContext {
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
    imageMaxBytes: fastify.config.IMAGE_MAX_BYTES,
    fileMaxBytes: fastify.config.FILE_MAX_BYTES,
    keepLinks: async links => await keptLinks(q ?? fastify.db, baseUrl, links),
    queryProblem: stored => storedQueryProblem(fastify, stored)
  }
}

/**
 * Why a query an object stores (a Collection's) could not run: translated and
 * parsed as `@querystring-search` would (not run), so that what its readers
 * would get as a 400 is refused when it is written.
 */
function storedQueryProblem (fastify: FastifyInstance, stored: StoredQuery): string | null {
  if (!Array.isArray(stored.query) || stored.query.length === 0) return null
  try {
    const query = querystringQuery(stored, { now: new Date(), userId: null, contextPath: '/' })
    const { options } = searchParams(query, { path: '/', sitePath: fastify.config.SITE_PATH, metadataFields: requested => fastify.serializer.metadataFields(requested), defaultFacets: [] })
    fastify.listings.query({ principal: ANONYMOUS, baseUrl: '', url: '' }, options)
    return null
  } catch (err) {
    if (err instanceof ApiError) return err.message
    throw err
  }
}

/** The `Lock-Token` a write carries (Volto sends the one `@lock` gave it). */
export const lockToken = (request: FastifyRequest): string | undefined => {
  const token = request.headers['lock-token']
  return Array.isArray(token) ? token[0] : token
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
