/** A value kept, until `until` (ms; Infinity when only a write can end it). */
interface Entry<T> { value: T, until: number }

/**
 * What a process keeps of what it read (core/catalog/kept-results.ts,
 * core/content/kept-objects.ts): the least recently used first, within a
 * budget of `size` units. A value larger than the budget is not kept. Its
 * owner clears it at every write it hears of, and keeps nothing a read found
 * if a write was heard while it read.
 */
export class Kept<T> {
  private readonly entries = new Map<string, Entry<T>>()
  private used = 0

  constructor (private readonly budget: number, private readonly size: (value: T) => number = () => 1) {}

  /** The value of `key` unless none is kept or it ended at `now` (ms). */
  get (key: string, now = 0): T | undefined {
    const kept = this.entries.get(key)
    if (kept === undefined || now >= kept.until) return undefined
    // Most recently used last.
    this.entries.delete(key)
    this.entries.set(key, kept)
    return kept.value
  }

  set (key: string, value: T, until = Infinity): void {
    const size = this.size(value)
    if (size > this.budget) return
    this.delete(key)
    this.entries.set(key, { value, until })
    this.used += size
    for (const [oldest, kept] of this.entries) {
      if (this.used <= this.budget) break
      this.entries.delete(oldest)
      this.used -= this.size(kept.value)
    }
  }

  clear (): void {
    this.entries.clear()
    this.used = 0
  }

  private delete (key: string): void {
    const kept = this.entries.get(key)
    if (kept === undefined) return
    this.entries.delete(key)
    this.used -= this.size(kept.value)
  }
}
