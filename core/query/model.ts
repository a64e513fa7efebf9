import type { IndexDefinition } from '../catalog/indexes.js'
import type { Scalar } from './index-kinds.js'
import type { FullText } from './text.js'

/**
 * A criterion of Plone's query language, parsed and typed: what the
 * catalogue renders to SQL (core/catalog/search.ts) and Solr to Lucene syntax
 * (core/solr/lucene.ts). Every criterion is required.
 */
export type Criterion =
  /** `SearchableText`: a full-text search. */
  | { kind: 'fullText', text: FullText }
  /** `path`: objects at or below any of the paths; `depth` -1 everything below, 0 the objects, n down to n levels. */
  | { kind: 'path', paths: string[], depth: number }
  /** A keyword index holds any (`all`: every one) of the values. */
  | { kind: 'keywords', index: IndexDefinition, values: string[], all: boolean }
  /** A text index holds every word. */
  | { kind: 'words', index: IndexDefinition, words: string[] }
  | { kind: 'flag', index: IndexDefinition, value: boolean }
  /** The index holds one of the values. */
  | { kind: 'anyOf', index: IndexDefinition, values: Scalar[] }
  /** The index's value lies within the bounds (each included; a missing one unbounded). */
  | { kind: 'range', index: IndexDefinition, min?: Scalar, max?: Scalar }
  /** Nothing can match (a full-text search for nothing, an id that is not a UID): the query finds nothing. */
  | { kind: 'nothing' }

/** `relevance` orders by the full-text score (ignored without a full-text criterion). */
export type SortKey = { relevance: true } | { index: IndexDefinition }

/**
 * Who asks, as every query filters by it: the caller's principals (against
 * allowedRolesAndUsers) and the effective-date rule.
 */
export interface Access {
  principals: string[]
  /** Include content that is not yet effective or has expired. */
  showInactive: boolean
  /** Include such content when this user created it (the Owner may access inactive content). */
  showInactiveOf?: string
}

/** One query of a listing or a search, whichever engine answers it. */
export interface Query extends Access {
  criteria: Criterion[]
  /** Then catalogue order: the order of indexing (creation), as ZCatalog answers without sort_on. */
  sort: SortKey[]
  descending: boolean
  /** At most this many results count at all (plone.restapi's sort_limit). */
  sortLimit?: number
  start: number
  size: number
  /** Indexes to count values of (facetable: metadata indexes). */
  facets?: IndexDefinition[]
}
