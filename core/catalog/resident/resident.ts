import { AsyncResource } from 'node:async_hooks'
import type { Db } from '../../db/db.js'
import type { Notifications } from '../../db/notifications.js'
import type { Logger } from '../../log.js'
import type { Query } from '../../query/model.js'
import { RecencyMap } from '../../recency.js'
import type { IndexDefinition } from '../indexes.js'
import { renderTsquery } from '../tsquery.js'
import { Bits } from './bits.js'
import { matchesOf, rangeStart } from './evaluate.js'
import { dropOldTombstones, ResidentFeed, TOMBSTONE_HOURS } from './feed.js'
import { timeSlicer } from './slicer.js'
import { ResidentState } from './state.js'

/** A page as the resident catalogue answers it: the uids in order, how many match in all, and until when (ms) that holds without a write. */
export interface ResidentPage { total: number, uids: string[], until: number }

/** Ranks full-text matches (uids) for a tsquery: PostgreSQL's ts_rank_cd (a float4, as a double: Math.fround), the rank the catalogue orders by. */
export type Ranker = (uids: string[], tsquery: string) => Promise<Map<string, number>>

export interface ResidentOptions {
  /** Bytes the kept filters may hold (core/catalog/resident/atoms.ts). */
  filterBytes: number
  /** How many of a full-text result's most recent matches are ranked (CatalogSearch's RANKED_CANDIDATES). */
  rankedCandidates: number
}

/** A look at the table even when no notification came: the tombstones it needs are kept far longer. */
const LOOK_EVERY_MS = 5000
const RETRY_MS = 1000
const DROP_TOMBSTONES_EVERY_MS = 10 * 60 * 1000

/**
 * How long a slice of a long read (pairs of common words) holds the event
 * loop before the process answers others: the longest any request then waits
 * for it, and, against the few milliseconds of callbacks of the other
 * requests in flight between two slices, what share of the process the read
 * gets (some three quarters under load: a read of 100 ms of work answers in
 * about 130).
 */
const SLICE_MS = 10

/** Full-text queries whose candidates' ranks are kept: at most 250 ranks each, some 15 MB in all. */
const KEPT_RANKED_QUERIES = 1000

const nextTurn = async (): Promise<void> => { await new Promise<void>(resolve => setImmediate(resolve)) }

/**
 * The catalogue held in each process's memory, answering the queries of
 * listings and searches without PostgreSQL (docs/architecture.md, "The
 * resident catalogue"): PostgreSQL's catalogue table stays the truth, this
 * follows it (feed.ts), and every query it cannot answer exactly — before it
 * has loaded, while notifications are not heard, after a failed read, or for
 * a criterion it leaves to SQL — answers null, and the caller asks
 * PostgreSQL. A query waits until every change this process has heard of
 * (its own writes before they answered, other processes' notifications) is
 * applied: a caller never reads less than what it could have seen in the table.
 */
export class ResidentCatalog {
  private state: ResidentState
  private feed: ResidentFeed
  private ready = false
  private closed = false
  /** Changes heard of, and changes applied (counters: a query waits until applied reaches what was heard when it came). */
  private heard = 0
  private applied = 0
  private refreshing = false
  private waiting: Array<{ until: number, resolve: (caughtUp: boolean) => void }> = []
  private lastLook = 0
  private readonly timers: NodeJS.Timeout[] = []
  private readonly background = new AsyncResource('ResidentCatalog')
  private loadedListeners: Array<() => void> = []
  /** Ranks of recent full-text queries' candidates (`ranksOf`), the least recently asked query first out. */
  private readonly ranks = new RecencyMap<string, Map<number, { version: number, rank: number }>>()
  /** Queries answered here, and queries left to PostgreSQL. */
  readonly counts = { answered: 0, declined: 0 }

  constructor (private readonly db: Db, private readonly indexes: () => Iterable<IndexDefinition>, private readonly notifications: Notifications,
    private readonly options: ResidentOptions, private readonly log: Logger, private readonly rank: Ranker) {
    ;[this.state, this.feed] = this.fresh()
  }

  private fresh (sortsText = false): [ResidentState, ResidentFeed] {
    const state = new ResidentState(this.indexes(), this.options.filterBytes, sortsText)
    return [state, new ResidentFeed(state, true)]
  }

  /** Loads the catalogue in the background; until it has, every query answers null. */
  start (): void {
    void this.load()
    this.timers.push(setInterval(() => { this.changed() }, LOOK_EVERY_MS), setInterval(() => { void dropOldTombstones(this.db).catch(() => {}) }, DROP_TOMBSTONES_EVERY_MS))
    for (const timer of this.timers) timer.unref()
  }

  private async load (): Promise<void> {
    this.ready = false
    const heard = this.heard
    try {
      const { rows: [{ collation }] } = await this.db.query<{ collation: string }>('SELECT datcollate AS collation FROM pg_database WHERE datname = current_database()')
      ;[this.state, this.feed] = this.fresh(['C', 'POSIX', 'C.UTF-8', 'C.utf8'].includes(collation))
      // Kept ranks name the documents of the state they were asked in.
      this.ranks.clear()
      await this.feed.load(this.db, nextTurn)
      await this.state.buildOrders(nextTurn)
      // What changed while the orders were built.
      await this.feed.refresh(this.db)
      if (this.closed) return
      this.lastLook = Date.now()
      this.applied = heard
      this.ready = true
      for (const listener of this.loadedListeners) listener()
      this.loadedListeners = []
      this.log.info({ documents: this.state.size, bytes: this.state.byteSize }, 'resident catalogue loaded')
      this.pump()
    } catch (err) {
      this.failed(err)
    }
  }

  private failed (err: unknown): void {
    if (this.closed) return
    this.ready = false
    this.log.warn({ err }, 'resident catalogue: reading the catalogue failed; queries go to PostgreSQL until it has loaded again')
    for (const waiter of this.waiting) waiter.resolve(false)
    this.waiting = []
    const retry = setTimeout(() => { void this.load() }, RETRY_MS)
    retry.unref()
  }

  /** The catalogue table changed (this process's write, before it answers; another's, as its notification arrives). */
  changed (): void {
    this.heard++
    // The refresh is the process's work, not the request's that wrote (its async context: what it counts and traces).
    this.background.runInAsyncScope(() => { this.pump() })
  }

  /** Applies what changed, one refresh at a time, until every change heard of is. */
  private pump (): void {
    if (this.refreshing || !this.ready || this.closed) return
    this.refreshing = true
    void (async () => {
      try {
        while (this.applied < this.heard && this.ready && !this.closed) {
          // Tombstones are dropped after some hours: a process that could not look for so long reads everything again.
          if (Date.now() - this.lastLook > TOMBSTONE_HOURS * 3600_000 / 2) throw new Error('no look at the catalogue for too long')
          const heard = this.heard
          await this.feed.refresh(this.db)
          this.lastLook = Date.now()
          this.applied = heard
          const [done, pending] = partition(this.waiting, waiter => waiter.until <= heard)
          this.waiting = pending
          for (const waiter of done) waiter.resolve(true)
        }
      } catch (err) {
        this.failed(err)
      } finally {
        this.refreshing = false
      }
    })()
  }

  /** Whether every change heard of until now is applied (waiting for it when not). */
  private async caughtUp (): Promise<boolean> {
    if (this.applied >= this.heard) return true
    const until = this.heard
    return await new Promise<boolean>(resolve => { this.waiting.push({ until, resolve }) })
  }

  /**
   * The page of a query at `now`, and its total (not capped by sort_limit);
   * null when it must be asked of PostgreSQL.
   */
  async answer (query: Query, start: number, limit: number, now: Date): Promise<ResidentPage | null> {
    const page = await this.page(query, start, limit, now)
    if (page === null) this.counts.declined++
    else this.counts.answered++
    return page
  }

  private async page (query: Query, start: number, limit: number, now: Date): Promise<ResidentPage | null> {
    if (!this.ready || !this.notifications.listening || query.facets !== undefined) return null
    if (!await this.caughtUp()) return null
    const state = this.state
    const tsquery = lastTsquery(query)
    const ranked = tsquery !== null && (query.sort.length === 0 || 'relevance' in query.sort[0])
    const keys = query.sort.filter(key => !('relevance' in key)) as Array<{ index: IndexDefinition }>
    if (!ranked && keys.length > 1) return null
    const orderIndex = keys.length === 1 && !ranked ? keys[0].index : null
    if (orderIndex !== null && !state.sortable(orderIndex)) return null
    // Unsorted results come in the catalogue's order: creation, then uid (the `created` order's tie-break).
    const order = state.orders.get(ranked ? 'created' : orderIndex?.name ?? 'created')
    if (order === undefined) return null
    const found = await this.withMatches(state, query, now, matches => {
      const count = matches.count()
      // Ranked: the most recent candidates, newest first, and as many more as the page reaches.
      if (ranked) return { count, docs: order.flat('reversed').page(matches, count, 0, Math.max(this.options.rankedCandidates, start + limit)) }
      const descending = orderIndex !== null && query.descending
      const flat = order.flat(descending ? 'descending' : 'ascending')
      const bound = orderIndex === null ? null : rangeStart(state, query, orderIndex, descending)
      return { count, docs: flat.page(matches, count, start, limit, bound === null ? 0 : flat.firstPlace(bound)) }
    })
    if (found === null) return null
    // Results kept until the next write, or the next moment an object becomes effective or expires (the filter's).
    const until = query.showInactive ? Infinity : Math.floor(state.activity.holdsUntil / 1000)
    const uids = ranked ? await this.rankedPage(state, found.docs, tsquery, start, limit) : found.docs.map(doc => state.uidOf(doc))
    return { total: found.count, uids, until }
  }

  /**
   * What `use` makes of the documents a query matches (matchesOf), with the
   * sets of the evaluation handed back as it returns (Bits.scoped: `use`
   * must keep none of them); the pairs of common adjacent words its phrases
   * would read document by document are read first, in slices between which
   * the process answers other requests (at a million documents such a read
   * held the event loop 50–150 ms, and every request of the process with it).
   * Null when a criterion is left to PostgreSQL, or when the catalogue was
   * loaded again meanwhile (a state of its own).
   */
  private async withMatches<T> (state: ResidentState, query: Query, now: Date, use: (matches: Bits) => T): Promise<T | null> {
    const evaluated = (read?: ReadonlyMap<number, Bits>): T | null => Bits.scoped(() => {
      const matches = matchesOf(state, query, now, read)
      return matches === null ? null : use(matches)
    })
    const toRead = query.criteria.flatMap(criterion => criterion.kind === 'fullText' ? state.text.pairsToRead(criterion.text) : [])
    if (toRead.length === 0) return evaluated()
    const reading = await state.text.readPairs(toRead, timeSlicer(SLICE_MS))
    if (state !== this.state || !this.ready) {
      reading.abandon()
      return null
    }
    // Settled and used in one go: nothing changes the index in between.
    return evaluated(reading.settle())
  }

  /**
   * A page ordered by relevance, as CatalogSearch.rankedPage orders it: of
   * the matches, newest first (`recent`), the first `rankedCandidates`
   * ranked by PostgreSQL (best first, then oldest, then by uid), then the
   * further matches newest first.
   */
  private async rankedPage (state: ResidentState, recent: number[], tsquery: string, start: number, limit: number): Promise<string[]> {
    const candidateDocs = recent.slice(0, this.options.rankedCandidates)
    const candidates = candidateDocs.map(doc => state.uidOf(doc))
    const ranks = await this.ranksOf(state, candidateDocs, tsquery)
    // A candidate removed meanwhile has no rank: it is left out, as the table would leave it.
    const ranked = candidates.filter(uid => ranks.has(uid)).map((uid, i) => ({ uid, i, rank: ranks.get(uid) as number }))
    // Candidates come newest first: the oldest of equal rank first is the last of them.
    ranked.sort((a, b) => b.rank - a.rank || b.i - a.i)
    return [...ranked.map(r => r.uid), ...recent.slice(this.options.rankedCandidates).map(doc => state.uidOf(doc))].slice(start, start + limit)
  }

  /**
   * The ranks of these documents for a tsquery, by uid: computed here from
   * the words' positions where the text index can (cover-density.ts: a query
   * of words joined by & and |, a document whose positions run without a
   * gap), PostgreSQL's otherwise — those kept from an earlier query of the
   * same words whose documents have not changed since (a rank depends on the
   * document's words alone), the others asked for (ts_rank_cd reads each
   * document's words: 250 of them cost PostgreSQL milliseconds).
   */
  private async ranksOf (state: ResidentState, docs: number[], tsquery: string): Promise<Map<string, number>> {
    const ranks = new Map<string, number>()
    const computed = state.text.rank(tsquery, docs)
    const left = computed === null ? docs : docs.filter(doc => !computed.has(doc))
    if (computed !== null) for (const [doc, rank] of computed) ranks.set(state.uidOf(doc), rank)
    if (left.length === 0) return ranks
    let kept = this.ranks.use(tsquery)
    if (kept === undefined) this.ranks.set(tsquery, kept = new Map<number, { version: number, rank: number }>())
    if (this.ranks.size > KEPT_RANKED_QUERIES) this.ranks.removeOldest()
    const missing: number[] = []
    for (const doc of left) {
      const known = kept.get(doc)
      if (known !== undefined && known.version === state.versionOf(doc)) ranks.set(state.uidOf(doc), known.rank)
      else missing.push(doc)
    }
    if (missing.length === 0) return ranks
    // The versions before asking: a document changed meanwhile is asked again next time.
    const versions = missing.map(doc => state.versionOf(doc))
    const asked = await this.rank(missing.map(doc => state.uidOf(doc)), tsquery)
    missing.forEach((doc, i) => {
      const rank = asked.get(state.uidOf(doc))
      if (rank === undefined) return
      ranks.set(state.uidOf(doc), rank)
      kept.set(doc, { version: versions[i], rank })
    })
    return ranks
  }

  /** Resolves once the catalogue is loaded (at once when it is). */
  async whenLoaded (): Promise<void> {
    if (this.ready) return
    await new Promise<void>(resolve => { this.loadedListeners.push(resolve) })
  }

  /** Bytes held. */
  get byteSize (): number { return this.state.byteSize }
  get loaded (): boolean { return this.ready }
  get documents (): number { return this.state.size }

  async close (): Promise<void> {
    this.closed = true
    for (const timer of this.timers) clearInterval(timer)
    for (const waiter of this.waiting) waiter.resolve(false)
    this.waiting = []
  }
}

/** The tsquery whose rank orders a result: the last full-text criterion's, as CatalogSearch.where takes it. */
function lastTsquery (query: Query): string | null {
  let tsquery: string | null = null
  for (const criterion of query.criteria) {
    if (criterion.kind === 'fullText') tsquery = renderTsquery(criterion.text) ?? tsquery
  }
  return tsquery
}

function partition<T> (items: T[], test: (item: T) => boolean): [T[], T[]] {
  return [items.filter(test), items.filter(item => !test(item))]
}
