import { othersOnly, type Notifications } from '../db/notifications.js'
import type { Queryable } from '../db/db.js'

/** What a query's matches add up to: `items_total`, and the facets asked for. */
export interface Totals {
  total: number
  facets?: Record<string, Record<string, number>>
}

/** The notification topic of a catalogue write (core/db/notifications.ts). */
export const CATALOG_CHANGED = 'catalog'

/** Queries whose totals are kept (the least recently used go first). */
const MAX_ENTRIES = 5_000

/** Kept totals: exact while no write happened (`generation`) and no object became effective or expired (`until`, ms). */
interface Entry extends Totals { generation: number, until: number }

/**
 * `items_total` (and facets) without counting every match for every page.
 * Counting is O(matches) — 100 ms at 100,000 talks — while a page is a few
 * rows of an index; so the totals of a query are kept, keyed by the query
 * (its SQL and parameters, the caller's principals among them), and stay
 * exact:
 * - every catalogue write makes them all stale: this process's writes at
 *   once (`changed`), other processes' through a notification sent in the
 *   write's transaction — the totals of a query are never older than the
 *   newest write its caller could have seen;
 * - the effective-date filter depends on "now": totals are kept only until
 *   the next moment an object becomes effective or expires (one indexed
 *   look-up per generation of the catalogue);
 * - while notifications are not heard (the listening connection is lost),
 *   nothing is kept.
 */
export class CatalogCounts {
  private generation = 0
  private readonly entries = new Map<string, Entry>()
  /** Until when (ms) the catalogue's effective/expiry state holds, for this generation. */
  private stable: { generation: number, until: number } | null = null

  /** `ownWrites`: the key of this process's notifications, whose writes `changed` already applied (ContentStore.writerId). */
  constructor (private readonly notifications: Notifications, ownWrites?: string) {
    notifications.onChange(CATALOG_CHANGED, othersOnly(ownWrites, () => { this.changed() }))
  }

  /** A catalogue write: every kept total is stale. */
  changed (): void {
    this.generation++
    this.entries.clear()
  }

  /**
   * The totals of the query `key`, computed by `compute` unless kept ones
   * are still exact at `now`.
   */
  async totals (db: Queryable, key: string, now: Date, compute: () => Promise<Totals>): Promise<Totals> {
    if (!this.notifications.listening) return await compute()
    const generation = this.generation
    const kept = this.entries.get(key)
    if (kept !== undefined && kept.generation === generation && now.getTime() < kept.until) {
      // Most recently used last.
      this.entries.delete(key)
      this.entries.set(key, kept)
      return kept
    }
    const until = await this.stableUntil(db, generation, now)
    const totals = await compute()
    // A write heard while counting leaves these totals unkept: they may predate it.
    if (generation === this.generation) {
      this.entries.set(key, { ...totals, generation, until })
      if (this.entries.size > MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value!)
    }
    return totals
  }

  /** The next moment an object becomes effective or expires, after `now` (ms; Infinity when none will). */
  private async stableUntil (db: Queryable, generation: number, now: Date): Promise<number> {
    if (this.stable !== null && this.stable.generation === generation && now.getTime() < this.stable.until) return this.stable.until
    const { rows: [next] } = await db.query<{ at: Date | null }>(`SELECT least(
      (SELECT min("effective") FROM catalog WHERE "effective" > $1),
      (SELECT min("expires") FROM catalog WHERE "expires" > $1)) AS at`, [now])
    const until = next.at === null ? Infinity : new Date(next.at).getTime()
    if (generation === this.generation) this.stable = { generation, until }
    return until
  }
}
