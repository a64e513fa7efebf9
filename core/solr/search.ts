import type { Caller, Listing, ListingOptions, Listings } from '../catalog/listing.js'
import { turningAround, type CatalogSearch } from '../catalog/search.js'
import type { ContentTypeRegistry } from '../content/registry.js'
import { SUMMARY_METADATA } from '../content/serializer.js'
import { urlOf } from '../content/urls.js'
import type { Queryable } from '../db/db.js'
import { STALE_IN_SOLR } from '../indexing/outbox.js'
import type { Logger } from '../log.js'
import type { SelectResponse, Solr } from './client.js'
import { activeWindow, type SelectParams, type SolrQueryTranslator } from './lucene.js'
import type { SolrSettings } from './settings.js'

export interface SolrListingOptions extends ListingOptions {
  /** `hl=true`: the fields asked for with `hl.fl` (empty: the default ones). */
  highlightFields?: string[]
}

/** A listing from Solr: the catalogue's shape plus highlighting keyed by each item's `@id`. */
export interface SolrListing extends Listing {
  highlighting?: Record<string, Record<string, string[]>>
}

/**
 * Runs one select, logging it at debug level and, above `slow_query_threshold`
 * milliseconds, at info level with Solr's own QTime (collective.solr's "slow query").
 */
export async function runSelect (solr: Solr, params: SelectParams, settings: SolrSettings, log: Logger): Promise<SelectResponse> {
  const started = Date.now()
  const answer = await solr.select(params)
  const elapsed = Date.now() - started
  log.debug({ solr: params, qtime: answer.responseHeader.QTime, elapsed, numFound: answer.response.numFound }, 'Solr query')
  if (settings.slow_query_threshold > 0 && elapsed > settings.slow_query_threshold) {
    log.info({ solr: params, qtime: answer.responseHeader.QTime, elapsed }, `slow Solr query: ${answer.responseHeader.QTime}/${elapsed} ms for ${String(params.q)}`)
  }
  return answer
}

/**
 * Solr's flat facet lists (`[value, count, …]`) as the catalogue's
 * `{field: {value: count}}`, without what the withheld documents counted
 * (their stored values, as Solr holds them: facet fields are stored, see `facetable`).
 */
function facetsOf (answer: SelectResponse, fields: string[], withheld: Array<Record<string, unknown>>): Record<string, Record<string, number>> {
  const facets: Record<string, Record<string, number>> = {}
  for (const name of fields) {
    const flat = answer.facet_counts?.facet_fields[name] ?? []
    const counts = new Map<string, number>()
    for (let i = 0; i + 1 < flat.length; i += 2) counts.set(String(flat[i]), Number(flat[i + 1]))
    for (const doc of withheld) {
      for (const value of [doc[name]].flat()) if (value !== undefined && value !== null) counts.set(String(value), (counts.get(String(value)) ?? 0) - 1)
    }
    // Values are data (a subject may be `__proto__`): defined as own keys, never assigned.
    facets[name] = Object.fromEntries([...counts].filter(([, n]) => n > 0))
  }
  return facets
}

/**
 * Beyond this many objects that Solr may still show as they were and that
 * the caller may no longer see, the catalogue answers instead: the filter
 * that leaves them out of Solr's answer would be a slow query of its own.
 */
const MAX_WITHHELD_BY_FILTER = 500

export interface SolrSearchOptions {
  db: Queryable
  solr: Solr
  settings: () => SolrSettings
  translator: SolrQueryTranslator
  catalogSearch: CatalogSearch
  listings: Listings
  types: ContentTypeRegistry
}

/**
 * Searches answered by Solr, in the catalogue's shape (docs/search.md): the
 * same summaries (Solr's stored fields are the catalogue's metadata columns),
 * full objects loaded from the database, batching links, facets, and
 * highlighting keyed by the `@id` of the items of the page.
 *
 * Solr is never the authority on who may see what: it may hold an object as
 * it was before a change it has not applied yet (Solr was down, the queue is
 * behind, a commit is pending). Objects Solr may hold stale that the caller
 * may not see now are filtered out of Solr's query, so that no count
 * includes them; and the page Solr answers is checked against the
 * catalogue's current state, withholding (and not counting) what fails.
 */
export class SolrSearch {
  constructor (private readonly o: SolrSearchOptions) {}

  /** One page of results; null when too many objects would have to be filtered (the catalogue answers then). */
  async listing (caller: Caller, options: SolrListingOptions, log: Logger): Promise<SolrListing | null> {
    const { db, catalogSearch } = this.o
    const settings = this.o.settings()
    const query = this.o.listings.query(caller, options)
    const now = new Date()
    // What Solr may hold stale, and what the coarse effective-date filter lets in although it is not active now.
    const window = query.showInactive ? null : turningAround(activeWindow(now, settings.effective_steps))
    const candidates = (p: (value: unknown) => string): string => window === null ? STALE_IN_SOLR : `${STALE_IN_SOLR} UNION ${window(p)}`
    const excluded = await catalogSearch.invisibleAmong(db, candidates, query, MAX_WITHHELD_BY_FILTER + 1, now)
    if (excluded.length > MAX_WITHHELD_BY_FILTER) return null
    const facetFields = query.facets?.map(f => f.name) ?? []
    const { params, pageSize } = this.o.translator.translate({
      ...query,
      highlightFields: options.highlightFields,
      neededFields: [...SUMMARY_METADATA, ...options.metadataFields, ...facetFields],
      excludedUids: excluded
    }, settings, now)
    const answer = await runSelect(this.o.solr, params, settings, log)
    const docs = answer.response.docs
    const visible = await catalogSearch.visible(db, docs.map(doc => String(doc.UID)), query)
    const withheld = docs.filter(doc => !visible.has(String(doc.UID)))
    const found = options.sortLimit !== undefined ? Math.min(answer.response.numFound, options.sortLimit) : answer.response.numFound
    const rows = docs.filter(doc => visible.has(String(doc.UID))).map(doc => this.catalogRow(doc))
    const listing: SolrListing = await this.o.listings.page(caller, options, {
      rows,
      uids: rows.map(row => String(row.UID)),
      total: Math.max(0, found - withheld.length),
      batch: { start: options.batch.start, size: pageSize },
      facets: query.facets !== undefined ? facetsOf(answer, facetFields, withheld) : undefined
    })
    if (options.highlightFields !== undefined) {
      listing.highlighting = Object.fromEntries(rows.map(row => [urlOf(caller.baseUrl, String(row.path_string)), answer.highlighting?.[String(row.UID)] ?? {}]))
    }
    return listing
  }

  /** A Solr document as a catalogue row: dates as Date objects and JSON values decoded, so that summaries serialise them as the catalogue's do. */
  private catalogRow (doc: Record<string, unknown>): Record<string, unknown> {
    const row: Record<string, unknown> = { ...doc }
    for (const [name, value] of Object.entries(doc)) {
      const kind = this.o.types.indexes.get(name)?.kind
      if (kind === 'date' && typeof value === 'string') row[name] = new Date(value)
      if (kind === 'json' && typeof value === 'string') row[name] = JSON.parse(value)
    }
    return row
  }
}
