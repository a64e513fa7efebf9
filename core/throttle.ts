/**
 * Counts failures per key (a login name, a client address) in a sliding
 * window; `retryAfter` tells how long a key that reached its limit must wait.
 * Kept in memory: a restart forgets it, and several web processes each count
 * for themselves (docs/operations.md).
 */
export class FailureThrottle {
  private readonly failures = new Map<string, number[]>()

  constructor (private readonly limit: number, private readonly windowMs: number) {}

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
    return Math.max(1, Math.ceil((times[times.length - this.limit] + this.windowMs - now) / 1000))
  }

  fail (key: string, now = Date.now()): void {
    this.failures.set(key, [...this.recent(key, now), now])
  }

  reset (key: string): void {
    this.failures.delete(key)
  }
}
