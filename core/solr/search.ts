import type { FastifyBaseLogger, FastifyInstance, FastifyRequest } from 'fastify'
import { listingOf, queryOf, type Listing, type ListingOptions } from '../listing.js'
import type { SolrSettings } from '../settings.js'
import { urlOf } from '../url.js'
import type { SelectResponse, Solr } from './client.js'
import type { SelectParams, SolrQueryTranslator } from './query.js'

export interface SolrListingOptions extends ListingOptions {
  /** `hl=true`: the fields asked for with `hl.fl` (empty: the default ones). */
  highlightFields?: string[]
}

/** A listing from Solr: the catalogue's shape plus highlighting keyed by each item's `@id`. */
export interface SolrListing extends Listing {
  highlighting?: Record<string, Record<string, string[]>>
}

/** The summary keys every result needs (serializer's SUMMARY_COLUMNS), plus UID and path for URLs, highlighting, full objects. */
const SUMMARY_FIELDS = ['UID', 'path_string', 'portal_type', 'Title', 'Description', 'review_state', 'Type']

/**
 * Runs one select, logging it at debug level and, above `slow_query_threshold`
 * milliseconds, at info level with Solr's own QTime (collective.solr's "slow query").
 */
export async function runSelect (solr: Solr, params: SelectParams, settings: SolrSettings, log: FastifyBaseLogger): Promise<SelectResponse> {
  const started = Date.now()
  const answer = await solr.select(params)
  const elapsed = Date.now() - started
  log.debug({ solr: params, qtime: answer.responseHeader.QTime, elapsed, numFound: answer.response.numFound }, 'Solr query')
  if (settings.slow_query_threshold > 0 && elapsed > settings.slow_query_threshold) {
    log.info({ solr: params, qtime: answer.responseHeader.QTime, elapsed }, `slow Solr query: ${answer.responseHeader.QTime}/${elapsed} ms for ${String(params.q)}`)
  }
  return answer
}

/** Solr's flat facet lists (`[value, count, …]`) as the catalogue's `{field: {value: count}}`. */
function facetsOf (answer: SelectResponse, fields: string[]): Record<string, Record<string, number>> {
  const facets: Record<string, Record<string, number>> = {}
  for (const name of fields) {
    const flat = answer.facet_counts?.facet_fields[name] ?? []
    const counts: Record<string, number> = {}
    for (let i = 0; i + 1 < flat.length; i += 2) counts[String(flat[i])] = Number(flat[i + 1])
    facets[name] = counts
  }
  return facets
}

/**
 * One page of Solr results in the catalogue's shape (SEARCH.md §4): the same
 * summaries (Solr's stored fields are the catalogue's metadata columns), full
 * objects loaded from the database, batching links, facets, and highlighting
 * keyed by the `@id` of the items of the page.
 */
export async function solrListing (fastify: FastifyInstance, request: FastifyRequest, solr: Solr, translator: SolrQueryTranslator,
  options: SolrListingOptions): Promise<SolrListing> {
  const settings = fastify.settings.solr
  const { params, pageSize } = translator.translate({
    ...queryOf(request, options),
    highlightFields: options.highlightFields,
    neededFields: [...SUMMARY_FIELDS, ...options.metadataFields]
  }, settings)
  const answer = await runSelect(solr, params, settings, request.log)
  const total = options.sortLimit !== undefined ? Math.min(answer.response.numFound, options.sortLimit) : answer.response.numFound
  const rows = answer.response.docs.map(doc => catalogRow(fastify, doc))
  const listing: SolrListing = await listingOf(fastify, request, options, {
    rows,
    uids: rows.map(row => String(row.UID)),
    total,
    batch: { start: options.batch.start, size: pageSize },
    facets: options.facetFields !== undefined ? facetsOf(answer, options.facetFields) : undefined
  })
  if (options.highlightFields !== undefined) {
    listing.highlighting = Object.fromEntries(rows.map(row => [urlOf(request.baseUrl, String(row.path_string)), answer.highlighting?.[String(row.UID)] ?? {}]))
  }
  return listing
}

/** A Solr document as a catalogue row: dates as Date objects, so that summaries serialise them as the catalogue's do. */
function catalogRow (fastify: FastifyInstance, doc: Record<string, unknown>): Record<string, unknown> {
  const row: Record<string, unknown> = { ...doc }
  for (const [name, value] of Object.entries(doc)) {
    if (fastify.types.indexes.get(name)?.kind === 'date' && typeof value === 'string') row[name] = new Date(value)
  }
  return row
}
