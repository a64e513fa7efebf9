import { linkTargets } from '../content/links.js'
import type { Located } from '../content/rows.js'
import { SUMMARY_METADATA, type Serializer } from '../content/serializer.js'
import type { Reader } from '../content/summaries.js'
import type { ContentStore } from '../content/store.js'
import type { Queryable } from '../db/db.js'
import type { Query } from '../query/model.js'
import { batchingLinks, type Batch } from '../query/paging.js'
import type { QueryParser } from '../query/parse.js'
import { can, holdsSiteWide } from '../security/permissions.js'
import { Permission, principalsOf, type Principal } from '../security/roles.js'
import type { CatalogSearch } from './search.js'

/** What a listing asks, as Plone's parameters give it (the criteria after Zope marshalling). */
export interface ListingOptions {
  criteria: Record<string, unknown>
  sortOn: string[]
  descending: boolean
  sortLimit?: number
  batch: Batch
  metadataFields: string[]
  fullobjects: boolean
  facetFields?: string[]
  /** `show_inactive` was asked for: inactive content the caller created is listed too. */
  showInactive?: boolean
}

/** Who asks, and the addresses the answer is written in. */
export interface Caller extends Reader {
  /** The request's URL as the client sent it, absolute (for the batching links). */
  url: string
}

export interface Listing {
  items: Array<Record<string, unknown>>
  items_total: number
  batching?: Record<string, string>
  facets?: Record<string, Record<string, number>>
}

/** One page of results from the catalogue or Solr: metadata rows (catalogue columns) and the objects' UIDs, in order. */
export interface ResultPage {
  rows: ReadonlyArray<Record<string, unknown>>
  uids: string[]
  total: number
  /** The page as it was answered (Solr may cap its size). */
  batch: Batch
  facets?: Record<string, Record<string, number>>
}

/**
 * May the caller see content outside its effective/expiry dates everywhere?
 * Plone's "Access inactive portal content" held site-wide (Manager, Site
 * Administrator); the Owner holds it on their own content only, which
 * `show_inactive` reveals to them.
 */
export const seesInactive = (who: Principal): boolean => holdsSiteWide(who, Permission.AccessInactive)

export interface ListingsOptions {
  db: Queryable
  parser: QueryParser
  catalogSearch: CatalogSearch
  store: ContentStore
  serializer: Serializer
}

/**
 * Listings and searches as the caller may run them: their principals and
 * the effective-date filter in every query. Folder listings and `@search`
 * both answer through this, whichever engine found the page.
 */
export class Listings {
  constructor (private readonly o: ListingsOptions) {}

  /** The query of a listing as the caller may run it (400 for a query that cannot be). */
  query (caller: Caller, options: ListingOptions): Query {
    return this.o.parser.parse({
      criteria: options.criteria,
      sortOn: options.sortOn,
      descending: options.descending,
      sortLimit: options.sortLimit,
      start: options.batch.start,
      size: options.batch.size,
      facetFields: options.facetFields,
      principals: principalsOf(caller.principal),
      showInactive: seesInactive(caller.principal),
      showInactiveOf: options.showInactive === true ? caller.principal.userId ?? undefined : undefined
    })
  }

  /** One page of catalogue results as summaries (or full objects). */
  async fromCatalog (caller: Caller, options: ListingOptions): Promise<Listing> {
    // Full objects are read from the content table: the page's UIDs are all they need of the catalogue.
    const columns = options.fullobjects ? [] : [...SUMMARY_METADATA, ...options.metadataFields]
    const result = await this.o.catalogSearch.search(this.o.db, this.query(caller, options), columns)
    return await this.page(caller, options, { ...result, uids: result.rows.map(r => String(r.uid)), batch: options.batch })
  }

  /** A page as the listing answers it, whoever found it: summaries or full objects, `items_total`, batching links, facets. */
  async page (caller: Caller, options: ListingOptions, page: ResultPage): Promise<Listing> {
    const items = options.fullobjects
      ? await this.fullObjects(caller, page.uids)
      : page.rows.map(row => this.o.serializer.resultSummary(caller, row, options.metadataFields))
    const listing: Listing = { items, items_total: page.total }
    const batching = batchingLinks(caller.url, page.total, page.batch)
    if (batching !== undefined) listing.batching = batching
    if (page.facets !== undefined) listing.facets = page.facets
    return listing
  }

  /**
   * Full serializations of a page of results: two queries, whatever the page
   * size. Each object is checked for View as it is now, as a GET of it would
   * be: what an index found is never shown on the index's word alone.
   */
  private async fullObjects (caller: Caller, uids: string[]): Promise<Array<Record<string, unknown>>> {
    if (uids.length === 0) return []
    const found = await this.o.store.locateMany(uids)
    // Deleted, or changed so that the caller may no longer view it, since the catalogue (or Solr) answered.
    const viewable = uids.map(uid => found.get(uid)).filter((located): located is Located => located !== undefined && can(caller.principal, Permission.View, located))
    const links = await linkTargets(caller, viewable, async linked => await this.o.store.locateMany(linked))
    return viewable.map(located => this.o.serializer.object(caller, located, undefined, links))
  }
}
