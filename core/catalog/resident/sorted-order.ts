// Over 350 lines on purpose: one structure, its changes and its walks in every direction (ascending,
// descending by groups, a range between two bounds) share the chunks' invariants; the flat layout is its own file.
import { directionOrder, FlatOrder, patchLimit, type Direction } from './flat-order.js'

/**
 * Document numbers kept in the order of one catalogue sort, as the resident
 * catalogue answers `sort_on`: a page is a walk from the start of the order
 * that stops after its last row. The order is cut into chunks of at most
 * `chunkSize` documents (an Int32Array and a count each) so that a change
 * moves at most one chunk's documents, never the whole order: inserting or
 * removing one of a million documents is two binary searches (over the chunks
 * by their first document, then inside one chunk) and a copy of at most
 * `chunkSize` numbers. A full chunk splits in two; a chunk that empties is
 * dropped, and one that falls to a quarter joins a neighbour with room, so
 * that removals do not leave a long list of nearly empty chunks behind.
 *
 * The order never reads values itself: `compare` places documents (value
 * ascending, nulls last, then the tie-break, so a strict total order on
 * distinct documents), `sameValue` and `isNull` tell the groups of equal
 * value apart for the descending walk. All three must agree: documents of one
 * value contiguous under `compare`, null documents last.
 */
export class SortedOrder {
  /** The chunks in order; none is empty, so every chunk has a first document. */
  private chunks: Int32Array[] = []
  /** How many documents each chunk holds (its leading `counts[i]` entries). */
  private counts: number[] = []
  private documents = 0
  /** The order laid flat in each direction asked for, patched by the changes since (`flat`). */
  private readonly flats = new Map<Direction, FlatOrder>()

  /**
   * compare: strict total order (value ascending with nulls last, then tie-break).
   * sameValue(a, b): whether a and b hold the same sort value (both null counts as same).
   * isNull(doc): whether doc's value is missing.
   * chunkSize: the most documents a chunk holds (at least 4); the default
   * keeps a change's copy within a microsecond and a million documents in
   * some 1,300 chunks (three quarters full after a build).
   */
  constructor (
    private readonly compare: (a: number, b: number) => number,
    private readonly sameValue: (a: number, b: number) => boolean,
    private readonly isNull: (doc: number) => boolean,
    readonly chunkSize = DEFAULT_CHUNK_SIZE
  ) {
    if (!Number.isInteger(chunkSize) || chunkSize < 4) throw new RangeError(`A chunk holds at least 4 documents, not ${chunkSize}.`)
  }

  /**
   * Builds from documents in any order (sorts them once with compare). Each
   * chunk is filled to three quarters, so that the first inserts after a
   * build do not split every chunk they reach.
   */
  static build (
    docs: ArrayLike<number>,
    compare: (a: number, b: number) => number,
    sameValue: (a: number, b: number) => boolean,
    isNull: (doc: number) => boolean,
    chunkSize = DEFAULT_CHUNK_SIZE
  ): SortedOrder {
    const order = new SortedOrder(compare, sameValue, isNull, chunkSize)
    const sorted = Int32Array.from(docs).sort(compare)
    for (let i = 1; i < sorted.length; i++) {
      // A document twice would be found once by remove and walked twice.
      if (sorted[i] === sorted[i - 1]) throw new RangeError(`Document ${sorted[i]} is given twice.`)
    }
    const fill = (chunkSize * 3) >> 2
    for (let start = 0; start < sorted.length; start += fill) {
      const chunk = new Int32Array(chunkSize)
      const part = sorted.subarray(start, start + fill)
      chunk.set(part)
      order.chunks.push(chunk)
      order.counts.push(part.length)
    }
    order.documents = sorted.length
    return order
  }

  get size (): number { return this.documents }

  /**
   * The order in one direction laid flat (flat-order.ts): laid at the first
   * ask (a walk of the chunks, some 100,000 documents a millisecond), then
   * kept, taking each change as a patch, until `patchLimit` changes have
   * come; then laid again at the next ask.
   */
  flat (direction: Direction): FlatOrder {
    const kept = this.flats.get(direction)
    if (kept !== undefined) return kept
    const flat = FlatOrder.lay(this.documents, visit => { this[direction](visit) }, directionOrder(direction, this.compare, this.sameValue, this.isNull))
    this.flats.set(direction, flat)
    return flat
  }

  /** Hands a change to the flat orders kept, dropping those that have taken `patchLimit`. */
  private patchFlats (change: (flat: FlatOrder) => void): void {
    const limit = patchLimit(this.documents)
    for (const [direction, flat] of this.flats) {
      if (flat.patches >= limit) this.flats.delete(direction)
      else change(flat)
    }
  }

  /**
   * The chunk where `doc` belongs: the last whose first document comes
   * before it (or is it), the first chunk when doc comes before them all;
   * -1 when there is no chunk.
   */
  private chunkOf (doc: number): number {
    const { chunks, compare } = this
    let low = 0
    let high = chunks.length
    // Invariant: chunks before `low` start at or before doc, chunks from `high` on after it.
    while (low < high) {
      const middle = (low + high) >>> 1
      if (compare(chunks[middle][0], doc) <= 0) low = middle + 1
      else high = middle
    }
    return Math.max(low - 1, chunks.length === 0 ? -1 : 0)
  }

  /** The first offset in chunk `c` whose document does not come before doc (the count when all do). */
  private offsetOf (c: number, doc: number): number {
    const chunk = this.chunks[c]
    let low = 0
    let high = this.counts[c]
    while (low < high) {
      const middle = (low + high) >>> 1
      if (this.compare(chunk[middle], doc) < 0) low = middle + 1
      else high = middle
    }
    return low
  }

  /** Inserts doc at its place. The caller guarantees doc is not in the order. */
  insert (doc: number): void {
    let c = this.chunkOf(doc)
    if (c < 0) {
      this.chunks.push(new Int32Array(this.chunkSize))
      this.counts.push(0)
      c = 0
    }
    let offset = this.offsetOf(c, doc)
    if (this.counts[c] === this.chunkSize) {
      // Full: the upper half moves to a new chunk after it, and doc goes to the half it falls in.
      const half = this.chunkSize >> 1
      const upper = new Int32Array(this.chunkSize)
      upper.set(this.chunks[c].subarray(half))
      this.chunks.splice(c + 1, 0, upper)
      this.counts.splice(c + 1, 0, this.chunkSize - half)
      this.counts[c] = half
      if (offset > half) {
        c++
        offset -= half
      }
    }
    const chunk = this.chunks[c]
    chunk.copyWithin(offset + 1, offset, this.counts[c])
    chunk[offset] = doc
    this.counts[c]++
    this.documents++
    this.patchFlats(flat => { flat.insert(doc) })
  }

  /**
   * Removes doc; the caller guarantees doc's values have not changed since it
   * was inserted (compare still places it where it is). Answers false when it
   * is not found.
   */
  remove (doc: number): boolean {
    const c = this.chunkOf(doc)
    if (c < 0) return false
    const offset = this.offsetOf(c, doc)
    const chunk = this.chunks[c]
    const count = this.counts[c]
    if (offset === count || chunk[offset] !== doc) return false
    chunk.copyWithin(offset, offset + 1, count)
    this.counts[c] = count - 1
    this.documents--
    this.patchFlats(flat => { flat.remove(doc) })
    this.shrink(c)
    return true
  }

  /**
   * After a removal from chunk `c`: an empty chunk is dropped; one down to a
   * quarter joins a neighbour when both fit in three quarters. A joined
   * chunk must take a quarter of a chunk of inserts before it splits again,
   * and a split half a quarter of removals before it joins again, so no
   * sequence of changes copies a chunk on every change.
   */
  private shrink (c: number): void {
    const { counts, chunkSize } = this
    const count = counts[c]
    if (count === 0) {
      this.chunks.splice(c, 1)
      counts.splice(c, 1)
      return
    }
    if (count > chunkSize >> 2) return
    const room = (chunkSize * 3) >> 2
    if (c + 1 < counts.length && count + counts[c + 1] <= room) this.join(c)
    else if (c > 0 && counts[c - 1] + count <= room) this.join(c - 1)
  }

  /** Moves chunk c + 1's documents to the end of chunk c and drops chunk c + 1. */
  private join (c: number): void {
    const { chunks, counts } = this
    chunks[c].set(chunks[c + 1].subarray(0, counts[c + 1]), counts[c])
    counts[c] += counts[c + 1]
    chunks.splice(c + 1, 1)
    counts.splice(c + 1, 1)
  }

  /** Visits in ascending order (compare); stops when visit answers false. The order must not change during the walk. */
  ascending (visit: (doc: number) => boolean | void): void {
    const { chunks, counts } = this
    for (let c = 0; c < chunks.length; c++) {
      const chunk = chunks[c]
      const count = counts[c]
      for (let i = 0; i < count; i++) if (visit(chunk[i]) === false) return
    }
  }

  /**
   * Visits in ascending order the documents from the first `from` holds for
   * to the last before the first `beyond` holds for. Each test must fail,
   * then hold, along the order: `from` a lower bound on the values, `beyond`
   * the values past an upper one (nulls pass both, as they come last). A
   * range of values is then two searches and a walk of its documents, which
   * reads no value: a test of every document (a pass over a million values)
   * costs more unless the range holds most of them, and reading each value
   * of the range where the order lays it is a miss of the processor's caches
   * a document. The order must not change during the walk.
   */
  between (from: (doc: number) => boolean, beyond: (doc: number) => boolean, visit: (doc: number) => void): void {
    const first = this.firstPassing(from)
    const end = this.firstPassing(beyond)
    const { chunks, counts } = this
    for (let c = first.chunk, o = first.offset; c <= end.chunk && c < chunks.length; c++, o = 0) {
      const chunk = chunks[c]
      const stop = c === end.chunk ? end.offset : counts[c]
      for (let i = o; i < stop; i++) visit(chunk[i])
    }
  }

  /** The position of the first document `test` holds for (it fails, then holds, along the order); past the end when none. */
  private firstPassing (test: (doc: number) => boolean): { chunk: number, offset: number } {
    const { chunks, counts } = this
    // The first chunk whose last document passes holds the first that does.
    let low = 0
    let high = chunks.length
    while (low < high) {
      const middle = (low + high) >>> 1
      if (test(chunks[middle][counts[middle] - 1])) high = middle
      else low = middle + 1
    }
    if (low === chunks.length) return { chunk: low, offset: 0 }
    const chunk = chunks[low]
    let offset = 0
    let top = counts[low] - 1
    while (offset < top) {
      const middle = (offset + top) >>> 1
      if (test(chunk[middle])) top = middle
      else offset = middle + 1
    }
    return { chunk: low, offset }
  }

  /**
   * Visits in descending order (compare reversed: nulls first, the tie-break
   * descending too), as a newest-first walk over creation dates wants; stops
   * when visit answers false. The order must not change during the walk.
   */
  reversed (visit: (doc: number) => boolean | void): void {
    const { chunks, counts } = this
    for (let c = chunks.length - 1; c >= 0; c--) {
      const chunk = chunks[c]
      for (let i = counts[c] - 1; i >= 0; i--) if (visit(chunk[i]) === false) return
    }
  }

  /**
   * Visits in the order of SQL `value DESC NULLS LAST, tie-break ASC`: groups
   * of equal non-null value from the highest to the lowest, each group in
   * ascending tie-break order (ascending `compare` within the group), then
   * the null documents in ascending order. Stops when visit answers false;
   * the order must not change during the walk.
   *
   * The walk goes backwards over the groups and forwards inside each: from
   * the last document of a group, the group's first is found by a binary
   * search (`firstFrom`), so a page from the top of a group of 100,000 ties
   * costs a search and the page, not a walk back over the group.
   */
  descending (visit: (doc: number) => boolean | void): void {
    const { chunks, counts } = this
    if (chunks.length === 0) return
    const lastChunk = chunks.length - 1
    const last = counts[lastChunk] - 1
    // Where the nulls start: the end of the order when the last document is not null.
    // (firstFrom's test takes a second document, which null-ness ignores.)
    const nulls = this.isNull(chunks[lastChunk][last])
      ? this.firstFrom(lastChunk, last, this.isNull, -1)
      : { chunk: chunks.length, offset: 0 }
    // The last document of the group to visit next: the one before the nulls, then the one before each group.
    let c = nulls.chunk
    let o = nulls.offset - 1
    if (o < 0 && --c >= 0) o = counts[c] - 1
    while (c >= 0) {
      const start = this.firstFrom(c, o, this.sameValue, chunks[c][o])
      if (!this.walk(start.chunk, start.offset, c, o, visit)) return
      c = start.chunk
      o = start.offset - 1
      if (o < 0 && --c >= 0) o = counts[c] - 1
    }
    if (nulls.chunk < chunks.length) this.walk(nulls.chunk, nulls.offset, lastChunk, last, visit)
  }

  /**
   * The first position at or before (c, o) from which on `test(doc, y)`
   * holds up to (c, o), given it holds at (c, o).
   *
   * Why a binary search finds it: `test` is either "same value as y" (y the
   * document at (c, o)) or "is null". In the ascending order the documents
   * of one value are contiguous (compare sorts by value first, and all nulls
   * count as one value, last), and the position (c, o) is in y's group. So
   * over the positions up to (c, o) the test is false before the group's
   * first position and true from it on: monotone, false…false true…true,
   * whatever lies after (c, o) (which is why no `compare` is needed). Then
   * the first chunk whose last document passes holds the boundary (every
   * earlier chunk ends before it, so lies wholly before it), and inside that
   * chunk the first passing offset is it.
   *
   * Before searching, the document just before (c, o) is tried: a group of
   * one (distinct values) is then answered with one test, and a walk over a
   * million distinct values does not pay a search per document. When the
   * chunk's own first document passes, the search goes over the earlier
   * chunks; otherwise it stays inside this one.
   */
  private firstFrom (c: number, o: number, test: (doc: number, y: number) => boolean, y: number): { chunk: number, offset: number } {
    const { chunks, counts } = this
    let chunk = chunks[c]
    if (o > 0 && !test(chunk[o - 1], y)) return { chunk: c, offset: o }
    let high = o
    if (test(chunk[0], y)) {
      // The boundary is in the first chunk from which on the last document passes (chunk c's does).
      let low = 0
      let top = c
      while (low < top) {
        const middle = (low + top) >>> 1
        if (test(chunks[middle][counts[middle] - 1], y)) top = middle
        else low = middle + 1
      }
      if (low === c) return { chunk: c, offset: 0 }
      c = low
      chunk = chunks[c]
      high = counts[c] - 1
    }
    // Inside chunk c the test passes at `high`; find the first passing offset.
    let low = 0
    while (low < high) {
      const middle = (low + high) >>> 1
      if (test(chunk[middle], y)) high = middle
      else low = middle + 1
    }
    return { chunk: c, offset: low }
  }

  /** Visits from (c, o) to (toChunk, toOffset), both included; answers false when visit stopped the walk. */
  private walk (c: number, o: number, toChunk: number, toOffset: number, visit: (doc: number) => boolean | void): boolean {
    const { chunks, counts } = this
    for (; c <= toChunk; c++, o = 0) {
      const chunk = chunks[c]
      const end = c === toChunk ? toOffset + 1 : counts[c]
      for (let i = o; i < end; i++) if (visit(chunk[i]) === false) return false
    }
    return true
  }

  /** Bytes held (estimate): the chunks' numbers, with room, and each chunk's array objects and slots; the flat orders kept. */
  get byteSize (): number {
    let flat = 0
    for (const kept of this.flats.values()) flat += kept.byteSize
    return this.chunks.length * (this.chunkSize * 4 + CHUNK_OVERHEAD) + 64 + flat
  }
}

/** The most documents a chunk holds unless told otherwise: copying 1,024 numbers is well under a microsecond. */
export const DEFAULT_CHUNK_SIZE = 1024

/** What a chunk costs besides its numbers: a typed array and its buffer objects, and its slots in the two lists. */
const CHUNK_OVERHEAD = 160
