/** Entries of a full segment (4 MiB): copying one, to grow or compact it, is a millisecond or two. */
export const SEGMENT_ENTRIES = 1 << 20
/** The first segment's size; it doubles up to a full segment, so that a small catalogue holds little. */
const FIRST_ENTRIES = 4096
/** Before each run: its document and its size, so that a segment can be walked run by run. */
const HEADER = 2
/** A segment is compacted when more than half of it (and more than this many entries, or a quarter of a segment) is garbage. */
const COMPACT_FROM = 1024

/**
 * The runs of the text index's documents (their lexeme ids, and positions
 * where they have gaps), in segments of a fixed size rather than one array:
 * one array of every document's run (some 100 MB at 100 000 talks) had to be
 * copied whole to grow, and again to drop its garbage, which held the process
 * for 650 ms under the varied traffic. A segment is never copied whole but
 * while it is small; a new run goes to the last segment, or a new one; a
 * segment more than half garbage has its live runs moved to the last one and
 * is freed. So a change costs its own size, amortised, and no step more than
 * a segment's copy. A run never spans two segments (one larger than a segment
 * gets a segment of its own).
 *
 * The caller keeps where each document's run is (`segment`, `offset`, after
 * `allocate`) and reads it as `segments[segment][offset + i]`.
 */
export class PositionsArena {
  readonly segments: Int32Array[] = []
  /** Per segment: entries used (headers included) and of them garbage. */
  private readonly used: number[] = []
  private readonly garbage: number[] = []
  /** Indexes of freed segments, used again before new ones: a document's segment index stays small. */
  private readonly freed: number[] = []
  /** The segment new runs go to. */
  private last: number
  /** Where the last `allocate` put its run. */
  segment = 0
  offset = 0

  private readonly compactFrom: number

  constructor (private readonly segmentEntries = SEGMENT_ENTRIES) {
    this.compactFrom = Math.min(COMPACT_FROM, segmentEntries >>> 2)
    this.last = this.open(Math.min(FIRST_ENTRIES, segmentEntries))
  }

  /** Room for document `doc`'s run of `size` entries: sets `segment` and `offset`. Its previous run must have been released. */
  allocate (doc: number, size: number): void {
    const needed = size + HEADER
    let at = this.last
    let segment = this.segments[at]
    if (this.used[at] + needed > segment.length) {
      if (this.used[at] + needed <= this.segmentEntries) {
        // A small last segment grows, by doubling: only the first ever is small.
        const grown = new Int32Array(Math.min(this.segmentEntries, Math.max(this.used[at] + needed, segment.length * 2)))
        grown.set(segment.subarray(0, this.used[at]))
        this.segments[at] = segment = grown
      } else if (needed > this.segmentEntries) {
        // A run larger than a segment: a segment of its own, never the last.
        at = this.open(needed)
        segment = this.segments[at]
      } else {
        at = this.last = this.open(this.segmentEntries)
        segment = this.segments[at]
      }
    }
    const start = this.used[at]
    segment[start] = doc
    segment[start + 1] = size
    this.used[at] = start + needed
    this.segment = at
    this.offset = start + HEADER
  }

  /** Marks a run of `size` entries in `segment` garbage; answers whether that segment should now be compacted. */
  release (segment: number, size: number): boolean {
    this.garbage[segment] += size + HEADER
    if (this.garbage[segment] === this.used[segment] && segment !== this.last) {
      this.free(segment)
      return false
    }
    return segment !== this.last && this.garbage[segment] >= this.compactFrom && this.garbage[segment] * 2 > this.used[segment]
  }

  /**
   * Moves the live runs of `segment` to the last segment and frees it:
   * `isAt(doc, offset)` tells whether the run at `offset` is still `doc`'s,
   * `moved(doc)` is told each move (the new place in `segment`, `offset`).
   */
  compact (from: number, isAt: (doc: number, offset: number) => boolean, moved: (doc: number) => void): void {
    const source = this.segments[from]
    const end = this.used[from]
    for (let at = 0; at < end;) {
      const doc = source[at]
      const size = source[at + 1]
      const offset = at + HEADER
      if (isAt(doc, offset)) {
        this.allocate(doc, size)
        this.segments[this.segment].set(source.subarray(offset, offset + size), this.offset)
        moved(doc)
      }
      at = offset + size
    }
    this.free(from)
  }

  /** Bytes held by the segments. */
  get byteLength (): number {
    let bytes = 0
    for (const segment of this.segments) bytes += segment.byteLength
    return bytes
  }

  private open (entries: number): number {
    const at = this.freed.pop() ?? this.segments.length
    this.segments[at] = new Int32Array(entries)
    this.used[at] = 0
    this.garbage[at] = 0
    return at
  }

  private free (segment: number): void {
    this.segments[segment] = EMPTY
    this.used[segment] = 0
    this.garbage[segment] = 0
    this.freed.push(segment)
  }
}

const EMPTY = new Int32Array(0)
