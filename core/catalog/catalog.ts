import type { Db, Queryable } from '../db/db.js'
import { searchableWords } from './folding.js'
import { INDEX_KINDS } from '../query/index-kinds.js'
import type { IndexableObject, IndexDefinition } from './indexes.js'
import type { ContentType, ContentTypeRegistry } from '../content/registry.js'
import { blocksText } from '../content/blocks.js'
import { htmlToText } from '../content/richtext.js'
import { Pacer, runsOf } from '../pacing.js'

/** Quoted catalogue column of an index (names are case-sensitive: `Title`, `portal_type`). */
export const column = (index: IndexDefinition | string): string =>
  `"${(typeof index === 'string' ? index : index.name).replace(/"/g, '')}"`

/**
 * One piece of the catalogue's schema, by its (unquoted) name: a column or a
 * database index it needs, or an index an earlier version built that is to go.
 */
/** The indexable form of these objects as they are now, read in `q` (ContentStore.indexables). */
export type Indexables = (uids: string[], q: Queryable) => Promise<Map<string, { indexable: IndexableObject }>>

/** Objects a statement when a new column is filled: one read of them and their lineages, one update. */
const FILL_BATCH = 1000

export interface CatalogDdl { kind: 'column' | 'index' | 'retired', name: string, statement: string }

/**
 * The catalogue order that breaks ties between equal sort values, as ZCatalog
 * does without `sort_on`: the order of indexing (creation). Every sort ends
 * with it (core/catalog/search.ts), and every sortable btree index carries it
 * after its value: a sort on a value thousands of talks share (`start`,
 * `review_state`) then reads one page from the index instead of the whole
 * group of ties, which it would have to sort.
 */
export const TIE_BREAKERS = ['created', 'uid'] as const

/**
 * The catalogue's writing side: its columns come from the index definitions,
 * its rows are written in the transaction of the content change.
 */
export class Catalog {
  private readonly indexes: IndexDefinition[]
  private readonly upsertSql: string

  constructor (registry: ContentTypeRegistry) {
    this.indexes = [...registry.indexes.values()]
    const columns = this.indexes.map(column)
    const values = this.indexes.map((_, i) => `$${i + 4}`)
    this.upsertSql = `INSERT INTO catalog (uid, searchable, ${columns.join(', ')})
      VALUES ($1, setweight(to_tsvector('simple', $2), 'A') || setweight(to_tsvector('simple', $3), 'B'), ${values.join(', ')})
      ${this.onConflict()}`
  }

  /** What gives the catalogue a column (and a database index) for every declared index: each named, with its statement; the columns first, which the indexes' tie-breakers need. */
  ddl (): CatalogDdl[] {
    const unquoted = (name: string): string => column(name).slice(1, -1)
    const parts: CatalogDdl[] = this.indexes.map(declared => ({ kind: 'column', name: unquoted(declared.name), statement: `ALTER TABLE catalog ADD COLUMN IF NOT EXISTS ${column(declared)} ${INDEX_KINDS[declared.kind].sql.type}` }))
    const index = (name: string, definition: string): void => { parts.push({ kind: 'index', name: unquoted(name), statement: `CREATE INDEX IF NOT EXISTS ${column(name)} ON catalog ${definition}` }) }
    const retired = (name: string): void => { parts.push({ kind: 'retired', name: unquoted(name), statement: `DROP INDEX IF EXISTS ${column(name)}` }) }
    for (const declared of this.indexes) {
      const { sql } = INDEX_KINDS[declared.kind]
      if (!declared.indexed || sql.index === null) continue
      if (sql.index === 'held') {
        index(`catalog_${declared.name}_held`, `(uid) WHERE ${column(declared)} IS NOT NULL`)
        continue
      }
      if (!declared.sortable || sql.index !== 'btree') {
        index(`catalog_${declared.name}`, `USING ${sql.index} (${column(declared)})`)
        continue
      }
      const ties = TIE_BREAKERS.filter(name => name !== declared.name).map(column).join(', ')
      index(`catalog_${declared.name}_sorted`, `(${column(declared)}, ${ties})`)
      // A btree read backwards gives NULLS FIRST and reversed ties; descending sorts keep missing values last and ties in catalogue order.
      if (sql.descending === true) index(`catalog_${declared.name}_sorted_desc`, `(${column(declared)} DESC NULLS LAST, ${ties})`)
      // Built before the tie-breakers were part of the sorted indexes (they serve no query the above do not).
      retired(`catalog_${declared.name}`)
      retired(`catalog_${declared.name}_desc`)
    }
    return parts
  }

  /** The DDL that brings the catalogue table to what `ddl` says: what it lacks, and the retired indexes it still has. */
  private async missing (q: Queryable): Promise<string[]> {
    const { rows } = await q.query<{ name: string }>(`SELECT attname AS name FROM pg_attribute WHERE attrelid = 'catalog'::regclass AND attnum > 0 AND NOT attisdropped
      UNION ALL SELECT relname FROM pg_index JOIN pg_class ON pg_class.oid = indexrelid WHERE indrelid = 'catalog'::regclass`)
    const present = new Set(rows.map(r => r.name))
    return this.ddl().filter(part => present.has(part.name) === (part.kind === 'retired')).map(part => part.statement)
  }

  /**
   * Adds what the content types declare and the catalogue lacks (and drops
   * the indexes an earlier version built instead). Usually nothing is missing: one catalogue read, no lock (ALTER TABLE would take
   * the table's exclusive lock at every start of every process).
   */
  async ensureSchema (db: Db, indexables: Indexables): Promise<void> {
    if ((await this.missing(db)).length === 0) return
    await db.transaction(async tx => {
      await tx.query('SELECT pg_advisory_xact_lock(7340002)')
      const missing = await this.missing(tx)
      const added = new Set(this.ddl().filter(part => part.kind === 'column' && missing.includes(part.statement)).map(part => part.name))
      for (const statement of missing) await tx.query(statement)
      // A column new to an existing catalogue (a type's new index) gets its objects' values in the same transaction: no process sees it half-filled.
      await this.fill(tx, this.indexes.filter(index => added.has(column(index).slice(1, -1))), indexables)
    })
  }

  /** The values of `indexes` for every object of the types that declare them, FILL_BATCH objects a statement. */
  private async fill (tx: Queryable, indexes: IndexDefinition[], indexables: Indexables): Promise<void> {
    const types = [...new Set(indexes.flatMap(index => index.declaredBy))]
    if (indexes.length === 0 || types.includes('core')) return
    const { rows } = await tx.query<{ uid: string }>("SELECT uid FROM content WHERE portal_type = ANY($1) AND path <> '/'", [types])
    for (let at = 0; at < rows.length; at += FILL_BATCH) {
      const objects = [...(await indexables(rows.slice(at, at + FILL_BATCH).map(r => r.uid), tx)).values()].map(({ indexable }) => indexable)
      const arrays = columnArrays(indexes, objects)
      await tx.query(`UPDATE catalog SET ${indexes.map((index, i) => `${column(index)} = ${arrays.reads[i]}`).join(', ')}
        FROM unnest($1::uuid[], ${arrays.types.map((type, i) => `$${i + 2}::${type}[]`).join(', ')}) AS r(uid, ${arrays.columns.join(', ')})
        WHERE catalog.uid = r.uid`, [objects.map(o => o.uid), ...arrays.values])
    }
  }

  /** Words of the object for `SearchableText`: title weighted above the rest. */
  searchableText (type: ContentType, data: Record<string, unknown>): { title: string, rest: string } {
    const text = searchableText(type, data)
    return { title: searchableWords(text.title), rest: searchableWords(text.rest) }
  }

  /**
   * The catalogue columns whose values differ between two states of one
   * object (`searchable` for its words): what an update of it changed in its
   * catalogue row, which kept totals of queries on other columns survive.
   */
  changedColumns (type: ContentType, before: IndexableObject, after: IndexableObject): string[] {
    const changed = this.indexes.filter(index => !same(index.value(before), index.value(after))).map(index => index.name)
    // The words come from these fields' values alone (`searchableText`): comparing the values spares folding them, and rich text's markup, twice.
    if (['title', ...type.searchableFields].some(name => !same(before.data[name], after.data[name]))) changed.push('searchable')
    return changed
  }

  async index (tx: Queryable, type: ContentType, obj: IndexableObject): Promise<void> {
    const text = this.searchableText(type, obj.data)
    const values = this.indexes.map(index => index.value(obj) ?? null)
    await tx.query(this.upsertSql, [obj.uid, text.title, text.rest, ...values])
  }

  /**
   * The catalogue rows of many objects (a bulk import) in a statement per
   * run of about a megabyte of text (core/pacing.ts), with other requests
   * served between: one array a column, zipped by `unnest`; list values
   * travel as JSON (an array of arrays would not unnest by row).
   */
  async indexMany (tx: Queryable, objects: Array<{ type: ContentType, obj: IndexableObject }>): Promise<void> {
    const pacer = new Pacer()
    const rows = []
    for (const { type, obj } of objects) {
      await pacer.pace()
      rows.push({ obj, text: this.searchableText(type, obj.data) })
    }
    for (const run of runsOf(rows, ({ text }) => text.title.length + text.rest.length)) {
      await pacer.pace()
      await this.insertRows(tx, run)
    }
  }

  private async insertRows (tx: Queryable, rows: Array<{ obj: IndexableObject, text: { title: string, rest: string } }>): Promise<void> {
    const arrays = columnArrays(this.indexes, rows.map(r => r.obj))
    await tx.query(`INSERT INTO catalog (uid, searchable, ${this.indexes.map(column).join(', ')})
      SELECT uid, setweight(to_tsvector('simple', title), 'A') || setweight(to_tsvector('simple', rest), 'B'), ${arrays.reads.join(', ')}
      FROM unnest($1::uuid[], $2::text[], $3::text[], ${arrays.types.map((type, i) => `$${i + 4}::${type}[]`).join(', ')}) AS r(uid, title, rest, ${arrays.columns.join(', ')})
      ${this.onConflict()}`, [rows.map(r => r.obj.uid), rows.map(r => r.text.title), rows.map(r => r.text.rest), ...arrays.values], { prepared: true })
  }

  /**
   * The object's catalogue row written from a CTE of the same statement
   * (`source`, one row with its `uid` and the content columns indexes copy,
   * `fromRow`): nothing is written when it has no row.
   */
  upsertFrom (source: string, p: (value: unknown) => string, type: ContentType, obj: IndexableObject): string {
    return `INSERT INTO catalog (uid, searchable, ${this.indexes.map(column).join(', ')})
      SELECT ${source}.uid, ${this.rowOf(p, type, obj, source).join(', ')} FROM ${source}
      ${this.onConflict()}`
  }

  /**
   * A catalogue row's values after its uid, as SQL expressions with
   * parameters: the weighted `searchable`, then every index's value cast to
   * its column's type (a parameter in a SELECT or a multi-row VALUES has none),
   * or read from the written row (`source`) for the indexes that copy one of its columns.
   */
  private rowOf (p: (value: unknown) => string, type: ContentType, obj: IndexableObject, source: string): string[] {
    const text = this.searchableText(type, obj.data)
    return [
      `setweight(to_tsvector('simple', ${p(text.title)}), 'A') || setweight(to_tsvector('simple', ${p(text.rest)}), 'B')`,
      ...this.indexes.map(index => index.fromRow !== undefined ? `${source}.${index.fromRow}` : `${p(index.value(obj) ?? null)}::${INDEX_KINDS[index.kind].sql.type}`)
    ]
  }

  private onConflict (): string {
    return `ON CONFLICT (uid) DO UPDATE SET searchable = EXCLUDED.searchable, ${this.indexes.map(column).map(c => `${c} = EXCLUDED.${c}`).join(', ')}`
  }
}

/**
 * Many objects' values of `indexes` as `unnest` zips them into rows: an array
 * a column (`values`, of SQL type `types`), list values as JSON (an array of
 * arrays would not unnest by row), and the expressions that read each
 * unnested column (`columns`: c0, c1 …) back as the catalogue column's type.
 */
function columnArrays (indexes: IndexDefinition[], objects: IndexableObject[]): { values: unknown[][], types: string[], columns: string[], reads: string[] } {
  const isList = indexes.map(index => INDEX_KINDS[index.kind].sql.type.endsWith('[]'))
  const columns = indexes.map((_, i) => `c${i}`)
  return {
    values: indexes.map((index, i) => objects.map(obj => {
      const value = index.value(obj) ?? null
      return isList[i] && value !== null ? JSON.stringify(value) : value
    })),
    types: indexes.map((index, i) => isList[i] ? 'jsonb' : INDEX_KINDS[index.kind].sql.type),
    columns,
    // Items travel as text: cast to the column's own list type (text[], timestamptz[]).
    reads: columns.map((c, i) => isList[i] ? `CASE WHEN r.${c} IS NULL THEN NULL ELSE ARRAY(SELECT jsonb_array_elements_text(r.${c}))::${INDEX_KINDS[indexes[i].kind].sql.type} END` : `r.${c}`)
  }
}

/**
 * Whether two values of an index (or of a field) are the same: equal texts,
 * numbers, flags and dates, lists of such with the same items in order. Any
 * other pair of distinct objects counts as different: a change is then
 * reported that did not happen, never the other way round.
 */
function same (a: unknown, b: unknown): boolean {
  if ((a ?? null) === (b ?? null)) return true
  if (a instanceof Date && b instanceof Date) return a.getTime() === b.getTime()
  return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((item, i) => same(item, b[i]))
}

/**
 * The text of the fields a type marks searchable, title apart: the catalogue
 * weights it, and Solr receives it as `SearchableText` (it folds words itself).
 */
export function searchableText (type: ContentType, data: Record<string, unknown>): { title: string, rest: string } {
  const rest = type.searchableFields.filter(name => name !== 'title')
    .map(name => type.fields.get(name)?.kind === 'blocks' ? blocksText(data[name]) : textOf(data[name]))
  return { title: textOf(data.title), rest: rest.filter(Boolean).join(' ') }
}

/** Plain text of a field value: strings, rich text, lists of strings. */
function textOf (value: unknown): string {
  if (typeof value === 'string') return value
  if (Array.isArray(value)) return value.map(textOf).join(' ')
  if (value !== null && typeof value === 'object' && typeof (value as { data?: unknown }).data === 'string') {
    return htmlToText((value as { data: string }).data)
  }
  return ''
}
