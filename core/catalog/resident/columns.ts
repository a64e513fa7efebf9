import type { IndexDefinition } from '../indexes.js'
import { column } from '../catalog.js'

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
  clear: (doc: number) => void
  /** The value as criteria compare it: a number, a string, a list of strings, a boolean, or null. */
  get: (doc: number) => number | string | readonly string[] | boolean | null
  /** Ascending order of two documents' values, missing values last; 0 for equal ones. */
  compare: (a: number, b: number) => number
  isNull: (doc: number) => boolean
  byteSize: () => number
}

/** Code-point order, as PostgreSQL compares text under the C collation (and Python's ZCatalog compares strings); JavaScript's `<` compares UTF-16 units. */
export function compareText (a: string, b: string): number {
  const n = Math.min(a.length, b.length)
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i)
    const y = b.charCodeAt(i)
    if (x === y) continue
    // A surrogate (0xD800–0xDFFF) stands for a code point above 0xFFFF: above every other unit.
    const high = (u: number): number => u >= 0xd800 && u <= 0xdfff ? u + 0x10000 : u
    return high(x) - high(y)
  }
  return a.length - b.length
}

/** Values of numbers (dates, integers, positions) in a growable Float64Array; NaN is missing. */
class NumberColumn implements Column {
  private values = new Float64Array(1024).fill(NaN)
  constructor (readonly index: IndexDefinition, readonly select: string) {}

  set (doc: number, value: unknown): void {
    if (doc >= this.values.length) {
      const grown = new Float64Array(Math.max(doc + 1, this.values.length * 2)).fill(NaN)
      grown.set(this.values)
      this.values = grown
    }
    this.values[doc] = value === null || value === undefined ? NaN : Number(value)
  }

  clear (doc: number): void { if (doc < this.values.length) this.values[doc] = NaN }
  get (doc: number): number | null {
    const value = this.values[doc]
    return Number.isNaN(value) || value === undefined ? null : value
  }

  isNull (doc: number): boolean { return this.get(doc) === null }
  compare (a: number, b: number): number {
    const x = this.values[a]
    const y = this.values[b]
    if (Number.isNaN(x)) return Number.isNaN(y) ? 0 : 1
    if (Number.isNaN(y)) return -1
    return x < y ? -1 : x > y ? 1 : 0
  }

  byteSize (): number { return this.values.byteLength }
}

/**
 * Values of any other kind, one slot a document. Strings that many
 * documents share (a state, a type, a creator) are kept once: the table
 * sends a copy with every row.
 */
class ValueColumn<T extends string | readonly string[] | boolean> implements Column {
  private readonly values: Array<T | null> = []
  private readonly shared = new Map<string, string>()
  constructor (readonly index: IndexDefinition, readonly select: string, private readonly order: (a: T, b: T) => number) {}

  private intern (text: string): string {
    const known = this.shared.get(text)
    if (known !== undefined) return known
    // Unique values (ids, paths) gain nothing from being kept once: stop sharing past a bound.
    if (this.shared.size < 10_000) this.shared.set(text, text)
    return text
  }

  set (doc: number, value: unknown): void {
    while (this.values.length <= doc) this.values.push(null)
    if (value === null || value === undefined) this.values[doc] = null
    else if (typeof value === 'string') this.values[doc] = this.intern(value) as T
    else if (Array.isArray(value)) this.values[doc] = Object.freeze(value.map(item => this.intern(String(item)))) as unknown as T
    else this.values[doc] = value as T
  }

  clear (doc: number): void { if (doc < this.values.length) this.values[doc] = null }
  get (doc: number): T | null { return this.values[doc] ?? null }
  isNull (doc: number): boolean { return this.get(doc) === null }
  compare (a: number, b: number): number {
    const x = this.get(a)
    const y = this.get(b)
    if (x === null) return y === null ? 0 : 1
    if (y === null) return -1
    return this.order(x, y)
  }

  byteSize (): number {
    let bytes = this.values.length * 8
    for (const value of this.values) {
      if (typeof value === 'string') bytes += 16 + value.length
      else if (Array.isArray(value)) bytes += 32 + value.length * 8
    }
    return bytes + this.shared.size * 48
  }
}

const unordered = (): number => 0
const compareFlags = (a: boolean, b: boolean): number => Number(a) - Number(b)

/**
 * The column an index gets, or null for the kinds criteria on which the
 * resident catalogue leaves to PostgreSQL (`text`: substring words).
 */
export function columnOf (index: IndexDefinition): Column | null {
  const name = column(index)
  switch (index.kind) {
    case 'date': return new NumberColumn(index, `(extract(epoch FROM ${name}) * 1000000)::float8`)
    case 'int':
    case 'long': return new NumberColumn(index, `${name}::float8`)
    case 'boolean': return new ValueColumn<boolean>(index, name, compareFlags)
    case 'keyword': return new ValueColumn<readonly string[]>(index, name, unordered)
    case 'uuid': return new ValueColumn<string>(index, `${name}::text`, compareText)
    case 'field': return new ValueColumn<string>(index, name, compareText)
    case 'text': return null
  }
}
