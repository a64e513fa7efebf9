/**
 * A set of document numbers as a bitset: one bit a document, 32 a word. It
 * grows as documents are numbered; two sets of different lengths combine as
 * if the shorter one were padded with zeros. What Solr's filterCache keeps
 * for a filter, and what every resident query is evaluated to: a membership
 * test is one word read, an intersection of two filters over a million
 * documents 31,250 word operations.
 */
export class Bits {
  words: Uint32Array

  constructor (capacity = 0) {
    this.words = new Uint32Array(Math.ceil(capacity / 32))
  }

  /**
   * An empty set for the evaluation of one query only: inside `Bits.scoped`,
   * on a buffer an earlier evaluation gave back; outside, a new one. It must
   * not outlive the scope (kept filters, kept pairs are `new Bits`).
   */
  static temporary (capacity: number): Bits {
    const bits = new Bits()
    bits.words = scratch.take(Math.ceil(capacity / 32))
    return bits
  }

  /**
   * Runs `work` (synchronous) with the buffers of the sets it makes by
   * `temporary` and `temporaryClone` handed back at its end. At a million
   * documents a query's sets are 125 kB each; made new, a few hundred
   * queries' worth of them a second counted as memory outside V8's heap and
   * started a collection of the whole heap every second or two, half a
   * second of marking over the resident catalogue's objects each time.
   */
  static scoped<T> (work: () => T): T {
    return scratch.scoped(work)
  }

  /** A copy of this set that lives as long as `temporary`'s. */
  temporaryClone (): Bits {
    const copy = Bits.temporary(this.capacity)
    copy.words.set(this.words)
    return copy
  }

  static of (docs: Iterable<number>): Bits {
    const bits = new Bits()
    for (const doc of docs) bits.add(doc)
    return bits
  }

  /** How many documents a set of this length may hold. */
  get capacity (): number { return this.words.length * 32 }

  has (doc: number): boolean {
    const word = doc >>> 5
    return word < this.words.length && (this.words[word] & (1 << (doc & 31))) !== 0
  }

  add (doc: number): void {
    const word = doc >>> 5
    if (word >= this.words.length) this.grow(word + 1)
    this.words[word] |= 1 << (doc & 31)
  }

  delete (doc: number): void {
    const word = doc >>> 5
    if (word < this.words.length) this.words[word] &= ~(1 << (doc & 31))
  }

  private grow (words: number): void {
    const grown = new Uint32Array(Math.max(words, this.words.length * 2, 64))
    grown.set(this.words)
    this.words = grown
  }

  clone (): Bits {
    const copy = new Bits()
    copy.words = this.words.slice()
    return copy
  }

  /** This ∩ other, in place. */
  and (other: Bits): this {
    const { words } = this
    const theirs = other.words
    const shared = Math.min(words.length, theirs.length)
    for (let i = 0; i < shared; i++) words[i] &= theirs[i]
    words.fill(0, shared)
    return this
  }

  /** This ∪ other, in place. */
  or (other: Bits): this {
    if (other.words.length > this.words.length) this.grow(other.words.length)
    const { words } = this
    const theirs = other.words
    for (let i = 0; i < theirs.length; i++) words[i] |= theirs[i]
    return this
  }

  /** This ∖ other, in place. */
  andNot (other: Bits): this {
    const { words } = this
    const theirs = other.words
    const shared = Math.min(words.length, theirs.length)
    for (let i = 0; i < shared; i++) words[i] &= ~theirs[i]
    return this
  }

  /** How many documents the set holds. */
  count (): number {
    let n = 0
    for (const word of this.words) n += popcount(word)
    return n
  }

  /** Whether the set holds no document. */
  get empty (): boolean {
    for (const word of this.words) if (word !== 0) return false
    return true
  }

  /** The documents in ascending order; `visit` answering false stops the walk. */
  forEach (visit: (doc: number) => boolean | undefined | void): void {
    const { words } = this
    for (let i = 0; i < words.length; i++) {
      let word = words[i]
      while (word !== 0) {
        const low = word & -word
        if (visit(i * 32 + 31 - Math.clz32(low)) === false) return
        word ^= low
      }
    }
  }

  toArray (): number[] {
    const docs: number[] = []
    this.forEach(doc => { docs.push(doc) })
    return docs
  }

  /** Bytes held. */
  get byteSize (): number { return this.words.byteLength + 64 }
}

/** The buffers of temporary sets: those taken in the open scope, and the spare ones, smallest first (the largest MOST_SPARE kept). */
class Scratch {
  private readonly spare: ArrayBuffer[] = []
  private taken: ArrayBuffer[] | null = null

  take (words: number): Uint32Array {
    if (this.taken === null) return new Uint32Array(words)
    const bytes = words * 4
    // The smallest that fits.
    const at = this.spare.findIndex(buffer => buffer.byteLength >= bytes)
    // New buffers with an eighth to spare: the catalogue grows, and a buffer just too small would never be reused.
    const buffer = at >= 0 ? this.spare.splice(at, 1)[0] : new ArrayBuffer(bytes + (bytes >>> 3))
    this.taken.push(buffer)
    return new Uint32Array(buffer, 0, words).fill(0)
  }

  scoped<T> (work: () => T): T {
    const outer = this.taken
    const taken: ArrayBuffer[] = []
    this.taken = taken
    try {
      return work()
    } finally {
      this.taken = outer
      for (const buffer of taken) this.spare.push(buffer)
      this.spare.sort((a, b) => a.byteLength - b.byteLength)
      this.spare.splice(0, Math.max(0, this.spare.length - MOST_SPARE))
    }
  }
}

/** Spare buffers kept: more than the sets of one query's evaluation (a dozen at most). */
const MOST_SPARE = 32
const scratch = new Scratch()

/** Set bits of a 32-bit word (SWAR). */
export function popcount (word: number): number {
  word -= (word >>> 1) & 0x55555555
  word = (word & 0x33333333) + ((word >>> 2) & 0x33333333)
  return (((word + (word >>> 4)) & 0x0f0f0f0f) * 0x01010101) >>> 24
}
