import type { FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import Type from 'typebox'
import { querystringIndexes, querystringQuery, type QuerystringSearchBody } from '../../core/catalog/querystring.js'
import type { Located } from '../../core/content/rows.js'
import { urlOf } from '../../core/content/urls.js'
import { BadRequest } from '../../core/errors.js'
import { UUID } from '../../core/query/index-kinds.js'
import { assertTrustworthyJson } from '../../core/security/untrusted-input.js'
import { requireContext } from '../support/access.js'

const errorResponses = Object.fromEntries([400, 401, 404].map(s => [s, { $ref: 'Error#' }]))
declare module 'fastify' {
  interface FastifyInstance {
    /** The results of a query of `@querystring-search`'s body, run in `located` with the caller's access, answered as `@search` answers under `id`. */
    queryListing: (request: FastifyRequest, reply: FastifyReply, located: Located, body: QuerystringSearchBody, id: string) => Promise<Record<string, unknown>>
  }
}

const Listing = Type.Object({ '@id': Type.String(), items: Type.Array(Type.Record(Type.String(), Type.Unknown())), items_total: Type.Integer() }, { additionalProperties: true })

/**
 * `@querystring` and `@querystring-search` (plone.restapi, plone.app.querystring):
 * what Volto's listing and search blocks build queries from, and run them with.
 * A query is translated into `@search`'s parameters and answered by the same
 * search (Solr or the catalogue, the caller's access in every query).
 */
export default fp(async fastify => {
  const { content, contentTypes, vocabularies } = fastify

  fastify.get('/@querystring', {
    schema: { summary: 'Indexes and operations a query form offers (on any content path)', tags: ['search'] }
  }, async request => {
    const located = await requireContext(content, request)
    return {
      '@id': `${urlOf(request.baseUrl, located.obj.path)}/@querystring`,
      ...await querystringIndexes(contentTypes, async name => await vocabularies.terms(name))
    }
  })

  /** A UID where a path belongs (Volto's object browser gives either) names the object's path, or nothing. */
  const resolveUidPath = async (query: Record<string, unknown>): Promise<void> => {
    const path = query.path as { query?: unknown }
    if (typeof path.query !== 'string' || !UUID.test(path.query)) return
    const found = [...(await content.locateMany([path.query])).values()][0]
    path.query = found?.obj.path ?? `/${path.query}`
  }

  /** The results of a query in `@querystring-search`'s terms, run in `located` as `request`'s caller. */
  async function queryListing (request: FastifyRequest, reply: FastifyReply, located: Located, body: QuerystringSearchBody, id: string): Promise<Record<string, unknown>> {
    const query = querystringQuery(body, { now: new Date(), userId: request.principal.userId, contextPath: located.obj.path })
    await resolveUidPath(query)
    return await fastify.searchListing(request, reply, located, query, id)
  }
  fastify.decorate('queryListing', queryListing)

  async function querystringSearch (request: FastifyRequest, reply: FastifyReply, body: unknown): Promise<Record<string, unknown>> {
    const located = await requireContext(content, request)
    if (body === null || body === undefined || typeof body !== 'object' || Array.isArray(body)) throw BadRequest('No query supplied')
    return await queryListing(request, reply, located, body as QuerystringSearchBody, `${urlOf(request.baseUrl, located.obj.path)}/@querystring-search`)
  }

  fastify.post('/@querystring-search', {
    schema: {
      summary: 'Run a plone.app.querystring query {query: [{i, o, v}], sort_on, sort_order, b_start, b_size, limit, fullobjects, metadata_fields}',
      tags: ['search'],
      body: Type.Object({ query: Type.Array(Type.Object({ i: Type.String(), o: Type.String(), v: Type.Optional(Type.Unknown()) })) }, { additionalProperties: true }),
      response: { 200: Listing, ...errorResponses }
    }
  }, async (request, reply) => await querystringSearch(request, reply, request.body))

  fastify.get('/@querystring-search', {
    schema: {
      summary: 'The same query as ?query=<the body as URL-encoded JSON>',
      tags: ['search'],
      querystring: Type.Object({ query: Type.String() }),
      response: { 200: Listing, ...errorResponses }
    }
  }, async (request, reply) => {
    const { query } = request.query as { query: string }
    let body: unknown
    try {
      // plone.restapi decodes the parameter once more: clients encode the JSON before putting it in the URL.
      body = JSON.parse(decodeURIComponent(query))
    } catch {
      throw BadRequest('The query parameter must be the search as URL-encoded JSON.')
    }
    assertTrustworthyJson(body)
    return await querystringSearch(request, reply, body)
  })
}, { name: 'querystring', dependencies: ['search', 'content', 'auth', 'http'] })
