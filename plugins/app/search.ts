import fp from 'fastify-plugin'
import Type from 'typebox'
import { requireContext } from '../../core/access.js'
import { batchOf } from '../../core/batching.js'
import { QUERY_PARAMETERS } from '../../core/catalog-query.js'
import { catalogListing } from '../../core/listing.js'
import { parseBoolean, parseInteger, parseZopeQuery } from '../../core/zope-query.js'
import { urlOf } from '../../core/url.js'

const errorResponses = Object.fromEntries([400, 401, 404].map(s => [s, { $ref: 'Error#' }]))

/** `@id` of a search: the canonical URL without paging and sorting parameters (plone.restapi). */
function canonicalId (baseUrl: string, path: string, params: URLSearchParams): string {
  const kept = new URLSearchParams([...params].filter(([k]) => !/^(b_size|b_start|sort_on|sort_order|sort_limit)(:|$)/.test(k)))
  const query = kept.toString()
  return `${urlOf(baseUrl, path === '/' ? '' : path)}/@search${query === '' ? '' : '?' + query}`.replace(/^(https?:\/\/[^/]+)\/\/@/, '$1/@')
}

const list = (value: unknown): string[] => value === undefined ? [] : (Array.isArray(value) ? value : [value]).map(String)

/**
 * `GET <context>/@search` on the catalogue (SEARCH.md §4): Plone's query
 * language with Zope marshalling, below the context by default, with the
 * caller's principals and the effective-date filter in every query.
 */
export default fp(async fastify => {
  fastify.get('/@search', {
    schema: {
      summary: 'Search below the context (on any content path); Plone query parameters', tags: ['search'],
      response: {
        200: Type.Object({
          '@id': Type.String(), items: Type.Array(Type.Record(Type.String(), Type.Unknown())), items_total: Type.Integer(),
          batching: Type.Optional(Type.Record(Type.String(), Type.String())),
          facets: Type.Optional(Type.Record(Type.String(), Type.Record(Type.String(), Type.Integer())))
        }, { additionalProperties: true }),
        ...errorResponses
      }
    }
  }, async (request, reply) => {
    const located = await requireContext(fastify.content, request)
    const params = new URL(request.url, 'http://x').searchParams
    const query = parseZopeQuery(params)
    const criteria: Record<string, unknown> = {}
    for (const [name, value] of Object.entries(query)) if (!QUERY_PARAMETERS.has(name)) criteria[name] = value
    if (criteria.path === undefined) criteria.path = located.obj.path
    else if (typeof criteria.path === 'object' && criteria.path !== null && !Array.isArray(criteria.path) && (criteria.path as { query?: unknown }).query === undefined) {
      (criteria.path as { query?: unknown }).query = located.obj.path
    }
    const sortOrder = String(query.sort_order ?? 'ascending').toLowerCase()
    const facet = query.facet !== undefined && parseBoolean(list(query.facet)[0], 'facet')
    const listing = await catalogListing(fastify, request, {
      criteria,
      sortOn: list(query.sort_on),
      descending: sortOrder === 'reverse' || sortOrder === 'descending',
      sortLimit: query.sort_limit !== undefined ? parseInteger(list(query.sort_limit)[0], 'sort_limit') : undefined,
      batch: batchOf(query),
      metadataFields: fastify.serializer.metadataFields(query.metadata_fields),
      fullobjects: query.fullobjects !== undefined,
      facetFields: facet ? (query['facet.field'] !== undefined ? list(query['facet.field']) : ['portal_type', 'review_state']) : undefined,
      showInactive: query.show_inactive !== undefined && parseBoolean(list(query.show_inactive)[0], 'show_inactive')
    })
    void reply.header('x-search-engine', 'catalogue')
    return { '@id': canonicalId(request.baseUrl, located.obj.path, params), ...listing }
  })
}, { name: 'search', dependencies: ['content-types', 'auth', 'http'] })
