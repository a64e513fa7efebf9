import fp from 'fastify-plugin'
import Type from 'typebox'
import { requireContext } from '../../core/access.js'
import { batchOf } from '../../core/batching.js'
import { isQueryParameter } from '../../core/catalog-query.js'
import { catalogListing, type ListingOptions } from '../../core/listing.js'
import { OutageLog } from '../../core/outage-log.js'
import { SolrUnavailable } from '../../core/solr/client.js'
import { boostRulesCheck, SolrQueryTranslator } from '../../core/solr/query.js'
import { solrListing } from '../../core/solr/search.js'
import type { SolrSettings } from '../../core/settings.js'
import { parseBoolean, parseInteger, parseZopeQuery } from '../../core/zope-query.js'
import { urlOf } from '../../core/url.js'

const errorResponses = Object.fromEntries([400, 401, 404].map(s => [s, { $ref: 'Error#' }]))

/** `@id` of a search: the canonical URL without paging and sorting parameters (plone.restapi). */
function canonicalId (baseUrl: string, path: string, params: URLSearchParams): string {
  const kept = new URLSearchParams([...params].filter(([k]) => !/^(b_size|b_start|sort_on|sort_order|sort_limit)(:|$)/.test(k)))
  const query = kept.toString()
  return `${urlOf(baseUrl, path === '/' ? '' : path)}/@search${query === '' ? '' : '?' + query}`.replace(/^(https?:\/\/[^/]+)\/\/@/, '$1/@')
}

/**
 * The `path` criterion: the context when none is given (Plone's default), and
 * paths written with the site's prefix (`/Plone/talks`, as Plone's physical
 * paths read) taken below the site root.
 */
function pathCriterion (value: unknown, contextPath: string, sitePath: string): Record<string, unknown> {
  const record = typeof value === 'object' && value !== null && !Array.isArray(value) ? { ...value as Record<string, unknown> } : { query: value }
  const local = (path: unknown): string => {
    const text = String(path)
    return sitePath !== '' && (text === sitePath || text.startsWith(sitePath + '/')) ? text.slice(sitePath.length) || '/' : text
  }
  if (record.query === undefined || record.query === '') record.query = contextPath
  else record.query = Array.isArray(record.query) ? record.query.map(local) : local(record.query)
  return record
}

const list = (value: unknown): string[] => value === undefined ? [] : (Array.isArray(value) ? value : [value]).map(String)

/** A criterion with something to search for: `SearchableText=` (or only blanks) is none. */
const hasValue = (value: unknown): boolean => {
  const query = typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>).query : value
  return list(query).some(v => v.trim() !== '')
}

/** `use_solr`: any value but Zope's false spellings forces Solr (collective.solr: "any truthy value"). */
const truthy = (value: unknown): boolean => {
  try { return parseBoolean(list(value)[0] ?? '', 'use_solr') } catch { return true }
}

/**
 * Routing rules 1–3 of SEARCH.md §2 (with Solr active): `use_solr` forces
 * Solr; otherwise a required field with a value sends the query there
 * (an empty `required` list sends every query, as in collective.solr).
 */
export function routesToSolr (settings: SolrSettings, query: Record<string, unknown>, criteria: Record<string, unknown>): boolean {
  if (!settings.active) return false
  if (query.use_solr !== undefined && truthy(query.use_solr)) return true
  if (settings.required.length === 0) return true
  return settings.required.some(name => hasValue(criteria[name]))
}

/**
 * `GET <context>/@search` (SEARCH.md §2, §4): Plone's query language with
 * Zope marshalling, below the context by default, with the caller's
 * principals and the effective-date filter in every query, answered by Solr
 * or the catalogue per the routing rules. When Solr fails or times out the
 * catalogue answers (rule 4): `X-Search-Fallback: catalogue`, logged once per
 * outage, never a 500.
 */
export default fp(async fastify => {
  const solrFields = new Set(fastify.solr.generatedFields)
  const translator = new SolrQueryTranslator(name => fastify.catalogSearch.index(name), solrFields)
  fastify.settings.addCheck(boostRulesCheck(solrFields))
  const outage = new OutageLog(fastify.log, 'Solr search', 'the catalogue answers until Solr is back', 'error')

  fastify.get('/@search', {
    schema: {
      summary: 'Search below the context (on any content path); Plone query parameters', tags: ['search'],
      response: {
        200: Type.Object({
          '@id': Type.String(), items: Type.Array(Type.Record(Type.String(), Type.Unknown())), items_total: Type.Integer(),
          batching: Type.Optional(Type.Record(Type.String(), Type.String())),
          facets: Type.Optional(Type.Record(Type.String(), Type.Record(Type.String(), Type.Integer()))),
          highlighting: Type.Optional(Type.Record(Type.String(), Type.Record(Type.String(), Type.Array(Type.String()))))
        }, { additionalProperties: true }),
        ...errorResponses
      }
    }
  }, async (request, reply) => {
    const located = await requireContext(fastify.content, request)
    const params = new URL(request.url, 'http://x').searchParams
    const query = parseZopeQuery(params)
    const criteria: Record<string, unknown> = {}
    for (const [name, value] of Object.entries(query)) if (!isQueryParameter(name)) criteria[name] = value
    criteria.path = pathCriterion(criteria.path, located.obj.path, fastify.config.SITE_PATH)
    const settings = fastify.settings.solr
    const sortOrder = String(query.sort_order ?? 'ascending').toLowerCase()
    // As in collective.solr, naming facet fields asks for facets.
    const facet = query.facet !== undefined ? parseBoolean(list(query.facet)[0], 'facet') : query['facet.field'] !== undefined
    const options: ListingOptions = {
      criteria,
      sortOn: list(query.sort_on),
      descending: sortOrder === 'reverse' || sortOrder === 'descending',
      sortLimit: query.sort_limit !== undefined ? parseInteger(list(query.sort_limit)[0], 'sort_limit') : undefined,
      batch: batchOf(query),
      metadataFields: fastify.serializer.metadataFields(query.metadata_fields),
      fullobjects: query.fullobjects !== undefined,
      facetFields: facet ? (query['facet.field'] !== undefined ? list(query['facet.field']) : settings.facets) : undefined,
      showInactive: query.show_inactive !== undefined && parseBoolean(list(query.show_inactive)[0], 'show_inactive')
    }
    const answer = { '@id': canonicalId(request.baseUrl, located.obj.path, params) }
    if (routesToSolr(settings, query, criteria)) {
      const highlight = query.hl !== undefined && parseBoolean(list(query.hl)[0], 'hl')
      try {
        const listing = await solrListing(fastify, request, fastify.solr.client, translator, {
          ...options, highlightFields: highlight ? list(query['hl.fl']).flatMap(f => f.split(',')).map(f => f.trim()).filter(Boolean) : undefined
        })
        outage.recovered()
        void reply.header('x-search-engine', 'solr')
        return { ...answer, ...listing }
      } catch (err) {
        if (!(err instanceof SolrUnavailable)) throw err
        outage.failed(err)
        void reply.header('x-search-fallback', 'catalogue')
      }
    }
    const listing = await catalogListing(fastify, request, options)
    void reply.header('x-search-engine', 'catalogue')
    return { ...answer, ...listing }
  })
}, { name: 'search', dependencies: ['content-types', 'auth', 'http', 'controlpanel', 'solr'] })
