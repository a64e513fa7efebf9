/**
 * Counts failures per key (a login name, a client address) in a sliding
 * window; `retryAfter` tells how long a key that reached its limit must wait.
 * Kept in memory: a restart forgets it, and several web processes each count
 * for themselves (docs/operations.md).
 */
export class FailureThrottle {
  private readonly failures = new Map<string, number[]>()
  private sweepAbove: number

  /** `minSweep`: how many keys may be tracked before those whose failures all left the window are forgotten. */
  constructor (private readonly limit: number, private readonly windowMs: number, private readonly minSweep = 1000) {
    this.sweepAbove = minSweep
  }

  private recent (key: string, now: number): number[] {
    const times = (this.failures.get(key) ?? []).filter(t => now - t < this.windowMs)
    if (times.length === 0) this.failures.delete(key)
    else this.failures.set(key, times)
    return times
  }

  /** Seconds to wait, or 0 when the key may try. */
  retryAfter (key: string, now = Date.now()): number {
    const times = this.recent(key, now)
    if (times.length < this.limit) return 0
    // The wait ends when the oldest failure that still counts leaves the window.
    return Math.ceil((times[times.length - this.limit] + this.windowMs - now) / 1000)
  }

  fail (key: string, now = Date.now()): void {
    this.failures.set(key, [...this.recent(key, now), now])
    // A key is otherwise only forgotten when it is tried again: every mistyped
    // login name would stay in memory for the life of the process.
    if (this.failures.size > this.sweepAbove) {
      for (const known of [...this.failures.keys()]) this.recent(known, now)
      this.sweepAbove = Math.max(this.minSweep, 2 * this.failures.size)
    }
  }

  reset (key: string): void {
    this.failures.delete(key)
  }

  /** How many keys have failures in memory (for monitoring and tests). */
  get trackedKeys (): number {
    return this.failures.size
  }
}
