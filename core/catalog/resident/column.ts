import type { IndexDefinition } from '../indexes.js'
import type { Bits } from './bits.js'

/**
 * How the resident catalogue holds one catalogue column: what it selects
 * from the table, and its values a document each. Dates and 64-bit integers
 * are numbers (dates in microseconds since the epoch, as PostgreSQL keeps
 * them: two objects created in the same millisecond still sort as the table
 * sorts them); missing values are NaN, null or -1 by kind.
 */
export interface Column {
  readonly index: IndexDefinition
  /** The SQL expression that reads the column as this holds it. */
  readonly select: string
  /** Stores the value a row carried for the document. */
  set: (doc: number, value: unknown) => void
  /** Whether the document holds what `set(doc, value)` would store: a change that leaves it alone moves the document in no order. */
  holds: (doc: number, value: unknown) => boolean
  clear: (doc: number) => void
  /** The value as criteria compare it: a number, a string, a list of strings, a boolean, or null. */
  get: (doc: number) => number | string | readonly string[] | boolean | null
  /** Ascending order of two documents' values, missing values last; 0 for equal ones. */
  compare: (a: number, b: number) => number
  /** Whether two documents' values are equal (`compare` answers 0), without ordering them: a descending walk asks it of every document. */
  same: (a: number, b: number) => boolean
  isNull: (doc: number) => boolean
  byteSize: () => number
  /** The documents holding `value` in their list, when the column keeps them by value (keyword columns): a filter is then read without a scan. */
  docsWith?: (value: string) => readonly number[]
  /** The order of the document's value against `value` (negative: before it), a missing value after every value: for the bounds of a range in the column's sorted order. */
  compareTo?: (doc: number, value: string | number | boolean) => number
  /** Whether no document holds a value, when the column knows it without a scan (further occurrences, held by few documents). */
  readonly empty?: boolean
  /** The live documents whose number lies within the bounds (numeric columns): one pass over a typed array. */
  within?: (live: Bits, low: number | undefined, high: number | undefined) => Bits
}
