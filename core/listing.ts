import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { CatalogQuery } from './catalog-query.js'
import { batchingLinks, type Batch } from './batching.js'
import type { ContentRow, Located } from './content-store.js'
import { allows, Permission, principalsOf, SITE_ROLE_MAP } from './security.js'
import { addressOf } from './url.js'

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

export interface Listing {
  items: Array<Record<string, unknown>>
  items_total: number
  batching?: Record<string, string>
  facets?: Record<string, Record<string, number>>
}

/**
 * May the caller see content outside its effective/expiry dates everywhere?
 * Plone's "Access inactive portal content" held site-wide (Manager, Site
 * Administrator); the Owner holds it on their own content only, which
 * `show_inactive` reveals to them.
 */
export function seesInactive (request: FastifyRequest): boolean {
  return allows(SITE_ROLE_MAP[Permission.AccessInactive], new Set(request.principal.roles))
}

/** The query of a listing as the caller may run it: their principals and whether they see inactive content. */
export function queryOf (request: FastifyRequest, options: ListingOptions): CatalogQuery {
  return {
    criteria: options.criteria,
    sortOn: options.sortOn,
    descending: options.descending,
    sortLimit: options.sortLimit,
    start: options.batch.start,
    size: options.batch.size,
    principals: principalsOf(request.principal),
    showInactive: seesInactive(request),
    showInactiveOf: options.showInactive === true ? request.principal.userId ?? undefined : undefined,
    facetFields: options.facetFields
  }
}

/**
 * One page of catalogue results as summaries (or full objects), with the
 * caller's principals and the effective-date filter always applied: folder
 * listings and `@search` both answer through this.
 */
export async function catalogListing (fastify: FastifyInstance, request: FastifyRequest, options: ListingOptions): Promise<Listing> {
  const result = await fastify.catalogSearch.search(fastify.db, queryOf(request, options))
  return await listingOf(fastify, request, options, { ...result, uids: result.rows.map(r => String(r.uid)), batch: options.batch })
}

/** One page of results from the catalogue or Solr: metadata rows (catalogue columns) and the objects' UIDs, in order. */
export interface ResultPage {
  rows: Array<Record<string, unknown>>
  uids: string[]
  total: number
  /** The page as it was answered (Solr may cap its size). */
  batch: Batch
  facets?: Record<string, Record<string, number>>
}

/** A page as the listing answers it, whoever found it: summaries or full objects, `items_total`, batching links, facets. */
export async function listingOf (fastify: FastifyInstance, request: FastifyRequest, options: ListingOptions, page: ResultPage): Promise<Listing> {
  const items = options.fullobjects
    ? await fullObjects(fastify, request, page.uids)
    : page.rows.map(row => fastify.serializer.summaryFromCatalog(request.baseUrl, row, options.metadataFields))
  const listing: Listing = { items, items_total: page.total }
  const batching = batchingLinks(request.absoluteUrl(addressOf(request.raw).originalUrl), page.total, page.batch)
  if (batching !== undefined) listing.batching = batching
  if (page.facets !== undefined) listing.facets = page.facets
  return listing
}

/** Full serializations of a page of results: two queries, whatever the page size. */
async function fullObjects (fastify: FastifyInstance, request: FastifyRequest, uids: string[]): Promise<Array<Record<string, unknown>>> {
  if (uids.length === 0) return []
  const { rows } = await fastify.db.query<ContentRow>(`SELECT * FROM content WHERE uid = ANY($1::uuid[])
    OR uid IN (SELECT parent_uid FROM content WHERE uid = ANY($1::uuid[]))`, [uids])
  const byUid = new Map(rows.map(r => [r.uid, r]))
  return uids.flatMap(uid => {
    const obj = byUid.get(uid)
    if (obj === undefined) return [] // deleted since the catalogue (or Solr) answered
    const parent = obj.parent_uid !== null ? byUid.get(obj.parent_uid) : undefined
    const located: Located = { obj, lineage: parent !== undefined ? [parent, obj] : [obj], type: fastify.content.typeOf(obj) }
    return [fastify.serializer.object(request.baseUrl, located)]
  })
}
