import type { IndexDefinition } from '../indexes.js'
import type { Column } from './column.js'
import { compareText } from './text-order.js'

/** Distinct values (strings, lists) a column keeps once; unique ones (ids, paths, titles) gain nothing from it. */
export const MOST_SHARED = 10_000

/** Lengths that are not a length: no value, or a value kept aside (`irregular`). */
const NULL = -1
const IRREGULAR = -2

/** Bytes of values replaced since the arena was laid, beyond which (and beyond half of it) it is laid again. */
const LEAST_GARBAGE = 1 << 20

const encoder = new TextEncoder()
const decoder = new TextDecoder()

/**
 * A text column (ids, paths, titles, uids, states, creators) with its
 * values as UTF-8 bytes in one arena, a start and a length a document: no
 * string object a document. Kept as strings, a million documents' ids,
 * paths, titles and uids were some five million objects, and V8 marks every
 * one at each collection of the whole heap (half a second at a million
 * documents). UTF-8's byte order is code-point order, PostgreSQL's under the
 * C collation: values compare without being decoded.
 *
 * A value many documents share (a state, a type, a creator) is stored once
 * and pointed at by each. A value that is not well-formed UTF-16 (a lone
 * surrogate: PostgreSQL's text cannot hold one, a test's may) has no UTF-8
 * form; it is kept aside as a string and compared as one. Replaced values
 * leave their bytes behind; when those outgrow the live ones the arena is
 * laid again, a pass over every value paid once per as many changes.
 */
export class StringColumn implements Column {
  private bytes = new Uint8Array(1 << 16)
  private used = 0
  private garbage = 0
  private starts = new Int32Array(1024)
  private lengths = new Int32Array(1024).fill(NULL)
  /**
   * Shared values by text, and by their start. Values are shared until there
   * are `mostShared` of them, and never after: they all lie before
   * `sharedBytes`, every other value after it.
   */
  private readonly shared = new Map<string, { start: number, length: number }>()
  private sharedBytes = 0
  private readonly sharedAt = new Map<number, string>()
  private readonly irregular = new Map<number, string>()
  /** A query's value encoded, to compare with the arena without decoding it; `probeText` the text it holds, so that a test of every document encodes it once. */
  private probe = new Uint8Array(256)
  private probeText: string | null = null
  private probeLength = 0

  /**
   * `limits` (a test lowers them): the bytes of replaced values below which
   * the arena is never laid again, and how many distinct values are shared.
   */
  constructor (readonly index: IndexDefinition, readonly select: string, private readonly limits = { leastGarbage: LEAST_GARBAGE, mostShared: MOST_SHARED }) {}

  set (doc: number, value: unknown): void {
    this.ensure(doc)
    this.release(doc)
    if (value === null || value === undefined) return
    const text = String(value)
    if (!text.isWellFormed()) {
      this.irregular.set(doc, text)
      this.lengths[doc] = IRREGULAR
      return
    }
    // No bytes: its start is nobody's (a value appended next would start there too).
    if (text === '') {
      this.lengths[doc] = 0
      return
    }
    const known = this.shared.get(text)
    if (known !== undefined) {
      this.starts[doc] = known.start
      this.lengths[doc] = known.length
      return
    }
    const length = this.append(text)
    this.starts[doc] = this.used - length
    this.lengths[doc] = length
    if (this.shared.size < this.limits.mostShared) {
      this.shared.set(text, { start: this.starts[doc], length })
      this.sharedAt.set(this.starts[doc], text)
      this.sharedBytes = this.used
    }
  }

  /** Whether the document holds `value` (as `set` would store it). */
  holds (doc: number, value: unknown): boolean {
    if (value === null || value === undefined) return this.isNull(doc)
    const length = this.lengthOf(doc)
    const text = String(value)
    if (length === IRREGULAR || !text.isWellFormed()) return this.irregular.get(doc) === text
    // A UTF-16 unit is one to three bytes.
    if (length === NULL || text.length > length || text.length * 3 < length) return false
    if (this.encode(text) !== length) return false
    const { bytes, probe } = this
    const start = this.starts[doc]
    for (let i = 0; i < length; i++) if (bytes[start + i] !== probe[i]) return false
    return true
  }

  clear (doc: number): void { if (doc < this.lengths.length) this.release(doc) }

  get (doc: number): string | null {
    const length = this.lengthOf(doc)
    if (length === NULL) return null
    if (length === IRREGULAR) return this.irregular.get(doc) as string
    if (length === 0) return ''
    const start = this.starts[doc]
    return this.sharedAt.get(start) ?? decoder.decode(this.bytes.subarray(start, start + length))
  }

  isNull (doc: number): boolean { return this.lengthOf(doc) === NULL }

  compare (a: number, b: number): number {
    const x = this.lengthOf(a)
    const y = this.lengthOf(b)
    if (x === NULL) return y === NULL ? 0 : 1
    if (y === NULL) return -1
    if (x === IRREGULAR || y === IRREGULAR) return compareText(this.get(a) as string, this.get(b) as string)
    const { bytes } = this
    const from = this.starts[a]
    const to = this.starts[b]
    if (from === to && x === y) return 0
    for (let i = 0, n = Math.min(x, y); i < n; i++) {
      const difference = bytes[from + i] - bytes[to + i]
      if (difference !== 0) return difference
    }
    return x - y
  }

  same (a: number, b: number): boolean { return this.compare(a, b) === 0 }

  compareTo (doc: number, value: string | number | boolean): number {
    const length = this.lengthOf(doc)
    if (length === NULL) return 1
    const text = String(value)
    if (length === IRREGULAR || !text.isWellFormed()) return compareText(this.get(doc) as string, text)
    const probeLength = this.encode(text)
    const { bytes, probe } = this
    const start = this.starts[doc]
    for (let i = 0, n = Math.min(length, probeLength); i < n; i++) {
      const difference = bytes[start + i] - probe[i]
      if (difference !== 0) return difference
    }
    return length - probeLength
  }

  byteSize (): number {
    return this.bytes.byteLength + this.starts.byteLength + this.lengths.byteLength + this.shared.size * 120 + this.irregular.size * 64
  }

  private lengthOf (doc: number): number { return doc < this.lengths.length ? this.lengths[doc] : NULL }

  private ensure (doc: number): void {
    if (doc < this.lengths.length) return
    const size = Math.max(doc + 1, this.lengths.length * 2)
    const starts = new Int32Array(size)
    starts.set(this.starts)
    const lengths = new Int32Array(size).fill(NULL)
    lengths.set(this.lengths)
    this.starts = starts
    this.lengths = lengths
  }

  /** Drops the document's value: its bytes become garbage unless shared. */
  private release (doc: number): void {
    const length = this.lengths[doc]
    if (length === IRREGULAR) this.irregular.delete(doc)
    else if (length > 0 && this.starts[doc] >= this.sharedBytes) this.garbage += length
    this.lengths[doc] = NULL
    if (this.garbage > this.limits.leastGarbage && this.garbage * 2 > this.used) this.compact()
  }

  /** Appends a well-formed text's UTF-8 bytes; answers how many. */
  private append (text: string): number {
    // At most three bytes a UTF-16 unit.
    if (this.used + text.length * 3 > this.bytes.length) this.bytes = grownBytes(this.bytes, this.used + text.length * 3)
    const { written } = encoder.encodeInto(text, this.bytes.subarray(this.used))
    this.used += written
    return written
  }

  /** Puts `text`'s UTF-8 bytes in `probe` (unless they are there already) and answers how many. */
  private encode (text: string): number {
    if (text !== this.probeText) {
      if (text.length * 3 > this.probe.length) this.probe = new Uint8Array(text.length * 3)
      this.probeLength = encoder.encodeInto(text, this.probe).written
      this.probeText = text
    }
    return this.probeLength
  }

  /** Lays the arena again with the values held: the shared ones where they are, then each document's own. */
  private compact (): void {
    const old = this.bytes
    this.bytes = new Uint8Array(Math.max(1 << 16, this.used - this.garbage + (this.used >>> 3)))
    this.bytes.set(old.subarray(0, this.sharedBytes))
    this.used = this.sharedBytes
    this.garbage = 0
    for (let doc = 0; doc < this.lengths.length; doc++) {
      const length = this.lengths[doc]
      const start = this.starts[doc]
      if (length <= 0 || start < this.sharedBytes) continue
      this.bytes.set(old.subarray(start, start + length), this.used)
      this.starts[doc] = this.used
      this.used += length
    }
  }
}

function grownBytes (bytes: Uint8Array, least: number): Uint8Array<ArrayBuffer> {
  const grown = new Uint8Array(Math.max(least, bytes.length * 2))
  grown.set(bytes.subarray(0))
  return grown
}
