import type { IndexDefinition } from '../indexes.js'
import { column } from '../catalog.js'
import { Bits } from './bits.js'
import type { Column } from './column.js'
import { lowerBound } from './lower-bound.js'
import { MOST_SHARED, StringColumn } from './string-column.js'

/** A date column in microseconds since the epoch, as PostgreSQL compares it (a JavaScript Date holds milliseconds). */
export const microseconds = (name: string): string => `(extract(epoch FROM ${name}) * 1000000)::float8`

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
    this.values[doc] = NumberColumn.stored(value)
  }

  private static stored (value: unknown): number { return value === null || value === undefined ? NaN : Number(value) }

  holds (doc: number, value: unknown): boolean {
    const x = this.values[doc]
    const y = NumberColumn.stored(value)
    return x === y || (Number.isNaN(x) && Number.isNaN(y))
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

  compareTo (doc: number, value: string | number | boolean): number {
    const x = this.values[doc]
    const y = Number(value)
    if (Number.isNaN(x) || x === undefined) return 1
    return x < y ? -1 : x > y ? 1 : 0
  }

  same (a: number, b: number): boolean {
    const x = this.values[a]
    const y = this.values[b]
    // Two missing values (NaN) are equal here, as compare has them.
    return x === y || (Number.isNaN(x) && Number.isNaN(y))
  }

  byteSize (): number { return this.values.byteLength }

  within (live: Bits, low = -Infinity, high = Infinity): Bits {
    const { values } = this
    const found = Bits.temporary(live.capacity)
    const { words } = found
    const alive = live.words
    // One pass over the values, a word of 32 documents at a time (no call a document: 100,000 in a tenth of a millisecond).
    // NaN (missing) is neither ≥ nor ≤ anything: never within.
    for (let w = 0; w < alive.length; w++) {
      if (alive[w] === 0) continue
      let word = 0
      const base = w * 32
      const end = Math.min(32, values.length - base)
      for (let bit = 0; bit < end; bit++) {
        const value = values[base + bit]
        if (value >= low && value <= high) word |= 1 << bit
      }
      words[w] = word & alive[w]
    }
    return found
  }
}

/**
 * Values of any other kind, one slot a document. Strings and lists that many
 * documents share (a state, a type, a creator; the principals allowed, the
 * parents of a path, a pair of subjects) are kept once: the table sends a
 * copy with every row, and a list a document would be an object a document
 * for V8's collector to mark — at a million documents some millions of
 * them, half a second of marking at every collection of the whole heap.
 */
class ValueColumn<T extends string | readonly string[] | boolean> implements Column {
  protected readonly values: Array<T | null> = []
  private readonly shared = new Map<string, string>()
  private readonly sharedLists = new Map<string, readonly string[]>()
  /** What the values hold besides their slots, kept as they change (counting them all would be a scan). */
  private held = 0
  constructor (readonly index: IndexDefinition, readonly select: string, private readonly order: (a: T, b: T) => number) {}

  private intern (text: string): string {
    const known = this.shared.get(text)
    if (known !== undefined) return known
    if (this.shared.size < MOST_SHARED) this.shared.set(text, text)
    return text
  }

  private internList (items: readonly unknown[]): readonly string[] {
    const list = items.map(item => this.intern(String(item)))
    const key = JSON.stringify(list)
    const known = this.sharedLists.get(key)
    if (known !== undefined) return known
    Object.freeze(list)
    if (this.sharedLists.size < MOST_SHARED) this.sharedLists.set(key, list)
    return list
  }

  set (doc: number, value: unknown): void {
    while (this.values.length <= doc) this.values.push(null)
    this.held -= sizeOf(this.values[doc])
    this.store(doc, value)
    this.held += sizeOf(this.values[doc])
  }

  private store (doc: number, value: unknown): void {
    if (value === null || value === undefined) this.values[doc] = null
    else if (typeof value === 'string') this.values[doc] = this.intern(value) as T
    else if (Array.isArray(value)) this.values[doc] = this.internList(value) as unknown as T
    else this.values[doc] = value as T
  }

  holds (doc: number, value: unknown): boolean {
    const held = this.get(doc)
    if (value === null || value === undefined || held === null) return held === (value ?? null)
    if (!Array.isArray(value)) return held === (typeof value === 'string' ? value : value as T)
    return Array.isArray(held) && held.length === value.length && value.every((item, i) => held[i] === String(item))
  }

  clear (doc: number): void { if (doc < this.values.length) this.set(doc, null) }
  get (doc: number): T | null { return this.values[doc] ?? null }
  isNull (doc: number): boolean { return this.get(doc) === null }
  compare (a: number, b: number): number {
    const x = this.get(a)
    const y = this.get(b)
    if (x === null) return y === null ? 0 : 1
    if (y === null) return -1
    return this.order(x, y)
  }

  same (a: number, b: number): boolean {
    const x = this.get(a)
    const y = this.get(b)
    // Strings are equal exactly when their code points are, which `===` tells natively; lists are ordered by `order` alone.
    return typeof x === 'string' || typeof y === 'string' ? x === y : this.compare(a, b) === 0
  }

  byteSize (): number {
    return this.values.length * 8 + this.held + this.shared.size * 48
  }
}

/** Heap bytes of a value besides its slot (shared strings counted as if they were not: an estimate from above). */
function sizeOf (value: unknown): number {
  if (typeof value === 'string') return 16 + value.length
  if (Array.isArray(value)) return 32 + value.length * 8
  return 0
}

/**
 * A list column (a keyword index) that also keeps, for each value, the
 * documents holding it, in ascending order: the filter of a value (a
 * principal, a subject, a path) is then read from its documents, not by a
 * scan of every document — a user's first query costs microseconds, not a
 * pass over the catalogue.
 */
class KeywordColumn extends ValueColumn<readonly string[]> {
  private readonly byValue = new Map<string, number[]>()
  private postings = 0

  constructor (index: IndexDefinition, select: string) {
    super(index, select, unordered)
  }

  override set (doc: number, value: unknown): void {
    const before = new Set(this.get(doc) ?? [])
    super.set(doc, value)
    const after = new Set(this.get(doc) ?? [])
    // Only what changed: a value's documents may be most of the catalogue (a state, `Anonymous`), each post or unpost a copy of them.
    for (const old of before) if (!after.has(old)) this.unpost(old, doc)
    for (const held of after) if (!before.has(held)) this.post(held, doc)
  }

  docsWith (value: string): readonly number[] { return this.byValue.get(value) ?? [] }

  private post (value: string, doc: number): void {
    const docs = this.byValue.get(value)
    if (docs === undefined) { this.byValue.set(value, [doc]); this.postings++; return }
    // New documents have the highest numbers: most posts are appends.
    if (docs[docs.length - 1] < doc) docs.push(doc)
    else {
      const at = lowerBound(docs, doc)
      if (docs[at] === doc) return
      docs.splice(at, 0, doc)
    }
    this.postings++
  }

  private unpost (value: string, doc: number): void {
    const docs = this.byValue.get(value)
    if (docs === undefined) return
    const at = lowerBound(docs, doc)
    if (docs[at] !== doc) return
    docs.splice(at, 1)
    this.postings--
    if (docs.length === 0) this.byValue.delete(value)
  }

  override byteSize (): number { return super.byteSize() + this.postings * 8 + this.byValue.size * 64 }
}

/**
 * The further occurrences of a recurring date (kind `dates`), held only for
 * the documents that have any — a catalogue holds few recurring events, and
 * an array a document would be an object a document for the collector to
 * mark: ascending microseconds a document. A range tests these documents
 * alone; their own date is the date's column.
 */
class OccurrencesColumn implements Column {
  private readonly byDoc = new Map<number, Float64Array>()
  private held = 0
  constructor (readonly index: IndexDefinition, readonly select: string) {}

  private static stored (value: unknown): Float64Array | null {
    return Array.isArray(value) && value.length > 0 ? Float64Array.from(value, Number) : null
  }

  set (doc: number, value: unknown): void {
    this.clear(doc)
    const list = OccurrencesColumn.stored(value)
    if (list === null) return
    this.byDoc.set(doc, list)
    this.held += list.byteLength
  }

  holds (doc: number, value: unknown): boolean {
    const held = this.byDoc.get(doc) ?? null
    const given = OccurrencesColumn.stored(value)
    if (held === null || given === null) return held === given
    return held.length === given.length && held.every((time, i) => time === given[i])
  }

  clear (doc: number): void {
    const list = this.byDoc.get(doc)
    if (list === undefined) return
    this.held -= list.byteLength
    this.byDoc.delete(doc)
  }

  /** The first further occurrence: no criterion reads it (ranges read `within`), sorts never (it is not sortable). */
  get (doc: number): number | null { return this.byDoc.get(doc)?.[0] ?? null }
  isNull (doc: number): boolean { return !this.byDoc.has(doc) }
  compare (a: number, b: number): number {
    const x = this.get(a)
    const y = this.get(b)
    if (x === null) return y === null ? 0 : 1
    if (y === null) return -1
    return x - y
  }

  same (a: number, b: number): boolean { return this.compare(a, b) === 0 }
  byteSize (): number { return this.held + this.byDoc.size * 64 }
  /** Whether any document holds further occurrences: without any, a range over the date is its column's alone. */
  get empty (): boolean { return this.byDoc.size === 0 }

  within (live: Bits, low = -Infinity, high = Infinity): Bits {
    const found = Bits.temporary(live.capacity)
    for (const [doc, times] of this.byDoc) {
      if (!live.has(doc)) continue
      // The first time at or after `low` (ascending times): within when it is not past `high`.
      const first = lowerBound(times, low)
      if (first < times.length && times[first] <= high) found.add(doc)
    }
    return found
  }
}

const unordered = (): number => 0
const compareFlags = (a: boolean, b: boolean): number => Number(a) - Number(b)

/**
 * The column an index gets, or null for the kinds criteria on which the
 * resident catalogue leaves to PostgreSQL (`text`: substring words; `json`
 * is never a criterion).
 */
export function columnOf (index: IndexDefinition): Column | null {
  const name = column(index)
  switch (index.kind) {
    case 'date': return new NumberColumn(index, microseconds(name))
    case 'dates': return new OccurrencesColumn(index, `CASE WHEN ${name} IS NULL THEN NULL ELSE ARRAY(SELECT ${microseconds('occurrence')} FROM unnest(${name}) AS occurrence) END`)
    case 'int':
    case 'long': return new NumberColumn(index, `${name}::float8`)
    case 'boolean': return new ValueColumn<boolean>(index, name, compareFlags)
    case 'keyword': return new KeywordColumn(index, name)
    case 'uuid': return new StringColumn(index, `${name}::text`)
    case 'field': return new StringColumn(index, name)
    case 'text':
    case 'json': return null
  }
}
