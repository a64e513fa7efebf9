import type { FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import type { Located } from '../../core/content/rows.js'
import Type from 'typebox'
import { urlOf } from '../../core/content/urls.js'
import { OutageLog } from '../../core/log.js'
import { searchParams } from '../../core/query/search-params.js'
import { parseZopeQuery } from '../../core/query/zope.js'
import { SolrUnavailable } from '../../core/solr/client.js'
import { routesToSolr } from '../../core/solr/routing.js'
import { callerOf, requireContext } from '../support/access.js'
import { queryOf } from '../support/url.js'

declare module 'fastify' {
  interface FastifyInstance {
    /**
     * A search below `located` with Plone's query parameters (after Zope
     * marshalling), answered by Solr or the catalogue per the routing rules;
     * `@search` and `@querystring-search` both answer through it.
     */
    searchListing: (request: FastifyRequest, reply: FastifyReply, located: Located, query: Record<string, unknown>, id: string) => Promise<Record<string, unknown>>
  }
}

const errorResponses = Object.fromEntries([400, 401, 404].map(s => [s, { $ref: 'Error#' }]))

/** `@id` of a search: the canonical URL without paging and sorting parameters (plone.restapi). */
function canonicalId (baseUrl: string, path: string, params: URLSearchParams): string {
  const kept = new URLSearchParams([...params].filter(([k]) => !/^(b_size|b_start|sort_on|sort_order|sort_limit)(:|$)/.test(k)))
  const query = kept.toString()
  return `${urlOf(baseUrl, path === '/' ? '' : path)}/@search${query === '' ? '' : '?' + query}`.replace(/^(https?:\/\/[^/]+)\/\/@/, '$1/@')
}

/**
 * `GET <context>/@search` (docs/search.md): Plone's query language with
 * Zope marshalling, below the context by default, with the caller's
 * principals and the effective-date filter in every query, answered by Solr
 * or the catalogue per the routing rules. When Solr fails or times out the
 * catalogue answers (rule 4): `X-Search-Fallback: catalogue`, logged once per
 * outage, never a 500.
 */
export default fp(async fastify => {
  const outage = new OutageLog(fastify.log, 'Solr search', 'the catalogue answers until Solr is back', 'error')

  fastify.get('/@search', {
    schema: {
      summary: 'Search below the context (on any content path); Plone query parameters',
      tags: ['search'],
      response: {
        200: Type.Object({
          '@id': Type.String(),
          items: Type.Array(Type.Record(Type.String(), Type.Unknown())),
          items_total: Type.Integer(),
          batching: Type.Optional(Type.Record(Type.String(), Type.String())),
          facets: Type.Optional(Type.Record(Type.String(), Type.Record(Type.String(), Type.Integer()))),
          highlighting: Type.Optional(Type.Record(Type.String(), Type.Record(Type.String(), Type.Array(Type.String()))))
        }, { additionalProperties: true }),
        ...errorResponses
      }
    }
  }, async (request, reply) => {
    const located = await requireContext(fastify.content, request)
    const params = queryOf(request.url)
    return await searchListing(request, reply, located, parseZopeQuery(params), canonicalId(request.baseUrl, located.obj.path, params))
  })

  async function searchListing (request: FastifyRequest, reply: FastifyReply, located: Located, query: Record<string, unknown>, id: string): Promise<Record<string, unknown>> {
    const settings = fastify.solrSettings.current
    const { options, criteria } = searchParams(query, {
      path: located.obj.path,
      sitePath: fastify.config.SITE_PATH,
      metadataFields: requested => fastify.serializer.metadataFields(requested),
      defaultFacets: settings.facets
    })
    const caller = callerOf(request)
    const answer = { '@id': id }
    if (routesToSolr(settings, query, criteria)) {
      try {
        const listing = await fastify.solrSearch.listing(caller, options, request.log)
        outage.recovered()
        if (listing !== null) {
          void reply.header('x-search-engine', 'solr')
          return { ...answer, ...listing }
        }
        // Solr is too far behind on what this caller may no longer see: the catalogue is exact.
        void reply.header('x-search-fallback', 'catalogue')
      } catch (err) {
        if (!(err instanceof SolrUnavailable)) throw err
        outage.failed(err)
        void reply.header('x-search-fallback', 'catalogue')
      }
    }
    const listing = await fastify.listings.fromCatalog(caller, options)
    void reply.header('x-search-engine', 'catalogue')
    return { ...answer, ...listing }
  }
  fastify.decorate('searchListing', searchListing)
}, { name: 'search', dependencies: ['content', 'auth', 'http', 'solr-settings', 'solr'] })
