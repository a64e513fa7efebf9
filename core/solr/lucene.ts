import { BadRequest } from '../errors.js'
import type { Scalar } from '../query/index-kinds.js'
import type { Criterion, Query } from '../query/model.js'
import type { FullText } from '../query/text.js'
import { pathLevels } from '../query/path-levels.js'
import { INT32_MAX } from '../query/zope.js'
import { boostClause, escapeTerm, hasWord, highlightQuery, quote, searchableTextClause } from './full-text.js'
import type { SolrSettings } from './settings.js'
import type { Solr } from './client.js'
import { solrPrincipal } from './documents.js'

export type SelectParams = Parameters<Solr['select']>[0]

/** A query plus what only Solr does: highlighting and the fields the answer needs. */
export interface SolrQuery extends Query {
  /** `hl=true`: the fields to highlight (empty: the `highlight_fields` setting, else Title and Description). */
  highlightFields?: string[]
  /** Stored fields the response is built from (always fetched, whatever `field_list` says). */
  neededFields: string[]
  /** Objects Solr must leave out: it may still hold them as the caller could once see them (core/solr/search.ts). */
  excludedUids?: string[]
}

export interface SolrRequest {
  params: SelectParams
  /** The page size after the `max_results` cap (for the batching links). */
  pageSize: number
}

/** The parameter a full-text criterion comes from (filter_queries and the boost clause name it). */
const FULL_TEXT = 'SearchableText'
const criterionName = (criterion: Criterion): string =>
  criterion.kind === 'fullText' ? FULL_TEXT : criterion.kind === 'path' || criterion.kind === 'nothing' ? criterion.kind : criterion.index.name

/**
 * A typed value as a Lucene term: numbers bare, dates in Solr's form,
 * everything else a quoted phrase. A negative number is quoted too: bare, the
 * query parser reads its minus sign as NOT (`field:(-5)` would match nothing,
 * `field:(-2147483648)` would fail on 2147483648).
 */
const term = (value: Scalar): string => typeof value === 'number' && value >= 0 ? String(value) : quote(value instanceof Date ? value.toISOString() : String(value))

/**
 * "Now" of the effective-date filter in steps of `steps` seconds, erring on
 * the side of what is already active: effective is compared with now rounded
 * up, expires with now rounded down. What the step lets in that is not active
 * at `at` (core/catalog/search.ts `turningAround`) is excluded by UID.
 */
export function activeWindow (at: Date, steps: number): { at: Date, effectiveBy: Date, expiresAfter: Date } {
  const step = Math.max(1, steps) * 1000
  return { at, effectiveBy: new Date(Math.ceil(at.getTime() / step) * step), expiresAfter: new Date(Math.floor(at.getTime() / step) * step) }
}

/** Matches no document: what a criterion that can match nothing turns the whole query into. */
const NOTHING = '-*:*'

/**
 * Translates the service's query (the same criteria the catalogue gets) into
 * Solr select parameters, with the catalogue's semantics for every index
 * kind, and the security and effective-date filters as `fq`.
 */
export class SolrQueryTranslator {
  /** `fieldNames`: the fields of the generated Solr schema (what may be highlighted). */
  constructor (private readonly fieldNames: ReadonlySet<string>) {}

  translate (query: SolrQuery, settings: SolrSettings, now: Date = new Date()): SolrRequest {
    // Keyed by the parameter each criterion came from: filter_queries name them.
    const clauses = new Map<string, string | null>()
    let text: FullText | null = null
    for (const criterion of query.criteria) {
      if (criterion.kind === 'fullText') text = criterion.text
      const clause = this.clause(criterion, settings)
      if (clause !== undefined) clauses.set(criterionName(criterion), clause)
    }
    const fq = [this.securityFilter(query.principals, settings.exclude_user)]
    if (!query.showInactive) fq.push(this.activeFilter(query.showInactiveOf, settings.effective_steps, now))
    if (query.excludedUids !== undefined && query.excludedUids.length > 0) fq.push(`-UID:(${query.excludedUids.map(quote).join(' OR ')})`)
    let q: string
    if ([...clauses.values()].includes(null)) {
      q = NOTHING
    } else {
      for (const group of settings.filter_queries) {
        const names = group.split(/\s+/).filter(Boolean)
        if (names.length === 0 || !names.every(n => clauses.has(n))) continue
        fq.push(names.map(n => `(${clauses.get(n)!})`).join(' AND '))
        for (const n of names) clauses.delete(n)
      }
      q = clauses.size === 0 ? '*:*' : [...clauses.values()].map(c => `+(${c!})`).join(' ')
      const boost = text !== null && clauses.has(FULL_TEXT) ? boostClause(text, settings) : null
      if (boost !== null) q += ` +(${boost})`
    }

    const pageSize = Math.min(query.size, settings.max_results)
    // Solr counts positions in 32 bits: a page ends at the last one (no index holds more documents).
    const rows = Math.min(query.sortLimit !== undefined ? Math.min(pageSize, Math.max(0, query.sortLimit - query.start)) : pageSize, INT32_MAX - query.start)
    const params: SelectParams = {
      q,
      fq,
      'q.op': 'AND',
      sort: this.sort(query, clauses.has(FULL_TEXT)),
      start: query.start,
      rows,
      fl: this.fieldList(settings.field_list, query.neededFields)
    }
    if (query.facets !== undefined) {
      Object.assign(params, { facet: true, 'facet.field': query.facets.map(f => f.name), 'facet.mincount': 1, 'facet.limit': 100, 'facet.sort': 'count' })
    }
    if (query.highlightFields !== undefined) Object.assign(params, this.highlighting(query.highlightFields, settings, text))
    return { params, pageSize }
  }

  /** The Lucene clause of a criterion; undefined when it asks nothing of Solr, null when it matches nothing. */
  private clause (criterion: Criterion, settings: SolrSettings): string | null | undefined {
    switch (criterion.kind) {
      case 'nothing': return null
      case 'fullText': return searchableTextClause(criterion.text, settings)
      case 'path': return this.pathClause(criterion.paths, criterion.depth)
      case 'keywords': return `${criterion.index.name}:(${criterion.values.map(quote).join(criterion.all ? ' AND ' : ' OR ')})`
      case 'words': {
        const words = criterion.words.filter(hasWord)
        return words.length === 0 ? undefined : `${criterion.index.name}:(${words.map(escapeTerm).join(' AND ')})`
      }
      case 'flag': return `${criterion.index.name}:${String(criterion.value)}`
      case 'anyOf': return `${criterion.index.name}:(${criterion.values.map(term).join(' OR ')})`
      case 'range': {
        const bounds = `[${criterion.min !== undefined ? term(criterion.min) : '*'} TO ${criterion.max !== undefined ? term(criterion.max) : '*'}]`
        const { occurrences } = criterion.index
        // A recurring date: its own value or any further occurrence.
        return occurrences === undefined ? `${criterion.index.name}:${bounds}` : `(${criterion.index.name}:${bounds} OR ${occurrences.name}:${bounds})`
      }
    }
  }

  /** `path` with `depth` over path_parents and path_depth: 0 the object, n ≥ 1 down to n levels, negative everything below. */
  private pathClause (paths: string[], depth: number): string {
    return paths.map(path => {
      const parents = `path_parents:${quote(path)}`
      const levels = pathLevels(path, depth)
      return levels === null ? parents : `(${parents} AND path_depth:[${levels.first} TO ${levels.last}])`
    }).join(' OR ')
  }

  /** The caller's principals; `exclude_user` leaves `user$<id>` out (cacheable, at the price of per-user grants). */
  private securityFilter (principals: string[], excludeUser: boolean): string {
    const tokens = principals.filter(p => !(excludeUser && p.startsWith('user:'))).map(solrPrincipal)
    return `allowedRolesAndUsers:(${tokens.map(quote).join(' OR ')})`
  }

  /**
   * Effective and not expired, with "now" in steps (`activeWindow`): the
   * filter changes once per step, so that Solr's filter and result caches
   * serve repeated queries. No date means no limit, as in the catalogue. The
   * Owner asking for `show_inactive` also sees their own.
   */
  private activeFilter (creator: string | undefined, steps: number, now: Date): string {
    const window = activeWindow(now, steps)
    const active = `(effective:[* TO ${quote(window.effectiveBy.toISOString())}] OR (*:* -effective:[* TO *])) AND (expires:{${quote(window.expiresAfter.toISOString())} TO *] OR (*:* -expires:[* TO *]))`
    return creator === undefined ? active : `(${active}) OR Creator:${quote(creator)}`
  }

  /** The catalogue's order: sort_on (relevance = score), then relevance for text queries, then creation order. */
  private sort (query: SolrQuery, scored: boolean): string {
    const direction = query.descending ? 'desc' : 'asc'
    const terms = query.sort.map(key => {
      if ('relevance' in key) return scored ? 'score desc' : null
      return `${key.index.name} ${direction}`
    }).filter((t): t is string => t !== null)
    if (terms.length === 0 && scored) terms.push('score desc')
    terms.push('created asc', 'UID asc')
    return terms.join(',')
  }

  /**
   * `fl`: what the response is built from, plus the `field_list` setting.
   * Nothing else is asked for: collective.solr's empty default, `* score`,
   * makes Solr read and send every stored field of every row, and the score
   * is used to sort (which needs no `fl`), never shown.
   */
  private fieldList (fieldList: string[], needed: string[]): string {
    return [...new Set([...needed, ...fieldList])].join(',')
  }

  /** `hl.*`: fields from the query, else the setting, else Title and Description; only the full-text clause is highlighted. */
  private highlighting (requested: string[], settings: SolrSettings, text: FullText | null): Record<string, string | number | boolean> {
    for (const name of requested) if (!this.fieldNames.has(name)) throw BadRequest(`Unknown highlight field '${name}'.`)
    const fields = requested.length > 0 ? requested : settings.highlight_fields.length > 0 ? settings.highlight_fields : ['Title', 'Description']
    const params: Record<string, string | number | boolean> = {
      hl: true,
      'hl.fl': fields.join(','),
      // collective.solr: an empty marker becomes a single space.
      'hl.simple.pre': settings.highlight_formatter_pre === '' ? ' ' : settings.highlight_formatter_pre,
      'hl.simple.post': settings.highlight_formatter_post === '' ? ' ' : settings.highlight_formatter_post,
      'hl.fragsize': settings.highlight_fragsize
    }
    const words = text === null ? null : highlightQuery(text, settings.levenshtein_distance, fields)
    if (words !== null) params['hl.q'] = words
    return params
  }
}
