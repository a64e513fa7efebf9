import type { FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import Type from 'typebox'
import { breachesOf, type Breach } from '../../core/content/link-index.js'
import type { Located } from '../../core/content/rows.js'
import { urlOf } from '../../core/content/urls.js'
import { BadRequest } from '../../core/errors.js'
import { can } from '../../core/security/permissions.js'
import { Permission } from '../../core/security/roles.js'
import { callerOf, requireContext } from '../support/access.js'
import { queryOf } from '../support/url.js'

const errorResponses = Object.fromEntries([400, 401, 403, 404].map(s => [s, { $ref: 'Error#' }]))

/** The most objects one request may ask about (Volto asks for the items selected in a folder's contents). */
export const MAX_UIDS = 100
/** The most links one answer reads: past them, an answer lists the first, by target and source path. */
export const MAX_BREACHES = 1_000

const UID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/** The `uids` a request asks about (`uids=…&uids=…`, or Zope's `uids:list`), each once, in their order. */
function uidsOf (request: FastifyRequest): string[] {
  const query = queryOf(request.url)
  const asked = [...query.getAll('uids'), ...query.getAll('uids:list')]
  if (asked.length === 0) throw BadRequest('Missing parameter "uids"')
  if (asked.length > MAX_UIDS) throw BadRequest(`At most ${MAX_UIDS} uids may be checked at once.`)
  for (const uid of asked) if (!UID.test(uid)) throw BadRequest(`'${uid.slice(0, 64)}' is not a UID.`)
  return [...new Set(asked.map(uid => uid.toLowerCase()))]
}

/** An answer's entry: an object that would go, and the links into it that would break. */
interface Entry { located: Located, sources: Set<string> }

/**
 * `GET @linkintegrity?uids=…` (plone.restapi, as Volto's delete dialog asks
 * it): for each object, the objects that link to it or to anything inside it
 * from outside it (`breaches`), and how many objects it holds (`items_total`).
 * A breach whose target is inside the object is answered, as plone.restapi
 * does, in an entry of its own for that target. Only what the caller may
 * view is named: a source they may not view is left out, and a link into
 * an object inside that they may not view counts against the object asked
 * about. A UID of nothing, or of an object the caller may not view, is 400.
 */
export default fp(async fastify => {
  const { content, serializer, listings } = fastify

  /** How many objects inside `located` the caller may view (the catalogue's count, as Plone's `len(catalog(path=…)) - 1`). */
  async function itemsTotal (request: FastifyRequest, located: Located): Promise<number> {
    if (!located.type.folderish) return 0
    const { items_total: total } = await listings.fromCatalog(callerOf(request), {
      criteria: { path: { query: located.obj.path } }, sortOn: [], descending: false, batch: { start: 0, size: 1 }, metadataFields: [], fullobjects: false
    })
    // The site root is not catalogued; any other object counts itself.
    return located.obj.path === '/' ? total : Math.max(0, total - 1)
  }

  fastify.get('/@linkintegrity', {
    schema: {
      summary: 'The links that deleting these objects would break, and how many objects each holds (on the site root)',
      tags: ['content'],
      querystring: Type.Object({ uids: Type.Optional(Type.Union([Type.String(), Type.Array(Type.String())])) }, { additionalProperties: true }),
      response: { 200: Type.Array(Type.Object({ '@id': Type.String(), breaches: Type.Array(Type.Object({ '@id': Type.String(), title: Type.String(), uid: Type.String() })), items_total: Type.Integer() }, { additionalProperties: true })), ...errorResponses }
    }
  }, async request => {
    await requireContext(content, request)
    const uids = uidsOf(request)
    const found = await content.locateMany(uids)
    const visible = (located: Located | undefined): located is Located => located !== undefined && can(request.principal, Permission.View, located)
    const entries = new Map<string, Entry>()
    for (const uid of uids) {
      const located = found.get(uid)
      if (!visible(located)) throw BadRequest(`No object the caller may view has the UID ${uid}.`)
      entries.set(uid, { located, sources: new Set() })
    }
    const breaches = await breachesOf(fastify.db, uids.map(uid => ({ uid, path: found.get(uid)!.obj.path })), MAX_BREACHES)
    const others = await content.locateMany([...new Set(breaches.flatMap(b => [b.source, b.target]))].filter(uid => !entries.has(uid)))
    const located = (uid: string): Located | undefined => found.get(uid) ?? others.get(uid)
    const sourcesOf = (breach: Breach): Set<string> => {
      // A target inside the object asked about: its own entry, when the caller may view it.
      const target = located(breach.target)
      if (breach.target === breach.root || !visible(target)) return entries.get(breach.root)!.sources
      let entry = entries.get(breach.target)
      if (entry === undefined) entries.set(breach.target, entry = { located: target, sources: new Set() })
      return entry.sources
    }
    for (const breach of breaches) {
      if (visible(located(breach.source))) sourcesOf(breach).add(breach.source)
    }
    const answer: Array<Record<string, unknown>> = []
    // One after the other: a few catalogue counts (of folders only), not a burst of them on the pool.
    for (const { located: target, sources } of entries.values()) {
      answer.push({
        ...serializer.summary(request, target.lineage),
        breaches: [...sources].map(uid => {
          const { obj } = located(uid)!
          return { '@id': urlOf(request.baseUrl, obj.path), title: String(obj.data.title ?? ''), uid }
        }),
        items_total: await itemsTotal(request, target)
      })
    }
    return answer
  })
}, { name: 'linkintegrity-routes', dependencies: ['content', 'auth', 'http'] })
