import { othersOnly, type Notifications } from '../db/notifications.js'
import type { Queryable } from '../db/db.js'
import { Kept } from '../kept.js'

/** What a query's matches add up to: `items_total`, and the facets asked for. */
export interface Totals {
  total: number
  facets?: Record<string, Record<string, number>>
}

/** The notification topic of a catalogue write (core/db/notifications.ts). */
export const CATALOG_CHANGED = 'catalog'

/** Queries whose totals are kept (the least recently used go first): a few hundred kB. */
const MAX_TOTALS = 5_000
/**
 * Rows of pages kept, all pages together (the least recently used go first):
 * 400 pages of 25 summaries, a few MB. A page larger than this is not kept.
 */
const MAX_PAGE_ROWS = 10_000

/** The columns the next moment an object becomes effective or expires is read from (`stableUntil`). */
const STABLE_DEPENDS_ON = ['effective', 'expires']

/**
 * What catalogue queries found, kept for the next caller who asks the same:
 * ZCatalog's results stay in Plone's caches keyed by the catalogue's counter,
 * which every catalogue change moves on; these are keyed by the query (its SQL
 * and parameters, the caller's principals among them) and stay exact:
 * - every catalogue write makes them stale (`changed` says which): this
 *   process's writes at once, other processes' when the notification sent in
 *   the write's transaction arrives — milliseconds after its commit, a window
 *   in which a caller who wrote through another process may still be answered
 *   what was kept before (as a ZEO client answers from its cache until the
 *   invalidation arrives);
 * - the effective-date filter depends on "now": a result is kept only until
 *   the next moment an object becomes effective or expires (one indexed
 *   look-up after each write);
 * - while notifications are not heard (the listening connection is lost),
 *   nothing is kept.
 * Callers who ask the same while it is being read wait for that read (core/kept.ts):
 * after a write, the crowd reading a popular listing sends its page and its
 * count once, not once each.
 * Two kinds are kept: a query's totals (`items_total` and facets: counting is
 * O(matches), 100 ms at 100,000 talks, while a page is a few rows of an
 * index), shared by all its pages, and the pages themselves (frozen: every
 * caller who asks the same reads the same rows).
 */
export class KeptResults {
  private readonly totalsKept = new Kept<{ totals: Totals, dependsOn: readonly string[] }>(MAX_TOTALS)
  private readonly pagesKept = new Kept<ReadonlyArray<Record<string, unknown>>>(MAX_PAGE_ROWS, rows => Math.max(1, rows.length))
  /** Until when (ms) the catalogue's effective/expiry state holds: one value, kept until that moment or the next write. */
  private readonly stable = new Kept<number>(1)

  /** `ownWrites`: the key of this process's notifications, whose writes `changed` already applied (ContentStore.writerId). */
  constructor (private readonly notifications: Notifications, ownWrites?: string) {
    notifications.onChange(CATALOG_CHANGED, othersOnly(ownWrites, columns => { this.changed(columns) }))
  }

  /**
   * A catalogue write: every page kept is stale, and so is every read under
   * way. When the write says which columns it changed (an object's update),
   * the totals of queries that neither filter nor count facets on any of them
   * still hold: an edited description moves no object in or out of a listing.
   */
  changed (columns?: readonly string[]): void {
    const affects = (dependsOn: readonly string[]): boolean => columns === undefined || columns.some(column => dependsOn.includes(column))
    this.pagesKept.clear()
    this.totalsKept.clearWhere(totals => affects(totals.dependsOn))
    if (affects(STABLE_DEPENDS_ON)) this.stable.clear()
  }

  /**
   * The totals of the query `key`, computed by `compute` unless kept ones are
   * still exact at `now`. `dependsOn`: the catalogue columns its matches and
   * facets are decided by (a write that changes none of them leaves them kept).
   */
  async totals (db: Queryable, key: string, dependsOn: readonly string[], now: Date, compute: () => Promise<Totals>): Promise<Totals> {
    return (await this.kept(this.totalsKept, db, key, now, async () => ({ totals: await compute(), dependsOn }))).totals
  }

  /** The rows of the page `key`, read by `read` unless kept ones are still exact at `now`; frozen either way. */
  async page (db: Queryable, key: string, now: Date, read: () => Promise<Array<Record<string, unknown>>>): Promise<ReadonlyArray<Record<string, unknown>>> {
    return await this.kept(this.pagesKept, db, key, now, async () => {
      const rows = await read()
      for (const row of rows) Object.freeze(row)
      return Object.freeze(rows)
    })
  }

  /** Kept, or computed once for every caller asking the same meanwhile (core/kept.ts); nothing is kept or shared while notifications are not heard. */
  private async kept<T> (kind: Kept<T>, db: Queryable, key: string, now: Date, compute: () => Promise<T>): Promise<T> {
    if (!this.notifications.listening) return await compute()
    return await kind.read(key, now.getTime(), async () => {
      const until = await this.stableUntil(db, now)
      return { value: await compute(), until }
    })
  }

  /** The next moment an object becomes effective or expires, after `now` (ms; Infinity when none will). */
  private async stableUntil (db: Queryable, now: Date): Promise<number> {
    return await this.stable.read('', now.getTime(), async () => {
      const { rows: [next] } = await db.query<{ at: Date | null }>(`SELECT least(
        (SELECT min("effective") FROM catalog WHERE "effective" > $1),
        (SELECT min("expires") FROM catalog WHERE "expires" > $1)) AS at`, [now])
      const until = next.at === null ? Infinity : new Date(next.at).getTime()
      return { value: until, until }
    })
  }
}
