import { BadRequest } from '../errors.js'
import { LONG, parseBoolean, parseDate, parseInteger } from './zope.js'

/** A value a criterion compares with, as its index kind reads it. */
export type Scalar = string | number | boolean | Date

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/**
 * Everything the service knows about a kind of index, in one place, so that a
 * new kind is one entry here:
 * - `match`: how a criterion on it matches — `keywords` (any, or with
 *   `operator: and` all, of a set of values), `words` (every word, within
 *   the value), `flag` (one boolean), `values` (one of the values, or a range);
 * - `parse`: a query value as the index compares it (400 when it cannot be);
 * - `sql`: the catalogue column's type, and the database index it gets (none
 *   for booleans and free text, which an index would not narrow);
 * - `solr`: the field type of the generated Solr schema;
 * - `multiValued`, `sortable`.
 */
export interface IndexKindSpec {
  match: 'keywords' | 'words' | 'flag' | 'values'
  parse: (value: unknown, name: string) => Scalar
  /** `descending`: a second index in descending order (NULLS LAST), for the newest-first lists dates make. */
  sql: { type: string, index: 'btree' | 'gin' | 'held' | null, descending?: boolean }
  solr: 'string' | 'text' | 'boolean' | 'pint' | 'plong' | 'pdate'
  multiValued: boolean
  sortable: boolean
  /** A query value the index can never hold matches nothing, rather than being an error (an id that is not a UID); not as a range bound. */
  holds?: (value: unknown) => boolean
}

const text = (value: unknown): string => String(value)

const KINDS = {
  /** One comparable value (Plone's FieldIndex). */
  field: { match: 'values', parse: text, sql: { type: 'text', index: 'btree' }, solr: 'string', multiValued: false, sortable: true },
  /** A set of values; a query matches any of them (KeywordIndex). */
  keyword: { match: 'keywords', parse: text, sql: { type: 'text[]', index: 'gin' }, solr: 'string', multiValued: true, sortable: false },
  /** A point in time, with ranges (DateIndex). */
  date: { match: 'values', parse: parseDate, sql: { type: 'timestamptz', index: 'btree', descending: true }, solr: 'pdate', multiValued: false, sortable: true },
  /**
   * Points in time, a range matching any of them: the further occurrences of
   * a recurring date (Plone's DateRecurringIndex), beside the date's own index
   * (IndexDefinition.occurrences). No index narrows a range over array
   * items; a catalogue holds few recurring events, and the index of the rows
   * holding any lets PostgreSQL test those alone beside the date's own index.
   */
  dates: { match: 'values', parse: parseDate, sql: { type: 'timestamptz[]', index: 'held' }, solr: 'pdate', multiValued: true, sortable: false },
  boolean: { match: 'flag', parse: parseBoolean, sql: { type: 'boolean', index: null }, solr: 'boolean', multiValued: false, sortable: true },
  int: { match: 'values', parse: parseInteger, sql: { type: 'integer', index: 'btree' }, solr: 'pint', multiValued: false, sortable: true },
  /** A 64-bit integer: a folder's positions, which only grow (core/content/positions.ts). */
  long: { match: 'values', parse: (value, name) => parseInteger(value, name, LONG), sql: { type: 'bigint', index: 'btree' }, solr: 'plong', multiValued: false, sortable: true },
  /** Words, queried by every word they hold (ZCTextIndex). */
  text: { match: 'words', parse: text, sql: { type: 'text', index: null }, solr: 'text', multiValued: false, sortable: false },
  /** A JSON value kept for results only (Plone's `image_scales`): no criterion reads it; Solr keeps it as JSON text, as collective.solr does. */
  json: { match: 'values', parse: text, sql: { type: 'jsonb', index: null }, solr: 'string', multiValued: false, sortable: false },
  /** An object's UID, compared case-insensitively. */
  uuid: {
    match: 'values',
    parse: (value, name) => {
      if (!UUID.test(String(value))) throw BadRequest(`Could not parse value '${String(value)}' of '${name}' as a UID.`)
      return String(value).toLowerCase()
    },
    sql: { type: 'uuid', index: 'btree' },
    solr: 'string',
    multiValued: false,
    sortable: true,
    holds: value => UUID.test(String(value))
  }
} satisfies Record<string, IndexKindSpec>

/**
 * How a field is indexed in the catalogue and in Solr: one of the kinds above
 * (a content type names it in a field's `index` annotation).
 */
export type IndexKind = keyof typeof KINDS

export const INDEX_KINDS: Record<IndexKind, IndexKindSpec> = KINDS
