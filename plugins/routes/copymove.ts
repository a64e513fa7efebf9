import type { FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import Type from 'typebox'
import { checkAllowed, Relocations, type Relocated, type Relocation } from '../../core/content/relocations.js'
import type { Located } from '../../core/content/rows.js'
import { urlOf } from '../../core/content/urls.js'
import { BadRequest } from '../../core/errors.js'
import { can } from '../../core/security/permissions.js'
import { Permission } from '../../core/security/roles.js'
import { denied, requireContext } from '../support/access.js'
import { lockToken } from '../support/writes.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** Copy, move and rename of objects with everything inside them. */
    relocations: Relocations
  }
}

/** Sources one request may name: each is one traversal before the write. */
export const MAX_SOURCES = 1000
/** Characters of one source (a URL, a path or a UID). */
const MAX_SOURCE_LENGTH = 4096
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

const Source = Type.String({ minLength: 1, maxLength: MAX_SOURCE_LENGTH })
const Body = Type.Object({ source: Type.Union([Source, Type.Array(Source, { minItems: 1, maxItems: MAX_SOURCES })]) }, { additionalProperties: false })
const Answer = Type.Array(Type.Object({ source: Type.String(), target: Type.String() }))
const errorResponses = Object.fromEntries([400, 401, 403, 404, 409].map(s => [s, { $ref: 'Error#' }]))

/**
 * The site path a source names (plone.restapi's `get_object`): a URL of this
 * site (`++api++` segments dropped), a path from the site root, else null
 * (a UID, or a URL of another site, which names nothing here).
 */
export function sourcePath (baseUrl: string, source: string): string | null {
  if (source.startsWith('/')) return source
  if (!/^https?:\/\//i.test(source)) return null
  let url: URL
  try {
    url = new URL(source)
  } catch {
    return null
  }
  const base = new URL(baseUrl)
  const basePath = base.pathname.replace(/\/$/, '')
  if (url.origin !== base.origin || (url.pathname !== basePath && !url.pathname.startsWith(`${basePath}/`))) return null
  const segments = url.pathname.slice(basePath.length).split('/').filter(s => s !== '' && s !== '++api++')
  try {
    return '/' + segments.map(decodeURIComponent).join('/')
  } catch {
    return null
  }
}

/**
 * `POST <folder>/@copy` and `POST <folder>/@move` (plone.restapi's copymove
 * service): `source` one URL, path or UID, or a list of them, each copied or
 * moved into the folder with everything inside it; the answer lists
 * `{source, target}` URLs. As Plone: the folder needs Add portal content;
 * a move needs Delete objects on the source or its folder; a source that
 * names nothing the caller may view is left out (so the answer says nothing
 * of objects they may not see).
 */
export default fp(async fastify => {
  const { content } = fastify
  const relocations = new Relocations(content, fastify.contentTypes)
  fastify.decorate('relocations', relocations)

  async function sourcesOf (request: FastifyRequest, folder: Located, moving: boolean): Promise<Relocation[]> {
    const { source } = request.body as { source: string | string[] }
    const keys = Array.isArray(source) ? source : [source]
    if (keys.some(key => key.includes('\0'))) throw BadRequest('A source holds a NUL character.')
    const paths = keys.map(key => sourcePath(request.baseUrl, key))
    const byUid = await content.locateMany(keys.filter((key, i) => paths[i] === null && UUID.test(key)))
    const found: Located[] = []
    for (const [i, key] of keys.entries()) {
      const path = paths[i]
      const located = path === null ? byUid.get(key) : (await content.locate(path)).found ?? undefined
      if (located === undefined || !can(request.principal, Permission.View, located) || found.some(f => f.obj.uid === located.obj.uid)) continue
      if (located.obj.path === '/') throw BadRequest('The site root cannot be moved or copied.')
      if (moving) {
        const above = located.lineage[located.lineage.length - 2]
        const parent = above === undefined ? null : { obj: above, lineage: located.lineage.slice(0, -1), type: content.typeOf(above) }
        if (!can(request.principal, Permission.Delete, located) && (parent === null || !can(request.principal, Permission.Delete, parent))) {
          throw denied(request, `You may not move ${located.obj.path}.`)
        }
        // A locked object moves only with its lock's token, as it is edited or deleted (Zope refuses to cut a locked object).
        await fastify.locks.assertWritable(located.obj.uid, lockToken(request), located.lock)
      }
      checkAllowed(located, folder)
      found.push(located)
    }
    return found.map(located => ({ source: located, folder }))
  }

  const answer = (request: FastifyRequest, done: Relocated[]): Array<{ source: string, target: string }> =>
    done.map(({ from, to }) => ({ source: urlOf(request.baseUrl, from), target: urlOf(request.baseUrl, to) }))

  for (const [name, moving] of [['copy', false], ['move', true]] as const) {
    fastify.post(`/@${name}`, {
      schema: {
        summary: `${moving ? 'Move' : 'Copy'} objects (by URL, path or UID) into this folder, with everything inside them (on any folder)`,
        tags: ['content'],
        security: [{ bearer: [] }],
        body: Body,
        response: { 200: Answer, ...errorResponses }
      }
    }, async request => {
      const folder = await requireContext(content, request)
      if (!can(request.principal, Permission.Add, folder)) throw denied(request, `You may not add content to ${folder.obj.path}.`)
      if (!folder.type.folderish) throw BadRequest(`${folder.obj.path} is not a folder.`)
      const sources = await sourcesOf(request, folder, moving)
      if (sources.length === 0) return []
      return answer(request, moving ? await relocations.move(sources) : await relocations.copy(sources, request.principal))
    })
  }
}, { name: 'copymove-routes', dependencies: ['content', 'auth', 'http'] })
