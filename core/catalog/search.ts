import type { ContentTypeRegistry } from '../content/registry.js'
import { escapeLike, type Queryable } from '../db/db.js'
import { BadRequest } from '../errors.js'
import type { Access, Criterion, Query } from '../query/model.js'
import { pathLevels } from '../query/path-levels.js'
import { column, TIE_BREAKERS } from './catalog.js'
import { endShown, type KeptResults, type Totals } from './kept-results.js'
import { renderTsquery } from './tsquery.js'
import type { IndexDefinition } from './indexes.js'
import { type CatalogRow, mayView, RowLayout } from './kept-rows.js'
import type { ResidentCatalog } from './resident/resident.js'

export interface CatalogResult {
  total: number
  /** Frozen when kept results are on: other callers may read the same rows. */
  rows: ReadonlyArray<Record<string, unknown>>
  facets?: Record<string, Record<string, number>>
}

/** Query parameters that are not index criteria (plone.restapi's query-wide parameters, Solr's facet.* and hl.*). */
export const QUERY_PARAMETERS: ReadonlySet<string> = new Set([
  'sort_on', 'sort_order', 'sort_limit', 'b_start', 'b_size', 'metadata_fields', 'fullobjects', 'facet',
  'hl', 'use_solr', 'show_inactive', 'use_site_search_settings'
])
export const isQueryParameter = (name: string): boolean => QUERY_PARAMETERS.has(name) || /^(facet|hl)\./.test(name)

/**
 * The objects whose effective date lies in (at, effectiveBy] or whose expiry
 * lies in (expiresAfter, at]: what a filter on "now" rounded to a coarser
 * step (effective up, expires down) includes although it is not active at
 * `at`. Both date columns are indexed: two short range scans.
 */
export const turningAround = (window: { at: Date, effectiveBy: Date, expiresAfter: Date }) => (p: (value: unknown) => string): string =>
  `SELECT uid FROM catalog WHERE "effective" > ${p(window.at)} AND "effective" <= ${p(window.effectiveBy)}
   UNION SELECT uid FROM catalog WHERE "expires" > ${p(window.expiresAfter)} AND "expires" <= ${p(window.at)}`

/**
 * How many of a full-text result's matches are ranked by relevance (the most
 * recent; see CatalogSearch.rankedPage): ten pages of 25. Finding them reads
 * about `RANKED_CANDIDATES / share of talks matching` rows — at worst
 * √(RANKED_CANDIDATES × talks), 5,000 of 100,000 — so the bound sets the cost
 * of the slowest word (docs/search.md, "Full-text ranking on the catalogue").
 */
export const RANKED_CANDIDATES = 250

/** The SQL type of a value list of an index, for `= ANY($n::type[])`. */
const CAST: Partial<Record<IndexDefinition['kind'], string>> = { date: 'timestamptz', int: 'integer', long: 'bigint', uuid: 'uuid' }

/** The catalogue columns the security and effective-date clause reads (`CatalogSearch.accessClause`). */
const accessColumns = (access: Access): string[] => [
  'allowedRolesAndUsers',
  ...access.showInactive ? [] : ['effective', 'expires'],
  ...access.showInactiveOf === undefined ? [] : ['Creator']
]

/** The catalogue columns a criterion's clause reads (`CatalogSearch.clause`; full text reads the `searchable` words). */
function criterionColumns (criterion: Criterion): string[] {
  switch (criterion.kind) {
    case 'nothing': return []
    case 'fullText': return ['searchable']
    case 'path': return ['path_parents', 'path_depth']
    case 'range': return [criterion.index.name, ...criterion.index.occurrences !== undefined ? [criterion.index.occurrences.name] : []]
    default: return [criterion.index.name]
  }
}

/**
 * The catalogue's query side: a query rendered to one parameterised SQL
 * statement over the catalog table, always with the security filter and
 * (unless allowed otherwise) the effective-date filter.
 */
export class CatalogSearch {
  /** `kept`: kept results (without them every page is read and counted); `rankedCandidates`: see rankedPage. */
  private resident?: ResidentCatalog
  /** How rowsOf reads rows. */
  private layout?: RowLayout
  /** The resident catalogue, when the process holds one. */
  get residentCatalog (): ResidentCatalog | undefined { return this.resident }

  constructor (private readonly registry: ContentTypeRegistry, private readonly kept?: KeptResults, private readonly rankedCandidates = RANKED_CANDIDATES) {}

  /** Answers from the resident catalogue what it can answer exactly (core/catalog/resident/resident.ts), PostgreSQL the rest. */
  useResident (resident: ResidentCatalog): void {
    this.resident = resident
  }

  /** PostgreSQL's rank of some objects for a full-text query: what the resident catalogue orders its most recent matches by, where it cannot compute it itself. */
  async rankOf (db: Queryable, uids: string[], tsquery: string): Promise<Map<string, number>> {
    const { rows } = await db.query<{ uid: string, rank: number }>(`SELECT uid::text AS uid, ts_rank_cd(searchable, to_tsquery('simple', $2)) AS rank
      FROM catalog WHERE uid = ANY($1::uuid[])`, [uids, tsquery], { prepared: true })
    // A float4, printed as the shortest decimal that reads back as it: the same float4 again, as the resident catalogue computes it.
    return new Map(rows.map(row => [row.uid, Math.fround(row.rank)]))
  }

  /**
   * The catalogue rows of a page the resident catalogue found, in its order,
   * with the metadata columns `names` (all of them when not given), as the
   * caller may see them now: a row that changed since so that the caller may
   * no longer see it is left out rather than shown. Rows are kept by uid
   * (KeptResults.rows) with what the access rule reads, which `mayView`
   * applies to each: a row read for one caller serves every other.
   */
  private async rowsOf (db: Queryable, uids: string[], access: Access, names: string[] | undefined, now: Date): Promise<ReadonlyArray<Record<string, unknown>>> {
    if (uids.length === 0) return []
    // Laid out at the first use, when every type has declared its indexes.
    const layout = this.layout ??= new RowLayout(this.metadataNames())
    const read = async (missing: string[]): Promise<Map<string, CatalogRow>> => {
      const { rows } = await db.query<Record<string, unknown>>(layout.select, [missing], { prepared: true })
      return new Map(rows.map(row => [row.uid as string, layout.rowOf(row)]))
    }
    const rows = this.kept === undefined ? await read(uids) : await this.kept.rows(uids, read)
    const shown = layout.names.flatMap((name, i) => names === undefined || names.includes(name) ? [i] : [])
    const at = now.getTime() * 1000
    return Object.freeze(uids.flatMap(uid => {
      const row = rows.get(uid)
      if (row === undefined || !mayView(row, access, at)) return []
      const summary: Record<string, unknown> = {}
      for (const i of shown) summary[layout.names[i]] = row.values[i]
      summary.uid = uid
      return [Object.freeze(summary)]
    }))
  }

  /**
   * SQL selecting `columns` of the catalogue rows whose uids are `$1`, of
   * those the caller may see at `at`. The rows by primary key first, then the
   * access clause on them alone: left to choose, the planner may combine the
   * primary key with the principals' index and read tens of thousands of its
   * entries for 25 rows (it did, on a freshly seeded catalogue of 100,000
   * talks: 1.5 backends busy on the statement of the pages' rows alone).
   */
  private ofThese (columns: string, access: Access, p: (value: unknown) => string, at = new Date()): string {
    return `WITH these AS MATERIALIZED (SELECT * FROM catalog WHERE uid = ANY($1::uuid[]))
      SELECT ${columns} FROM these WHERE ${this.accessClause(access, p, at)}`
  }

  /** A query index by name: 400 when there is none. */
  index (name: string): IndexDefinition {
    const index = this.registry.indexes.get(name)
    if (index === undefined || !index.indexed) throw BadRequest(`Unknown index '${name}'.`)
    // Further occurrences are asked through their date's index (a range over it finds them), never alone.
    if (index.kind === 'dates') throw BadRequest(`Unknown index '${name}'; query '${name.replace(/_occurrences$/, '')}', whose ranges find every occurrence.`)
    return index
  }

  /** The security and effective-date clause of every query (and of every check of what Solr found). */
  private accessClause (access: Access, p: (value: unknown) => string, at = new Date()): string {
    const security = `"allowedRolesAndUsers" && ${p(access.principals)}::text[]`
    if (access.showInactive) return security
    const now = p(at)
    const active = `("effective" IS NULL OR "effective" <= ${now}) AND ("expires" IS NULL OR "expires" > ${now})`
    return `${security} AND ${access.showInactiveOf === undefined ? active : `(${active} OR "Creator" = ${p(access.showInactiveOf)})`}`
  }

  /**
   * Which of these objects the caller may see now. The catalogue row is
   * written in the transaction of the content change, so this is
   * PostgreSQL's current state, whatever another index (Solr) still holds.
   */
  async visible (db: Queryable, uids: string[], access: Access): Promise<Set<string>> {
    if (uids.length === 0) return new Set()
    const params: unknown[] = [uids]
    const p = (value: unknown): string => { params.push(value); return `$${params.length}` }
    const { rows } = await db.query<{ uid: string }>(this.ofThese('uid', access, p), params)
    return new Set(rows.map(r => r.uid))
  }

  /** The distinct values of an index among what the caller may see now, sorted (Plone's uniqueValuesFor, filtered by access). */
  async uniqueValues (db: Queryable, index: IndexDefinition, access: Access, limit = 1000): Promise<string[]> {
    const params: unknown[] = []
    const p = (value: unknown): string => { params.push(value); return `$${params.length}` }
    const value = index.multiValued ? `unnest(${column(index)})` : `${column(index)}::text`
    const { rows } = await db.query<{ value: string }>(`SELECT DISTINCT value FROM (SELECT ${value} AS value FROM catalog
      WHERE ${this.accessClause(access, p)}) v WHERE value IS NOT NULL ORDER BY value LIMIT ${limit}`, params)
    return rows.map(r => r.value)
  }

  /**
   * Of the objects a subquery names (a column `uid`; it may take parameters
   * through `p`), those the caller may not see at `at`; at most `limit`.
   */
  async invisibleAmong (db: Queryable, candidates: (p: (value: unknown) => string) => string, access: Access, limit: number, at = new Date()): Promise<string[]> {
    const params: unknown[] = []
    const p = (value: unknown): string => { params.push(value); return `$${params.length}` }
    const { rows } = await db.query<{ uid: string }>(`SELECT candidate.uid FROM (${candidates(p)}) candidate
      WHERE NOT EXISTS (SELECT 1 FROM catalog WHERE catalog.uid = candidate.uid AND ${this.accessClause(access, p, at)}) LIMIT ${limit}`, params)
    return rows.map(r => r.uid)
  }

  /**
   * WHERE clauses and their parameters, the full-text rank when there is full
   * text, and the catalogue columns the clauses read (what decides which
   * objects match: a write that changes none of them moves none in or out).
   */
  private where (query: Query, params: unknown[], now: Date): { clauses: string[], rank: string | null, columns: string[] } {
    const p = (value: unknown): string => { params.push(value); return `$${params.length}` }
    const clauses: string[] = [this.accessClause(query, p, now)]
    const columns = accessColumns(query)
    let rank: string | null = null
    for (const criterion of query.criteria) {
      columns.push(...criterionColumns(criterion))
      if (criterion.kind === 'fullText') {
        const tsquery = renderTsquery(criterion.text)
        if (tsquery === null) { clauses.push('false'); continue }
        const q = p(tsquery)
        clauses.push(`searchable @@ to_tsquery('simple', ${q})`)
        rank = `ts_rank_cd(searchable, to_tsquery('simple', ${q}))`
        continue
      }
      clauses.push(...this.clause(criterion, p))
    }
    return { clauses, rank, columns }
  }

  private clause (criterion: Exclude<Criterion, { kind: 'fullText' }>, p: (value: unknown) => string): string[] {
    switch (criterion.kind) {
      case 'nothing': return ['false']
      case 'path': return [this.pathClause(criterion.paths, criterion.depth, p)]
      case 'keywords': return [`${column(criterion.index)} ${criterion.all ? '@>' : '&&'} ${p(criterion.values)}::text[]`]
      case 'words': return criterion.words.map(word => `${column(criterion.index)} ILIKE ${p('%' + escapeLike(word) + '%')}`)
      case 'flag': return [`${column(criterion.index)} = ${p(criterion.value)}`]
      case 'anyOf': return [`${column(criterion.index)} = ANY(${p(criterion.values)}::${CAST[criterion.index.kind] ?? 'text'}[])`]
      case 'range': {
        const within = (value: string): string => {
          if (criterion.min !== undefined && criterion.max !== undefined) return `${value} BETWEEN ${p(criterion.min)} AND ${p(criterion.max)}`
          return criterion.min !== undefined ? `${value} >= ${p(criterion.min)}` : `${value} <= ${p(criterion.max)}`
        }
        const own = within(column(criterion.index))
        const { occurrences } = criterion.index
        if (occurrences === undefined) return [own]
        // Or any further occurrence of a recurring date (few rows hold any: the rest fail at IS NOT NULL).
        const further = column(occurrences)
        return [`(${own} OR (${further} IS NOT NULL AND EXISTS (SELECT FROM unnest(${further}) AS occurrence WHERE ${within('occurrence')})))`]
      }
    }
  }

  /** `path` with `depth`: 0 the object, n ≥ 1 down to n levels below it, negative the object and everything below. */
  private pathClause (paths: string[], depth: number, p: (value: unknown) => string): string {
    const alternatives = paths.map(path => {
      const base = `"path_parents" @> ARRAY[${p(path)}]::text[]`
      const levels = pathLevels(path, depth)
      if (levels === null) return base
      if (levels.first === levels.last) return `(${base} AND "path_depth" = ${p(levels.first)})`
      return `(${base} AND "path_depth" BETWEEN ${p(levels.first)} AND ${p(levels.last)})`
    })
    return `(${alternatives.join(' OR ')})`
  }

  private orderBy (query: Query, rank: string | null): string {
    const direction = query.descending ? 'DESC' : 'ASC'
    const terms = query.sort.map(key => {
      if ('relevance' in key) return rank !== null ? `${rank} DESC` : null
      return `${column(key.index)} ${direction} NULLS LAST`
    }).filter((t): t is string => t !== null)
    if (terms.length === 0 && rank !== null) terms.push(`${rank} DESC`)
    // Then catalogue order, as ZCatalog answers without sort_on; the sorted indexes carry it (core/catalog/catalog.ts).
    terms.push(...TIE_BREAKERS.map(name => `${column(name)} ASC`))
    return terms.join(', ')
  }

  /**
   * A page of a result ordered by relevance. Ranking reads every match's
   * text, which for a word found in most of 100,000 talks costs seconds; so
   * only the `rankedCandidates` most recent matches (found through the index
   * on `created`, or the text index when the word is rare) are ranked, best
   * first, and any further matches follow them newest first. A page of those
   * candidates never reads more than they are, and carries only what the page
   * and the rank use (a catalogue row is ~1.8 kB, half of it the text).
   */
  private rankedPage (metadata: string, where: string, rank: string, limit: number, start: number): string {
    const recent = '"created" DESC, uid DESC'
    const ranked = `SELECT ${metadata}uid AS key, 0 AS tier, ${rank} AS rank, recency FROM
      (SELECT ${metadata}uid, searchable, "created" AS recency FROM catalog WHERE ${where} ORDER BY ${recent} LIMIT ${this.rankedCandidates}) candidate`
    const end = start + limit
    if (end <= this.rankedCandidates) {
      return `SELECT ${metadata}key AS uid FROM (${ranked}) page ORDER BY rank DESC, recency ASC, key ASC LIMIT ${limit} OFFSET ${start}`
    }
    const rest = `SELECT ${metadata}uid AS key, 1 AS tier, 0 AS rank, "created" AS recency FROM catalog WHERE ${where}
      ORDER BY ${recent} OFFSET ${this.rankedCandidates} LIMIT ${end - this.rankedCandidates}`
    // Ranked candidates as above; the rest newest first.
    return `SELECT ${metadata}key AS uid FROM ((${ranked}) UNION ALL (${rest})) page
      ORDER BY tier, rank DESC, CASE WHEN tier = 0 THEN recency END ASC, CASE WHEN tier = 0 THEN key END ASC, recency DESC, key DESC
      LIMIT ${limit} OFFSET ${start}`
  }

  /** The metadata columns named (all of them when none are), in the registry's order. */
  private metadataNames (names?: string[]): string[] {
    return [...this.registry.indexes.values()].filter(i => i.metadata && (names === undefined || names.includes(i.name))).map(i => i.name)
  }

  /** The SQL of the metadata columns named (all of them when none are), each followed by a comma: a page selects them and then `uid`. */
  private metadataColumns (names?: string[]): string {
    return this.metadataNames(names).map(name => `${column(name)}, `).join('')
  }

  /**
   * One page, and the totals of the whole result. The page is read alone (a
   * few rows of an index when the sort has one); the total is known without
   * counting when the page reached the end, and otherwise counted once and
   * kept — as are the facets, and the page itself (core/catalog/kept-results.ts).
   */
  async search (db: Queryable, query: Query, columns?: string[]): Promise<CatalogResult> {
    const now = new Date()
    const limit = Math.max(0, query.sortLimit !== undefined ? Math.min(query.size, query.sortLimit - query.start) : query.size)
    // `sort_limit` caps the total as it caps the rows.
    const capped = (total: number): number => query.sortLimit !== undefined ? Math.min(total, query.sortLimit) : total
    const resident = this.resident === undefined ? null : await this.resident.answer(query, query.start, limit, now)
    if (resident !== null) return { total: capped(resident.total), rows: await this.rowsOf(db, resident.uids, query, columns, now) }
    const metadata = this.metadataColumns(columns)
    // Only a query the resident catalogue left to PostgreSQL is rendered to SQL.
    const params: unknown[] = []
    const { clauses, rank, columns: filtered } = this.where(query, params, now)
    const where = clauses.join(' AND ')
    const ranked = rank !== null && (query.sort.length === 0 || 'relevance' in query.sort[0])
    const page = (start: number, size: number): string => ranked
      ? this.rankedPage(metadata, where, rank, size, start)
      : `SELECT ${metadata}uid FROM catalog WHERE ${where} ORDER BY ${this.orderBy(query, rank)} LIMIT ${size} OFFSET ${start}`
    // A statement as a key: its SQL and parameters, "now" apart (what is kept knows until when it holds).
    const keyOf = (sql: string, ...more: unknown[]): string => JSON.stringify([sql, params.map(v => v === now ? null : v), ...more])
    const read = async (start: number, size: number): Promise<Array<Record<string, unknown>>> => (await db.query<Record<string, unknown>>(page(start, size), params)).rows
    const { rows, end } = this.kept === undefined
      ? await read(query.start, limit).then(rows => ({ rows, end: endShown(rows.length, query.start, limit) }))
      : await this.kept.page(db, (start, size) => keyOf(page(start, size)), query.start, limit, now, read)
    if (end !== undefined && query.facets === undefined) return { total: capped(end), rows }
    const compute = async (): Promise<Totals> => ({
      total: Number((await db.query<{ n: number }>(`SELECT count(*) AS n FROM catalog WHERE ${where}`, params)).rows[0].n),
      ...(query.facets !== undefined ? { facets: await this.facets(db, query.facets, where, params) } : {})
    })
    const facetNames = query.facets?.map(facet => facet.name) ?? []
    const totals = this.kept === undefined ? await compute() : await this.kept.totals(db, keyOf(where, facetNames), [...filtered, ...facetNames], now, compute)
    return { total: capped(totals.total), rows, ...(totals.facets !== undefined ? { facets: totals.facets } : {}) }
  }

  private async facets (db: Queryable, indexes: IndexDefinition[], where: string, params: unknown[]): Promise<Record<string, Record<string, number>>> {
    const facets: Record<string, Record<string, number>> = {}
    for (const index of indexes) {
      const value = index.multiValued ? `unnest(${column(index)})` : `${column(index)}::text`
      const { rows } = await db.query<{ value: string | null, n: number }>(
        `SELECT value, count(*) AS n FROM (SELECT ${value} AS value FROM catalog WHERE ${where}) v
         WHERE value IS NOT NULL GROUP BY value ORDER BY n DESC, value ASC LIMIT 100`, params)
      facets[index.name] = Object.fromEntries(rows.map(r => [String(r.value), Number(r.n)]))
    }
    return facets
  }
}
