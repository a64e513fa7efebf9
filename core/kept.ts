import { heapBytes, stringBytes } from './heap-size.js'
import { RecencyMap } from './recency.js'

/** A value kept, until `until` (ms; Infinity when only a write can end it), the bytes it and its key hold, and its tags (`clearTagged`). */
interface Entry<T> { value: T, until: number, bytes: number, tags: readonly string[] }

/** What a tag costs in the index of tags: its slot in the entry's list and the key's entry in the tag's set. */
const TAG_BYTES = 64

/** A Map entry and its Entry object, besides the key and the value. */
export const ENTRY_BYTES = 96

/** What a read found: its value, until when it holds (ms; Infinity when only a write can end it), and whether it may be kept beyond the callers waiting for it. */
export interface Found<T> { value: T, until?: number, keep?: boolean }

/**
 * What a cache tells the metrics (plugins/app/metrics.ts): its entries and the bytes they hold
 * (when this process holds and counts them), and its look-ups since start, those that found a
 * value kept and those that did not.
 */
export interface CacheFigures { entries?: number, bytes?: number, hits: number, misses: number }

/** A read under way: the callers that ask for the same key meanwhile wait for it. */
type Reading<T> = Promise<Required<Found<T>>>

/**
 * What a process keeps of what it read (core/catalog/kept-results.ts,
 * core/content/kept-objects.ts): the least recently used first
 * (core/recency.ts), within a budget in bytes — each entry counted as its
 * key, its value (`size`: what the value holds of the heap,
 * core/heap-size.ts, unless its owner knows better what is its own) and the
 * entry itself. A value larger than the budget is not kept. Its owner clears it at every write it hears of.
 * Every cache of the service keeps its values here, so that each is bounded
 * in bytes, not only in entries (docs/api.md, "Bounded work per request").
 *
 * A crowd asks the same at once: after every write, every reader of a
 * popular page misses it together. `read` sends its statement once: callers
 * that ask for a key while a read of it is under way wait for that read
 * (Varnish's request coalescing, for one process). A write ends the sharing
 * too: after `clear`, nobody joins a read that began before it, and what such
 * a read finds is given to its callers but not kept (it may predate the write).
 */
export class Kept<T> {
  private readonly entries = new RecencyMap<string, Entry<T>>()
  private readonly reading = new Map<string, Reading<T>>()
  /** The keys of the values that carry each tag. */
  private readonly tagged = new Map<string, Set<string>>()
  private used = 0
  private hits = 0
  private misses = 0

  /**
   * `budget`: bytes; `size`: the bytes a value holds (its key, the entry and
   * its tags are added); `tagsOf`: what a value depends on, by name (the uids
   * of the objects it shows), so that a write clears the values that carry
   * its tags without looking at the others (`clearTagged`).
   */
  constructor (private readonly budget: number, private readonly size: (value: T) => number = heapBytes,
    private readonly tagsOf: (value: T) => readonly string[] = () => []) {}

  /** The value of `key` unless none is kept or it ended at `now` (ms). */
  get (key: string, now = 0): T | undefined {
    const kept = this.entries.use(key)
    if (kept === undefined || now >= kept.until) {
      this.misses++
      return undefined
    }
    this.hits++
    return kept.value
  }

  /**
   * The value of `key` at `now` (ms): kept, or found by the read of it under
   * way when that holds at `now`, or else read by `read` (which the callers
   * asking meanwhile then wait for) and kept if it may be and no write was
   * heard while it ran. A read that fails fails for its waiting callers too, and nothing is kept.
   */
  async read (key: string, now: number, read: () => Promise<Found<T>>): Promise<T> {
    const kept = this.get(key, now)
    if (kept !== undefined) return kept
    const underWay = this.reading.get(key)
    if (underWay !== undefined) {
      const found = await underWay
      // Rare: an object became effective or expired between the read's "now" and this caller's.
      return now < found.until ? found.value : await this.read(key, now, read)
    }
    const reading: Reading<T> = read().then(({ value, until = Infinity, keep = true }) => ({ value, until, keep }))
    this.reading.set(key, reading)
    try {
      const found = await reading
      // Still registered: no write was heard since the read began (`clear` forgets every read under way).
      if (this.reading.get(key) === reading && found.keep) this.set(key, found.value, found.until)
      return found.value
    } finally {
      if (this.reading.get(key) === reading) this.reading.delete(key)
    }
  }

  set (key: string, value: T, until = Infinity): void {
    const tags = this.tagsOf(value)
    const bytes = ENTRY_BYTES + stringBytes(key) + this.size(value) + tags.length * TAG_BYTES
    if (bytes > this.budget) {
      this.delete(key)
      return
    }
    // A value replaced is not deleted from the map first (core/recency.ts says why): its bytes and tags are counted anew.
    const before = this.entries.peek(key)
    if (before !== undefined) this.unfile(key, before)
    this.entries.set(key, { value, until, bytes, tags })
    this.used += bytes
    for (const tag of tags) {
      const keys = this.tagged.get(tag)
      if (keys === undefined) this.tagged.set(tag, new Set([key]))
      else keys.add(key)
    }
    while (this.used > this.budget && this.entries.size > 0) this.delete(this.entries.oldestKey()!)
  }

  /** The bytes kept, as `set` counted them (at most the budget). */
  get bytes (): number {
    return this.used
  }

  /** Its entries, bytes and look-ups, for the metrics. */
  figures (): CacheFigures {
    return { entries: this.entries.size, bytes: this.used, hits: this.hits, misses: this.misses }
  }

  /** A write: nothing kept holds, and no read under way may be joined or kept. */
  clear (): void {
    this.entries.clear()
    this.reading.clear()
    this.tagged.clear()
    this.used = 0
  }

  /**
   * A write that changed only what carries one of these tags: the values
   * that carry one are no longer kept, the others still hold (a write's work
   * is what it changed, not what is kept). No read under way may be joined
   * or kept after it.
   */
  clearTagged (tags: Iterable<string>): void {
    for (const tag of tags) {
      const keys = this.tagged.get(tag)
      if (keys === undefined) continue
      for (const key of keys) this.delete(key)
    }
    this.reading.clear()
  }

  /** Forgets the values of these keys; the others still hold. */
  forget (keys: Iterable<string>): void {
    for (const key of keys) this.delete(key)
  }

  /**
   * A write that changed only what the values `affected` tells depend on:
   * those are no longer kept, the others still hold. No read under way may be
   * joined or kept after it (what it will find is not known yet).
   */
  clearWhere (affected: (value: T) => boolean): void {
    // Deleting the entry just visited is safe (core/recency.ts).
    this.entries.forEach((kept, key) => { if (affected(kept.value)) this.delete(key) })
    this.reading.clear()
  }

  private delete (key: string): void {
    const kept = this.entries.peek(key)
    if (kept === undefined) return
    this.entries.delete(key)
    this.unfile(key, kept)
  }

  /** Takes an entry's bytes and tags out of the counts. */
  private unfile (key: string, kept: Entry<T>): void {
    this.used -= kept.bytes
    for (const tag of kept.tags) {
      // A tag given twice was filed once.
      const keys = this.tagged.get(tag)
      if (keys === undefined) continue
      keys.delete(key)
      if (keys.size === 0) this.tagged.delete(tag)
    }
  }
}
