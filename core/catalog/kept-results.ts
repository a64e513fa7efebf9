import { othersOnly, type Notifications } from '../db/notifications.js'
import type { Queryable } from '../db/db.js'
import { heapBytes } from '../heap-size.js'
import { type CacheFigures, Kept } from '../kept.js'
import { type CatalogRow, KeptRows } from './kept-rows.js'

/** What a query's matches add up to: `items_total`, and the facets asked for. */
export interface Totals {
  total: number
  facets?: Record<string, Record<string, number>>
}

/** The notification topic of a catalogue write (core/db/notifications.ts). */
export const CATALOG_CHANGED = 'catalog'

/**
 * The totals kept, in bytes (core/kept.ts; the least recently used go
 * first): some 20 000 queries' counts, fewer with facets — a facet over tags
 * holds a count for each tag its matches carry.
 */
const TOTALS_BYTES = 8 * 1024 * 1024
/**
 * Rows of results kept, all together, in bytes (the least recently used go
 * first): some 600 windows of 50 summaries, fewer when a query asks for every
 * metadata column (`metadata_fields=_all`: 10 000 characters of description
 * a row). A page larger than this is not kept.
 */
const PAGE_BYTES = 32 * 1024 * 1024
/** One moment (a number) under one key. */
const STABLE_BYTES = 1024
/** Rows read and kept together (`page`): two pages of 25. */
const PAGE_WINDOW = 50

/**
 * How many rows a result has, when `found` rows read from row `from` on,
 * where `asked` were asked for, show it: fewer came back, so the result ends
 * among them (unless none did and they start beyond its end).
 */
export const endShown = (found: number, from: number, asked: number): number | undefined =>
  found < asked && (found > 0 || from === 0) ? from + found : undefined

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
 * Three kinds are kept: a query's totals (`items_total` and facets: counting is
 * O(matches), 100 ms at 100,000 talks, while a page is a few rows of an
 * index), shared by all its pages, and the rows of its pages, in windows
 * (`page`; frozen: every caller who asks the same reads the same rows) —
 * these two for the queries PostgreSQL answers — and catalogue rows by uid
 * for the pages of the resident catalogue (`rows`).
 */
export class KeptResults {
  /** The columns a query depends on are a list every query of one kind shares: only its totals count as its own. */
  private readonly totalsKept = new Kept<{ totals: Totals, dependsOn: readonly string[] }>(TOTALS_BYTES, kept => heapBytes(kept.totals))
  private readonly pagesKept = new Kept<ReadonlyArray<Record<string, unknown>>>(PAGE_BYTES)
  /** Catalogue rows by uid (`rows`). */
  private readonly keptRows: KeptRows
  /** Until when (ms) the catalogue's effective/expiry state holds: one value, kept until that moment or the next write. */
  private readonly stable = new Kept<number>(STABLE_BYTES)

  /**
   * `ownWrites`: the key of this process's notifications, whose writes `changed` already applied (ContentStore.writerId);
   * `rowBytes`: what the catalogue rows by uid may hold (KEPT_ROWS_BYTES).
   */
  constructor (private readonly notifications: Notifications, ownWrites: string | undefined, rowBytes: number) {
    this.keptRows = new KeptRows(rowBytes)
    notifications.onChange(CATALOG_CHANGED, othersOnly(ownWrites, (columns, uids) => { this.changed(columns, uids) }))
  }

  /**
   * A catalogue write: every page kept is stale, and so is every read under
   * way. When the write says which columns it changed (an object's update),
   * the totals of queries that neither filter nor count facets on any of them
   * still hold: an edited description moves no object in or out of a listing.
   */
  changed (columns?: readonly string[], uids?: readonly string[]): void {
    const affects = (dependsOn: readonly string[]): boolean => columns === undefined || columns.some(column => dependsOn.includes(column))
    this.pagesKept.clear()
    this.keptRows.changed(uids)
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

  /**
   * The rows `start` to `start + limit` of a result, read by `read(start,
   * limit)` unless kept ones are still exact at `now`; frozen either way.
   * `key(start, limit)` names a read. Rows are read and kept in windows of
   * `PAGE_WINDOW` rows (from a multiple of it), as Solr reads its
   * `queryResultWindowSize`: the pages that overlap one window — the next page
   * of 25, a page that starts anywhere within it — are one read and one copy
   * of its rows. A page wider than a window is read and kept whole.
   * `end`: how many rows the result has, when what was read shows its end.
   */
  async page (db: Queryable, key: (start: number, limit: number) => string, start: number, limit: number, now: Date,
    read: (start: number, limit: number) => Promise<Array<Record<string, unknown>>>): Promise<{ rows: ReadonlyArray<Record<string, unknown>>, end?: number }> {
    const keep = async (from: number, size: number): Promise<ReadonlyArray<Record<string, unknown>>> =>
      await this.kept(this.pagesKept, db, key(from, size), now, async () => {
        const rows = await read(from, size)
        for (const row of rows) Object.freeze(row)
        return Object.freeze(rows)
      })
    const [from, size] = limit > PAGE_WINDOW ? [start, limit] : [start - start % PAGE_WINDOW, PAGE_WINDOW]
    const windows = [await keep(from, size)]
    // A page that reaches into the next window, unless the result ended in this one.
    if (start + limit > from + size && windows[0].length === size) windows.push(await keep(from + size, size))
    const rows = windows.flat()
    const end = endShown(rows.length, from, windows.length * size)
    return { rows: rows.slice(start - from, start - from + limit), ...(end !== undefined ? { end } : {}) }
  }

  /**
   * Rows by uid as `read` reads them (the resident catalogue's pages: which
   * rows a page shows is decided there), kept until a write changes them;
   * nothing is kept or shared while notifications are not heard.
   */
  async rows (uids: readonly string[], read: (uids: string[]) => Promise<Map<string, CatalogRow>>): Promise<Map<string, CatalogRow>> {
    return await this.keptRows.rows(uids, this.notifications.listening, read)
  }

  /** What each of its caches holds and how often it answered, for the metrics, by the name they are known by there. */
  figures (): Record<string, CacheFigures> {
    return { catalog_totals: this.totalsKept.figures(), catalog_pages: this.pagesKept.figures(), catalog_rows: this.keptRows.figures() }
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
