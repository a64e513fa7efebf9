import type { FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { seesInactive } from '../../core/catalog/listing.js'
import type { VocabularyTerm } from '../../core/content/declaration.js'
import { KEYWORDS_VOCABULARY } from '../../core/content/vocabularies.js'
import { principalsOf } from '../../core/security/roles.js'
import Type from 'typebox'
import { requireManager } from '../support/access.js'
import { batchOf, batchingLinks } from '../../core/query/paging.js'
import { BadRequest, NotFound } from '../../core/errors.js'
import { addressOf, queryOf } from '../support/url.js'
import { urlOf } from '../../core/content/urls.js'
import { parseZopeQuery, textOf } from '../../core/query/zope.js'

const errorResponses = Object.fromEntries([400, 401, 403, 404].map(s => [s, { $ref: 'Error#' }]))
const Term = Type.Object({ token: Type.String(), title: Type.Union([Type.String(), Type.Null()]) })

/**
 * `@vocabularies` (plone.restapi): the talk kinds, audiences and rooms, and
 * `plone.app.vocabularies.Keywords`, the tags in use (suggestions for `subjects`).
 * Editable vocabularies (rooms) are replaced by Managers with PATCH.
 */
export default fp(async fastify => {
  const { vocabularies } = fastify
  const NameParam = Type.Object({ name: Type.String() })
  /** The tags on content the caller may see (a private talk's tags are not shown to others). */
  const keywords = async (request: FastifyRequest): Promise<VocabularyTerm[]> => {
    const access = { principals: principalsOf(request.principal), showInactive: seesInactive(request.principal) }
    const values = await fastify.catalogSearch.uniqueValues(fastify.db, fastify.catalogSearch.index('Subject'), access)
    return values.map(token => ({ token, title: token }))
  }

  fastify.get('/@vocabularies', {
    schema: { summary: 'List vocabularies', tags: ['vocabularies'], response: { 200: Type.Array(Type.Object({ '@id': Type.String(), title: Type.String() })) } }
  }, async request => [...vocabularies.names(), KEYWORDS_VOCABULARY].map(name => ({ '@id': urlOf(request.baseUrl, `/@vocabularies/${name}`), title: name })))

  fastify.get('/@vocabularies/:name', {
    schema: {
      summary: 'Terms of a vocabulary (filters: title, token, tokens; b_size=-1 disables batching)',
      tags: ['vocabularies'],
      params: NameParam,
      response: { 200: Type.Object({ '@id': Type.String(), items: Type.Array(Term), items_total: Type.Optional(Type.Integer()), batching: Type.Optional(Type.Record(Type.String(), Type.String())) }), ...errorResponses }
    }
  }, async request => {
    const { name } = request.params as { name: string }
    const isKeywords = name === KEYWORDS_VOCABULARY
    if (!isKeywords && !vocabularies.has(name)) throw NotFound(request.absoluteUrl(request.url), `The vocabulary '${name}' does not exist.`)
    const query = parseZopeQuery(queryOf(request.url))
    if (query.title !== undefined && query.token !== undefined) throw BadRequest('You can not filter by title and token at the same time.')
    let items = isKeywords ? await keywords(request) : [...await vocabularies.terms(name)]
    if (query.title !== undefined) {
      const title = textOf(query.title, 'title').toLowerCase()
      items = items.filter(t => (t.title ?? t.token).toLowerCase().includes(title))
    }
    if (query.token !== undefined) {
      const token = textOf(query.token, 'token').toLowerCase()
      items = items.filter(t => t.token.toLowerCase() === token)
    }
    if (query.tokens !== undefined) {
      const wanted = new Set((Array.isArray(query.tokens) ? query.tokens : [query.tokens]).map(v => textOf(v, 'tokens')))
      items = items.filter(t => wanted.has(t.token))
    }
    const id = urlOf(request.baseUrl, `/@vocabularies/${name}`)
    if (query.b_size !== undefined && textOf(query.b_size, 'b_size') === '-1') return { '@id': id, items }
    const batch = batchOf(query)
    const page = items.slice(batch.start, batch.start + batch.size)
    const batching = batchingLinks(request.absoluteUrl(addressOf(request.raw).originalUrl), items.length, batch)
    return { '@id': id, items: page, items_total: items.length, ...(batching !== undefined ? { batching } : {}) }
  })

  fastify.patch('/@vocabularies/:name', {
    schema: {
      summary: 'Replace the terms of an editable vocabulary (Manager)',
      tags: ['vocabularies'],
      security: [{ bearer: [] }],
      params: NameParam,
      body: Type.Object({ items: Type.Array(Type.Object({ token: Type.String({ minLength: 1, maxLength: 200 }), title: Type.Optional(Type.Union([Type.String(), Type.Null()])) }, { additionalProperties: false }), { minItems: 1 }) }, { additionalProperties: false }),
      response: { 204: Type.Null(), ...errorResponses }
    }
  }, async (request, reply) => {
    requireManager(request, 'Editing vocabularies needs the Manager role.')
    const { name } = request.params as { name: string }
    const declaration = fastify.contentTypes.vocabularies.get(name)
    if (declaration === undefined) throw NotFound(request.absoluteUrl(request.url), `The vocabulary '${name}' does not exist.`)
    if (declaration.editable !== true) throw BadRequest(`The vocabulary '${name}' is fixed by its content type.`)
    const { items } = request.body as { items: Array<{ token: string, title?: string | null }> }
    const tokens = items.map(i => i.token)
    if (new Set(tokens).size !== tokens.length) throw BadRequest('Tokens must be unique.')
    await vocabularies.replace(name, items.map(i => ({ token: i.token, title: i.title ?? i.token })))
    return reply.code(204).send()
  })
}, { name: 'vocabularies', dependencies: ['content', 'auth', 'http'] })
