import type { ListingOptions } from '../catalog/listing.js'
import { isQueryParameter } from '../catalog/search.js'
import { batchOf } from './paging.js'
import { parseBoolean, parseInteger, textOf } from './zope.js'

/** A query parameter's values as text (400 for a record where values belong). */
export const values = (value: unknown, name: string): string[] => value === undefined ? [] : (Array.isArray(value) ? value : [value]).map(v => textOf(v, name))

const flag = (query: Record<string, unknown>, name: string): boolean => query[name] !== undefined && parseBoolean(values(query[name], name)[0], name)

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

export interface SearchContext {
  /** Path of the object `@search` was called on. */
  path: string
  /** SITE_PATH: a prefix that paths in the query may carry. */
  sitePath: string
  /** The result metadata a client may ask for (`metadata_fields`): validates and expands `_all`. */
  metadataFields: (requested: unknown) => string[]
  /** The facet fields `facet=true` counts without `facet.field`. */
  defaultFacets: string[]
}

/** A search as `@search` asks it: the listing, and what only Solr does. */
export interface SearchParams {
  options: ListingOptions & { highlightFields?: string[] }
  /** The criteria by parameter name, for the routing rules. */
  criteria: Record<string, unknown>
}

/**
 * plone.restapi's `@search` parameters (after Zope marshalling) as a listing:
 * every parameter that is not a query-wide one (sorting, paging, facets …) is
 * a criterion, below the context unless `path` says otherwise.
 */
export function searchParams (query: Record<string, unknown>, context: SearchContext): SearchParams {
  // Keyed by names from outside (a @querystring-search row's index may be `__proto__`): no prototype for one to reach.
  const criteria = Object.create(null) as Record<string, unknown>
  for (const [name, value] of Object.entries(query)) if (!isQueryParameter(name)) criteria[name] = value
  criteria.path = pathCriterion(criteria.path, context.path, context.sitePath)
  const sortOrder = textOf(query.sort_order ?? 'ascending', 'sort_order').toLowerCase()
  // As in collective.solr, naming facet fields asks for facets.
  const facet = query.facet !== undefined ? flag(query, 'facet') : query['facet.field'] !== undefined
  const highlight = flag(query, 'hl')
  return {
    criteria,
    options: {
      criteria,
      sortOn: values(query.sort_on, 'sort_on'),
      descending: sortOrder === 'reverse' || sortOrder === 'descending',
      sortLimit: query.sort_limit !== undefined ? parseInteger(values(query.sort_limit, 'sort_limit')[0], 'sort_limit') : undefined,
      batch: batchOf(query),
      metadataFields: context.metadataFields(query.metadata_fields),
      fullobjects: query.fullobjects !== undefined,
      facetFields: facet ? (query['facet.field'] !== undefined ? values(query['facet.field'], 'facet.field') : context.defaultFacets) : undefined,
      showInactive: flag(query, 'show_inactive'),
      highlightFields: highlight ? [...new Set(values(query['hl.fl'], 'hl.fl').flatMap(f => f.split(',')).map(f => f.trim()).filter(Boolean))] : undefined
    }
  }
}
