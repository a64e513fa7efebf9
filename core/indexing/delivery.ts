import type { Logger } from '../log.js'
import type { ContentStore, IndexOperations } from '../content/store.js'
import type { Db, Queryable } from '../db/db.js'
import type { Claimed, Outbox } from './outbox.js'
import { Loop } from './loop.js'
import { OutageLog } from '../log.js'
import type { SolrSettings } from '../solr/settings.js'
import { SolrUnavailable, type Solr } from '../solr/client.js'
import { AUTO_COMMIT_MAX_TIME_MS } from '../solr/configset.js'
import type { SolrDocument, SolrDocuments } from '../solr/documents.js'

/** How a batch of changes becomes visible (docs/search.md, "Commit strategies"): commitWithin wins over explicit commits. */
export function commitOptions (settings: SolrSettings): { commit?: boolean, commitWithin?: number } {
  if (settings.commit_within > 0) return { commitWithin: settings.commit_within }
  return settings.auto_commit ? { commit: true } : {}
}

/** How long after Solr accepted an update searches may still see the document as it was (0: committed at once). */
export function settlingMs (settings: SolrSettings): number {
  const { commit, commitWithin } = commitOptions(settings)
  if (commit === true) return 0
  // A second more than Solr's own deadline: opening a searcher takes time too.
  return (commitWithin ?? AUTO_COMMIT_MAX_TIME_MS) + 1_000
}

export interface IndexerOptions {
  db: Db
  outbox: Outbox
  content: ContentStore
  documents: SolrDocuments
  solr: Solr
  settings: () => SolrSettings
  /** The live core's fields (null: unknown, send every generated field). */
  fields: () => ReadonlySet<string> | null
  log: Logger
  /** Called when Solr answers again after an outage (the plugin re-reads the schema). */
  onRecovered?: () => Promise<void>
}

/** The background loop's waits: quick while it drains, doubling while Solr is down. */
const IDLE_MS = 5_000
const FIRST_RETRY_MS = 500
const MAX_RETRY_MS = 60_000
/** Objects per delivery of the background loop. */
const LOOP_BATCH = 200

/**
 * Solr answered and said no to a document (400), as opposed to not answering,
 * or answering 401/403/404 (credentials, core), which no document causes.
 */
export const refused = (err: unknown): err is SolrUnavailable => err instanceof SolrUnavailable && err.status === 400

/** A delivery of several objects: how many went to Solr, and the ones whose document Solr refused (with its answer). */
export interface Delivery { delivered: number, refused: Map<string, SolrUnavailable> }

/**
 * Delivers the outbox to Solr. Requests deliver their own operations right
 * after their transaction (synchronous strategies); a background loop
 * delivers what is left (Solr was down, a request timed out) in order per
 * object, with backoff. Operations for one object collapse: the newest
 * wins, and `index` reads the object as it is now, so that a late delivery
 * never sends old data, and an object deleted meanwhile is unindexed.
 */
export class Indexer implements IndexOperations {
  /** Solr failed and has not answered since: requests leave delivery to the loop, and nothing is logged again. */
  private readonly outage: OutageLog
  private readonly loop = new Loop(async () => await this.pass())
  private retryMs = FIRST_RETRY_MS

  constructor (private readonly o: IndexerOptions) {
    this.outage = new OutageLog(o.log, 'Solr indexing', 'the outbox keeps the operations and retries in the background')
  }

  recording (): boolean {
    return this.o.settings().active
  }

  /** Whether the last delivery failed (Solr down or refusing). */
  get unavailable (): boolean {
    return this.outage.isDown
  }

  /** After a write: deliver now, unless Solr is known to be down (then the loop retries with backoff). */
  async deliver (uids: string[]): Promise<void> {
    if (this.outage.isDown) return
    try {
      await this.flush(uids)
    } catch (err) {
      this.outage.failed(err)
      this.loop.schedule(0)
    }
  }

  /**
   * Sends the pending operations of these objects and removes them from the
   * outbox once Solr accepted them, in one transaction that holds the
   * objects (Outbox.claim) so that concurrent deliveries take turns. Throws
   * when Solr fails; the operations stay.
   */
  async flush (uids: string[]): Promise<number> {
    if (uids.length === 0) return 0
    return (await this.deliverClaimed(async tx => await this.o.outbox.claim(tx, uids))).length
  }

  /**
   * The queue worker's delivery: up to `limit` objects of the outbox that no
   * other delivery holds (Outbox.claimNext), oldest first, in one Solr
   * update request; when Solr refuses it, object by object (as `flushEach`).
   * Answers how many objects it took: 0 when nothing is left to take.
   */
  async flushNext (limit: number): Promise<Delivery & { claimed: number }> {
    let claimed: Claimed[] = []
    try {
      claimed = await this.deliverClaimed(async tx => (claimed = await this.o.outbox.claimNext(tx, limit)))
      return { claimed: claimed.length, delivered: claimed.length, refused: new Map() }
    } catch (err) {
      if (!refused(err)) throw err
      if (claimed.length === 1) return { claimed: 1, delivered: 0, refused: new Map([[claimed[0].uid, err]]) }
    }
    return { claimed: claimed.length, ...await this.eachOf(claimed.map(c => c.uid)) }
  }

  /**
   * Delivers a batch; when Solr refuses it, object by object, so that one
   * document Solr refuses does not hold back the others. Throws on any other
   * failure (Solr or the database unavailable).
   */
  async flushEach (uids: string[]): Promise<Delivery> {
    const unique = [...new Set(uids)]
    try {
      return { delivered: await this.flush(unique), refused: new Map() }
    } catch (err) {
      if (!refused(err)) throw err
      if (unique.length === 1) return { delivered: 0, refused: new Map([[unique[0], err]]) }
    }
    return await this.eachOf(unique)
  }

  /** One Solr request per object: those Solr refuses are set apart; any other failure throws. */
  private async eachOf (uids: string[]): Promise<Delivery> {
    const result: Delivery = { delivered: 0, refused: new Map() }
    for (const uid of uids) {
      try {
        result.delivered += await this.flush([uid])
      } catch (err) {
        if (!refused(err)) throw err
        result.refused.set(uid, err)
      }
    }
    return result
  }

  /**
   * One delivery in one transaction: `claim` takes the objects (and their
   * locks), their current state goes to Solr, and their operations leave
   * the outbox once Solr accepted. When anything fails the transaction rolls
   * back, the objects go to the back of the queue, and a document Solr
   * refused, when it was the only one sent, is marked as refused.
   */
  private async deliverClaimed (claim: (tx: Queryable) => Promise<Claimed[]>): Promise<Claimed[]> {
    let claimed: Claimed[] = []
    return await this.o.db.transaction(async tx => {
      claimed = await claim(tx)
      if (claimed.length === 0) return claimed
      await this.send(tx, claimed.map(c => c.uid))
      await this.o.outbox.acknowledge(tx, claimed, settlingMs(this.o.settings()))
      return claimed
    }).catch(async (err: unknown) => {
      const refusal = refused(err) && claimed.length === 1 ? { claimed: claimed[0], message: err.message } : undefined
      if (claimed.length > 0) await this.o.outbox.failed(claimed.map(c => c.uid), refusal).catch(() => {})
      throw err
    })
  }

  /** Whatever each object's newest operation says, computed from its current row: present → index, gone → unindex. */
  private async send (q: Queryable, uids: string[]): Promise<void> {
    const settings = this.o.settings()
    const atomic = settings.atomic_updates && this.o.documents.atomicKeepsMore(this.o.fields())
    const docs = await this.currentDocuments(uids, atomic ? 'atomic' : 'full', q)
    const present = new Set(docs.map(d => String(d.UID)))
    const gone = uids.filter(uid => !present.has(uid))
    const options = commitOptions(settings)
    if (gone.length === 0) {
      await this.o.solr.update(docs, options)
      return
    }
    await this.o.solr.update(docs, { commitWithin: options.commitWithin })
    await this.o.solr.deleteByIds(gone, options)
  }

  /** The documents of these objects as they are now (objects that no longer exist have none). */
  async currentDocuments (uids: string[], form: 'full' | 'atomic' = 'full', q: Queryable = this.o.db): Promise<SolrDocument[]> {
    const current = await this.o.content.indexables(uids, q)
    const known = this.o.fields()
    return [...current.values()].map(({ type, indexable }) =>
      form === 'atomic' ? this.o.documents.atomic(type, indexable, known) : this.o.documents.build(type, indexable, known))
  }

  /**
   * One pass of the background loop: the objects with pending operations,
   * oldest first (those Solr keeps refusing last), until the outbox is empty
   * or a delivery fails. Returns the number of objects delivered.
   */
  async drain (): Promise<number> {
    let delivered = 0
    while (true) {
      const next = await this.o.outbox.next(LOOP_BATCH)
      if (next.length === 0) return delivered
      const batch = await this.flushEach(next)
      delivered += batch.delivered
      if (batch.refused.size === 0) continue
      // Only refused documents left: back off as for an outage instead of asking Solr again every few seconds.
      if (next.length === 1) throw [...batch.refused.values()][0]
      for (const [uid, err] of batch.refused) this.o.log.error({ err, uid }, `Solr refuses the document of ${uid}; it stays in the outbox`)
      return delivered
    }
  }

  /** Starts the background loop (idempotent); its timer does not keep the process alive. */
  start (): void {
    this.loop.start(0)
  }

  async stop (): Promise<void> {
    await this.loop.stop()
  }

  /** The loop runs again soon (settings changed). */
  schedule (ms: number): void {
    this.loop.schedule(ms)
  }

  /** One pass of the loop; answers the wait before the next: idle, or the backoff while Solr fails. */
  private async pass (): Promise<number> {
    if (!this.o.settings().active) return IDLE_MS
    try {
      await this.drain()
      if (this.outage.isDown) {
        this.outage.recovered()
        await this.o.onRecovered?.()
      }
      this.retryMs = FIRST_RETRY_MS
      return IDLE_MS
    } catch (err) {
      this.outage.failed(err)
      const wait = this.retryMs
      this.retryMs = Math.min(this.retryMs * 2, MAX_RETRY_MS)
      return wait
    }
  }
}
