import type { Db, Queryable } from './db.js'
import { searchableWords, SQL_TYPE, type IndexableObject, type IndexDefinition } from './indexes.js'
import type { ContentType, ContentTypeRegistry } from './registry.js'
import { htmlToText } from './richtext.js'

/** Quoted catalogue column of an index (names are case-sensitive: `Title`, `portal_type`). */
export const column = (index: IndexDefinition | string): string =>
  `"${(typeof index === 'string' ? index : index.name).replace(/"/g, '')}"`

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
      ON CONFLICT (uid) DO UPDATE SET searchable = EXCLUDED.searchable, ${columns.map(c => `${c} = EXCLUDED.${c}`).join(', ')}`
  }

  /** The statements that give the catalogue a column (and a database index) for every declared index. */
  ddl (): string[] {
    const statements: string[] = []
    for (const index of this.indexes) {
      statements.push(`ALTER TABLE catalog ADD COLUMN IF NOT EXISTS ${column(index)} ${SQL_TYPE[index.kind]}`)
      if (!index.indexed) continue
      const method = index.multiValued ? 'gin' : 'btree'
      if (index.kind === 'boolean' || index.kind === 'text') continue
      statements.push(`CREATE INDEX IF NOT EXISTS ${column('catalog_' + index.name)} ON catalog USING ${method} (${column(index)})`)
    }
    return statements
  }

  async ensureSchema (db: Db): Promise<void> {
    await db.transaction(async tx => {
      await tx.query('SELECT pg_advisory_xact_lock(7340002)')
      for (const statement of this.ddl()) await tx.query(statement)
    })
  }

  /** Words of the object for `SearchableText`: title weighted above the rest. */
  searchableText (type: ContentType, data: Record<string, unknown>): { title: string, rest: string } {
    const text = searchableText(type, data)
    return { title: searchableWords(text.title), rest: searchableWords(text.rest) }
  }

  async index (tx: Queryable, type: ContentType, obj: IndexableObject): Promise<void> {
    const text = this.searchableText(type, obj.data)
    const values = this.indexes.map(index => index.value(obj) ?? null)
    await tx.query(this.upsertSql, [obj.uid, text.title, text.rest, ...values])
  }
}

/**
 * The text of the fields a type marks searchable, title apart: the catalogue
 * weights it, and Solr receives it as `SearchableText` (it folds words itself).
 */
export function searchableText (type: ContentType, data: Record<string, unknown>): { title: string, rest: string } {
  const rest = type.searchableFields.filter(name => name !== 'title').map(name => textOf(data[name]))
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
