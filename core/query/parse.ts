import type { IndexDefinition } from '../catalog/indexes.js'
import { BadRequest } from '../errors.js'
import { INDEX_KINDS } from './index-kinds.js'
import type { Access, Criterion, Query, SortKey } from './model.js'
import { parseFullText } from './text.js'
import { parseInteger } from './zope.js'

/** A query as Plone's parameters give it, after Zope marshalling (core/query/zope.ts). */
export interface QueryRequest extends Access {
  /** Index name → a value, a list, or a record `{query, operator, range, depth}`. */
  criteria: Record<string, unknown>
  sortOn: string[]
  descending: boolean
  sortLimit?: number
  start: number
  size: number
  facetFields?: string[]
}

/** A record value (`{query, range, operator, depth}`) or a plain one, as `{query, …}`. */
export function asRecord (value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? value as Record<string, unknown> : { query: value }
}

/** A criterion's values as a list, without the empty ones. */
export const list = (value: unknown): unknown[] => (Array.isArray(value) ? value : [value]).filter(v => v !== undefined && v !== '')

/**
 * Most values one criterion may hold (the items of a list, the words of a
 * text index, the terms of a full-text search), duplicates counted once:
 * each becomes a clause or a parameter of the statement (PostgreSQL takes
 * 65,535 at most), and Solr refuses a query of more than 1,024 clauses by
 * default. A client with more asks several queries.
 */
export const MAX_CRITERION_VALUES = 1000
/**
 * Longest bound of a range (`name.range=min`), in characters: Lucene refuses
 * a range over longer text (its automaton), and no value an index holds is
 * that long but a description, which is queried by its words.
 */
export const MAX_RANGE_BOUND_LENGTH = 1000

/** Refuses (400, naming the parameter) a criterion of more than MAX_CRITERION_VALUES values. */
function refuseBeyondBound (count: number, name: string, what: string): void {
  if (count > MAX_CRITERION_VALUES) throw BadRequest(`'${name}' has ${count} ${what}; a criterion holds at most ${MAX_CRITERION_VALUES}.`)
}

/** `values` without duplicates, within MAX_CRITERION_VALUES. */
function distinct<T> (values: T[], name: string, what = 'values'): T[] {
  const once = [...new Set(values)]
  refuseBeyondBound(once.length, name, what)
  return once
}

/**
 * An index facets may count: one that results carry as metadata. So never
 * allowedRolesAndUsers (who may see what), and only values that Solr
 * stores, which the check of Solr's answers needs (core/solr/search.ts).
 */
export function facetable (index: IndexDefinition): IndexDefinition {
  if (!index.metadata) throw BadRequest(`The index '${index.name}' cannot be faceted on; facets count indexes that results carry as metadata.`)
  return index
}

/**
 * Parses Plone's query language once, with every error a 400 in one place:
 * `index` resolves a query index (400 for unknown ones).
 */
export class QueryParser {
  constructor (private readonly index: (name: string) => IndexDefinition) {}

  parse (request: QueryRequest): Query {
    const criteria = Object.entries(request.criteria).flatMap(([name, value]) => this.criterion(name, value))
    if (request.sortLimit !== undefined && request.sortLimit < 1) throw BadRequest('sort_limit must be at least 1.')
    return {
      criteria,
      // A key given twice adds nothing to an order (nor a facet counted twice): lists of names are as long as the names known.
      sort: [...new Set(request.sortOn)].map(name => this.sortKey(name)),
      descending: request.descending,
      sortLimit: request.sortLimit,
      start: request.start,
      size: request.size,
      facets: request.facetFields === undefined ? undefined : [...new Set(request.facetFields)].map(name => facetable(this.index(name))),
      principals: request.principals,
      showInactive: request.showInactive,
      showInactiveOf: request.showInactiveOf
    }
  }

  /** The criterion of one parameter; none when it has nothing to compare with (an empty value is ignored, as in Plone). */
  private criterion (name: string, raw: unknown): Criterion[] {
    if (name === 'SearchableText') {
      const text = parseFullText(Array.isArray(raw) ? raw.join(' ') : String(asRecord(raw).query ?? ''))
      refuseBeyondBound(text.flat().length, name, 'terms')
      // Nothing to search for finds nothing (as plone.restapi, but in the usual shape).
      return [text.length === 0 ? { kind: 'nothing' } : { kind: 'fullText', text }]
    }
    const record = asRecord(raw)
    if (name === 'path') {
      const depth = record.depth === undefined ? -1 : parseInteger(record.depth, 'path.depth')
      const paths = distinct(list(record.query).map(v => String(v).replace(/\/+$/, '') || '/'), name)
      return paths.length === 0 ? [] : [{ kind: 'path', paths, depth }]
    }
    const index = this.index(name)
    const given = list(record.query)
    const once = distinct(given, name)
    // A range's bounds are positional (`min:max` takes two, which may be equal); any other list is a set.
    const values = record.range === undefined ? once : given
    if (values.length === 0) return []
    const kind = INDEX_KINDS[index.kind]
    switch (kind.match) {
      case 'keywords':
        return [{ kind: 'keywords', index, values: [...new Set(values.map(String))], all: String(record.operator ?? 'or').toLowerCase() === 'and' }]
      case 'words':
        return [{ kind: 'words', index, words: distinct(values.join(' ').split(/\s+/).filter(Boolean), name, 'words') }]
      case 'flag':
        return [{ kind: 'flag', index, value: kind.parse(values[0], name) as boolean }]
      case 'values':
        return [this.values(index, record.range === undefined ? undefined : String(record.range), values)]
    }
  }

  private values (index: IndexDefinition, range: string | undefined, values: unknown[]): Criterion {
    const kind = INDEX_KINDS[index.kind]
    // A value the index can never hold matches nothing; as a range bound it is an error.
    const kept = range === undefined && kind.holds !== undefined ? values.filter(kind.holds) : values
    if (kept.length === 0) return { kind: 'nothing' }
    if (range !== undefined && kept.some(v => String(v).length > MAX_RANGE_BOUND_LENGTH)) {
      throw BadRequest(`A range bound of '${index.name}' is longer than ${MAX_RANGE_BOUND_LENGTH} characters.`)
    }
    const typed = kept.map(v => kind.parse(v, index.name))
    switch (range) {
      case undefined: return { kind: 'anyOf', index, values: typed }
      case 'min': return { kind: 'range', index, min: typed[0] }
      case 'max': return { kind: 'range', index, max: typed[typed.length - 1] }
      case 'min:max':
      case 'minmax':
        if (typed.length < 2) throw BadRequest(`The range 'min:max' of '${index.name}' needs two values.`)
        return { kind: 'range', index, min: typed[0], max: typed[1] }
      default: throw BadRequest(`Unknown range '${range}' for '${index.name}'; use min, max or min:max.`)
    }
  }

  private sortKey (name: string): SortKey {
    if (name === 'relevance') return { relevance: true }
    // As in Plone, `Title` sorts by the sortable title and `path` by the object's path.
    const index = this.index(name === 'Title' ? 'sortable_title' : name === 'path' ? 'path_string' : name)
    if (!index.sortable) throw BadRequest(`The index '${name}' cannot be sorted on.`)
    return { index }
  }
}
