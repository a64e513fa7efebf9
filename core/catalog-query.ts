import { column } from './catalog.js'
import { escapeLike, type Queryable } from './db.js'
import { BadRequest } from './errors.js'
import { foldText, pathDepth, type IndexDefinition } from './indexes.js'
import type { ContentTypeRegistry } from './registry.js'
import { parseBoolean, parseDate, parseInteger } from './zope-query.js'

/** A catalogue query after parsing: index criteria plus sorting and paging. */
export interface CatalogQuery {
  criteria: Record<string, unknown>
  sortOn: string[]
  descending: boolean
  sortLimit?: number
  start: number
  size: number
  /** Principals of the caller (security filter). */
  principals: string[]
  /** Include content that is not yet effective or has expired. */
  showInactive: boolean
  /** Include such content when this user created it (the Owner may access inactive content). */
  showInactiveOf?: string
  facetFields?: string[]
}

export interface CatalogResult {
  total: number
  rows: Array<Record<string, unknown>>
  facets?: Record<string, Record<string, number>>
}

/** A record value (`{query, range, operator, depth}`) or a plain one, as `{query, …}` (the catalogue's and Solr's criteria alike). */
export function asRecord (value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? value as Record<string, unknown> : { query: value }
}

/** A criterion's values as a list, without the empty ones. */
export const list = (value: unknown): unknown[] => (Array.isArray(value) ? value : [value]).filter(v => v !== undefined && v !== '')

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/** The words of one query token, each reduced to letters and digits; `word*` becomes a prefix. */
const termsOf = (token: string): string[] => (token.match(/[\p{L}\p{N}]+\*?/gu) ?? [])
  .map(w => w.endsWith('*') ? `${w.slice(0, -1)}:*` : w)

/**
 * Turns SearchableText into a PostgreSQL tsquery: words are ANDed, `OR` and
 * `NOT`/`-word` are honoured, `"a phrase"` (or a word joined by punctuation,
 * `foo:bar`) keeps word order, `word*` matches a prefix. Every word is reduced
 * to letters and digits, so the input cannot inject tsquery syntax. Returns
 * null when nothing searchable is left.
 */
export function textQuery (input: string): string | null {
  const tokens = foldText(input).match(/-?"[^"]*"?|\S+/g) ?? []
  const parts: string[] = []
  let or = false
  let not = false
  for (const token of tokens) {
    if (token === 'or') { or = parts.length > 0; continue }
    if (token === 'and') continue
    if (token === 'not') { not = true; continue }
    const minus = token.length > 1 && token.startsWith('-')
    const terms = termsOf(minus ? token.slice(1) : token)
    if (terms.length === 0) continue
    let term = terms.length === 1 ? terms[0] : `(${terms.join(' <-> ')})`
    if (not || minus) term = `!${term}`
    if (or) parts[parts.length - 1] = `(${parts[parts.length - 1]} | ${term})`
    else parts.push(term)
    not = false
    or = false
  }
  return parts.length === 0 ? null : parts.join(' & ')
}

/** Query parameters that are not index criteria (plone.restapi's query-wide parameters, Solr's facet.* and hl.*). */
const QUERY_PARAMETERS = new Set([
  'sort_on', 'sort_order', 'sort_limit', 'b_start', 'b_size', 'metadata_fields', 'fullobjects', 'facet',
  'hl', 'use_solr', 'show_inactive', 'use_site_search_settings'
])
export const isQueryParameter = (name: string): boolean => QUERY_PARAMETERS.has(name) || /^(facet|hl)\./.test(name)

/**
 * The catalogue's query side: Plone's query language translated into one
 * parameterised SQL statement over the catalog table, always with the
 * security filter and (unless allowed otherwise) the effective-date filter.
 */
export class CatalogSearch {
  constructor (private readonly registry: ContentTypeRegistry) {}

  index (name: string): IndexDefinition {
    const index = this.registry.indexes.get(name)
    if (index === undefined || !index.indexed) throw BadRequest(`Unknown index '${name}'.`)
    return index
  }

  /** WHERE clauses and their parameters. */
  private where (query: CatalogQuery, params: unknown[]): { clauses: string[], rank: string | null } {
    const p = (value: unknown): string => { params.push(value); return `$${params.length}` }
    const clauses: string[] = [`"allowedRolesAndUsers" && ${p(query.principals)}::text[]`]
    if (!query.showInactive) {
      const now = p(new Date())
      const active = `("effective" IS NULL OR "effective" <= ${now}) AND ("expires" IS NULL OR "expires" > ${now})`
      clauses.push(query.showInactiveOf === undefined ? active : `(${active} OR "Creator" = ${p(query.showInactiveOf)})`)
    }
    let rank: string | null = null
    for (const [name, raw] of Object.entries(query.criteria)) {
      if (name === 'SearchableText') {
        const text = Array.isArray(raw) ? raw.join(' ') : String(asRecord(raw).query ?? '')
        const tsquery = textQuery(text)
        // Nothing to search for finds nothing (as plone.restapi, but in the usual shape).
        if (tsquery === null) { clauses.push('false'); continue }
        const q = p(tsquery)
        clauses.push(`searchable @@ to_tsquery('simple', ${q})`)
        rank = `ts_rank_cd(searchable, to_tsquery('simple', ${q}))`
        continue
      }
      if (name === 'path') { clauses.push(this.pathClause(asRecord(raw), p)); continue }
      const index = this.index(name)
      const record = asRecord(raw)
      const values = list(record.query)
      if (values.length === 0) continue
      const col = column(index)
      switch (index.kind) {
        case 'keyword': {
          const op = String(record.operator ?? 'or').toLowerCase() === 'and' ? '@>' : '&&'
          clauses.push(`${col} ${op} ${p(values.map(String))}::text[]`)
          break
        }
        case 'text':
          for (const word of String(values.join(' ')).split(/\s+/).filter(Boolean)) {
            clauses.push(`${col} ILIKE ${p('%' + escapeLike(word) + '%')}`)
          }
          break
        case 'boolean':
          clauses.push(`${col} = ${p(parseBoolean(values[0], name))}`)
          break
        default: {
          const range = record.range === undefined ? undefined : String(record.range)
          // An id that is not a UUID matches nothing; as a range bound it is an error.
          const kept = index.kind === 'uuid' && range === undefined ? values.filter(v => UUID.test(String(v))) : values
          if (kept.length === 0) { clauses.push('false'); break }
          const convert = (v: unknown): unknown => {
            if (index.kind === 'date') return parseDate(v, name)
            if (index.kind === 'int') return parseInteger(v, name)
            if (index.kind === 'uuid' && !UUID.test(String(v))) throw BadRequest(`Could not parse value '${String(v)}' of '${name}' as a UID.`)
            return String(v)
          }
          const typed = kept.map(convert)
          const cast = index.kind === 'date' ? 'timestamptz' : index.kind === 'int' ? 'integer' : index.kind === 'uuid' ? 'uuid' : 'text'
          if (range === 'min') clauses.push(`${col} >= ${p(typed[0])}`)
          else if (range === 'max') clauses.push(`${col} <= ${p(typed[typed.length - 1])}`)
          else if (range === 'min:max' || range === 'minmax') {
            if (typed.length < 2) throw BadRequest(`The range 'min:max' of '${name}' needs two values.`)
            clauses.push(`${col} BETWEEN ${p(typed[0])} AND ${p(typed[1])}`)
          } else if (range !== undefined) {
            throw BadRequest(`Unknown range '${range}' for '${name}'; use min, max or min:max.`)
          } else {
            clauses.push(`${col} = ANY(${p(typed)}::${cast}[])`)
          }
        }
      }
    }
    return { clauses, rank }
  }

  /** `path` with `depth`: 0 the object, n ≥ 1 down to n levels below it, absent or -1 the object and everything below. */
  private pathClause (record: Record<string, unknown>, p: (v: unknown) => string): string {
    const paths = list(record.query).map(v => String(v).replace(/\/+$/, '') || '/')
    const depth = record.depth === undefined ? -1 : parseInteger(record.depth, 'path.depth')
    const alternatives = paths.map(path => {
      const base = `"path_parents" @> ARRAY[${p(path)}]::text[]`
      const level = pathDepth(path)
      if (depth < 0) return base
      if (depth === 0) return `(${base} AND "path_depth" = ${p(level)})`
      return `(${base} AND "path_depth" BETWEEN ${p(level + 1)} AND ${p(level + depth)})`
    })
    return alternatives.length === 0 ? 'true' : `(${alternatives.join(' OR ')})`
  }

  private orderBy (query: CatalogQuery, rank: string | null): string {
    const direction = query.descending ? 'DESC' : 'ASC'
    const terms = query.sortOn.map(name => {
      if (name === 'relevance') return rank !== null ? `${rank} DESC` : null
      const index = this.index(name === 'Title' ? 'sortable_title' : name)
      if (!index.sortable) throw BadRequest(`The index '${name}' cannot be sorted on.`)
      return `${column(index)} ${direction} NULLS LAST`
    }).filter((t): t is string => t !== null)
    if (terms.length === 0 && rank !== null) terms.push(`${rank} DESC`)
    // Then catalogue order, as ZCatalog answers without sort_on: the order of indexing (creation).
    terms.push('"created" ASC', 'uid ASC')
    return terms.join(', ')
  }

  async search (db: Queryable, query: CatalogQuery): Promise<CatalogResult> {
    const params: unknown[] = []
    const { clauses, rank } = this.where(query, params)
    const where = clauses.join(' AND ')
    if (query.sortLimit !== undefined && query.sortLimit < 1) throw BadRequest('sort_limit must be at least 1.')
    const limit = query.sortLimit !== undefined ? Math.min(query.size, Math.max(0, query.sortLimit - query.start)) : query.size
    const metadata = [...this.registry.indexes.values()].filter(i => i.metadata).map(column)
    const sql = `SELECT ${metadata.join(', ')}, uid, count(*) OVER () AS total_count FROM catalog
      WHERE ${where} ORDER BY ${this.orderBy(query, rank)} LIMIT ${Math.max(0, limit)} OFFSET ${query.start}`
    const { rows } = await db.query<Record<string, unknown>>(sql, params)
    let total: number
    if (rows.length > 0) total = Number(rows[0].total_count)
    else if (query.start === 0) total = 0
    else total = Number((await db.query<{ n: number }>(`SELECT count(*) AS n FROM catalog WHERE ${where}`, params)).rows[0].n)
    if (query.sortLimit !== undefined) total = Math.min(total, query.sortLimit)
    for (const row of rows) delete row.total_count
    const result: CatalogResult = { total, rows }
    if (query.facetFields !== undefined) result.facets = await this.facets(db, query.facetFields, where, params)
    return result
  }

  private async facets (db: Queryable, fields: string[], where: string, params: unknown[]): Promise<Record<string, Record<string, number>>> {
    const facets: Record<string, Record<string, number>> = {}
    for (const name of fields) {
      const index = this.index(name)
      const value = index.multiValued ? `unnest(${column(index)})` : `${column(index)}::text`
      const { rows } = await db.query<{ value: string | null, n: number }>(
        `SELECT value, count(*) AS n FROM (SELECT ${value} AS value FROM catalog WHERE ${where}) v
         WHERE value IS NOT NULL GROUP BY value ORDER BY n DESC, value ASC LIMIT 100`, params)
      facets[name] = Object.fromEntries(rows.map(r => [String(r.value), Number(r.n)]))
    }
    return facets
  }
}
