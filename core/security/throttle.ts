import type { Queryable } from '../db/db.js'

/**
 * Counts failures per key (a user, an unknown login string, a client
 * address) in a sliding window, in PostgreSQL: every process of the service
 * counts the same failures, and a restart forgets nothing. `retryAfter` tells
 * how long the most throttled of some keys must wait.
 */
export class FailureCounts {
  constructor (private readonly db: Queryable, private readonly windowMs: number) {}

  /**
   * Seconds to wait before trying again: for each key that has reached its
   * limit, until the oldest failure that still counts leaves the window; the
   * largest of them, or 0 when every key may try. One query for all keys.
   */
  async retryAfter (limits: Array<[key: string, limit: number]>, now = new Date()): Promise<number> {
    const deepest = Math.max(...limits.map(([, limit]) => limit))
    const { rows } = await this.db.query<{ key: string, times: Date[] }>(`SELECT k.key, recent.times
      FROM unnest($1::text[]) AS k(key), LATERAL (
        SELECT coalesce(array_agg(at ORDER BY at DESC), '{}') AS times FROM (
          SELECT at FROM login_failures WHERE key = k.key AND at > $2 AND at <= $3 ORDER BY at DESC LIMIT $4) latest) recent`,
    [limits.map(([key]) => key), new Date(now.getTime() - this.windowMs), now, deepest])
    const times = new Map(rows.map(r => [r.key, r.times]))
    let wait = 0
    for (const [key, limit] of limits) {
      const recent = times.get(key) ?? []
      if (recent.length < limit) continue
      // The limit-th most recent failure is the oldest that still counts.
      wait = Math.max(wait, Math.ceil((new Date(recent[limit - 1]).getTime() + this.windowMs - now.getTime()) / 1000))
    }
    return wait
  }

  /** Records a failure for each key; failures that left the window go (nobody asks for them again). */
  async fail (keys: string[], now = new Date()): Promise<void> {
    await this.db.query('INSERT INTO login_failures (key, at) SELECT unnest($1::text[]), $2', [keys, now])
    await this.db.query('DELETE FROM login_failures WHERE at <= $1', [new Date(now.getTime() - this.windowMs)])
  }

  /** Forgets a key's failures (its user logged in). */
  async reset (key: string): Promise<void> {
    await this.db.query('DELETE FROM login_failures WHERE key = $1', [key])
  }
}
