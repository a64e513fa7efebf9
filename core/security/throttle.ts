import type { Db, Queryable } from '../db/db.js'

/** At most `limit` failed attempts under `key` (an account, an address, a device) in the window. */
export interface Budget { key: string, limit: number }

/** An attempt taken from its budgets: it counts as a failure of each until `refund` says it succeeded. */
export interface Reservation { keys: string[], at: Date }

/** Thrown inside the reservation's transaction to roll it back: some budget is spent. */
class Spent extends Error {
  constructor (readonly retryAfter: number) { super('spent') }
}

/**
 * Budgets of failed login attempts in a sliding window, in PostgreSQL (infra/migrations/013):
 * every process of the service spends the same budgets, and a restart forgets nothing.
 *
 * An attempt is taken from its budgets BEFORE its password is checked, under the budgets' row
 * locks, and given back when it succeeds: parallel attempts cannot all pass a check that none of
 * them has been counted in yet, so no budget is ever exceeded, however many run at once. While
 * its password is checked (tens of milliseconds) an attempt holds one unit of its budgets.
 *
 * Storage is bounded: a budget is one row of at most `limit` timestamps (a spent budget refuses
 * without writing), and rows whose newest failure left the window are deleted.
 */
export class FailureCounts {
  constructor (private readonly db: Db, private readonly windowMs: number) {}

  /**
   * Takes one attempt from every budget, or from none when any of them is spent: the
   * reservation, or the seconds until every spent budget has room again. Keys must be distinct.
   */
  async reserve (budgets: Budget[], now = new Date()): Promise<Reservation | { retryAfter: number }> {
    // One lock order for every caller, so that two attempts sharing budgets cannot deadlock.
    const ordered = [...budgets].sort((a, b) => a.key < b.key ? -1 : a.key > b.key ? 1 : 0)
    const keys = ordered.map(budget => budget.key)
    const limits = ordered.map(budget => budget.limit)
    const cutoff = new Date(now.getTime() - this.windowMs)
    try {
      await this.db.transaction(async tx => {
        // A new budget takes its first failure; an existing one drops the failures that left
        // the window and takes this one if it has room (the row stays locked either way).
        const { rowCount } = await tx.query(`INSERT INTO login_failures AS f (key, failures, last_failure)
          SELECT key, ARRAY[$3::timestamptz], $3 FROM unnest($1::text[]) WITH ORDINALITY AS b(key, n) ORDER BY n
          ON CONFLICT (key) DO UPDATE SET
            failures = ARRAY(SELECT t FROM unnest(f.failures) AS t WHERE t > $4 ORDER BY t) || $3::timestamptz,
            last_failure = greatest(f.last_failure, $3)
          WHERE (SELECT count(*) FROM unnest(f.failures) AS t WHERE t > $4)
            < (SELECT b.lim FROM unnest($1::text[], $2::int[]) AS b(key, lim) WHERE b.key = f.key)`,
        [keys, limits, now, cutoff])
        if (rowCount < keys.length) throw new Spent(await this.waitFor(tx, ordered, now))
      })
    } catch (err) {
      if (err instanceof Spent) return { retryAfter: err.retryAfter }
      throw err
    }
    await this.db.query('DELETE FROM login_failures WHERE last_failure <= $1', [cutoff])
    return { keys, at: now }
  }

  /** The attempt succeeded: it was no failure, and its budgets get their unit back. */
  async refund ({ keys, at }: Reservation): Promise<void> {
    // One occurrence only: another attempt may have been reserved at the same millisecond.
    await this.db.query(`UPDATE login_failures
      SET failures = failures[:array_position(failures, $2::timestamptz) - 1] || failures[array_position(failures, $2::timestamptz) + 1:]
      WHERE key = ANY($1::text[]) AND $2::timestamptz = ANY(failures)`, [keys, at])
  }

  /**
   * Seconds until each spent budget has room: its limit-th newest failure leaves the window.
   * At least one second, so that a 429 always says to wait.
   */
  private async waitFor (tx: Queryable, budgets: Budget[], now: Date): Promise<number> {
    const { rows } = await tx.query<{ key: string, failures: Date[] }>('SELECT key, failures FROM login_failures WHERE key = ANY($1::text[])', [budgets.map(b => b.key)])
    const failures = new Map(rows.map(row => [row.key, row.failures.map(at => new Date(at).getTime()).sort((a, b) => b - a)]))
    let wait = 1
    for (const { key, limit } of budgets) {
      const recent = (failures.get(key) ?? []).filter(at => at > now.getTime() - this.windowMs)
      if (recent.length < limit) continue
      wait = Math.max(wait, Math.ceil((recent[limit - 1] + this.windowMs - now.getTime()) / 1000))
    }
    return wait
  }
}
