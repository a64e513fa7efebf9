import type { Logger } from '../../log.js'
import type { Outbox } from '../outbox.js'
import type { SolrSettings } from '../../solr/settings.js'
import type { Indexer } from '../delivery.js'
import { IndexQueue } from './index-queue.js'
import { IndexWorker } from './index-worker.js'
import { OutboxRelay } from './outbox-relay.js'
import { OutageLog } from '../../log.js'

export interface AsyncIndexingOptions {
  outbox: Outbox
  indexer: Indexer
  settings: () => SolrSettings
  log: Logger
  redisUrl: string
  /** Run a worker in this process (`INDEX_WORKER=inline`, and the `npm run worker` process). */
  worker: boolean
  onSolrRecovered?: () => Promise<void>
  /** How long closing waits for the worker's jobs in flight (SHUTDOWN_TIMEOUT_MS). */
  closeTimeoutMs?: number
}

/**
 * Asynchronous indexing as one process sees it (docs/search.md, "Asynchronous indexing"): the queue
 * writes put their objects on, the relay that moves the outbox into it, and,
 * where configured, the worker that delivers them to Solr.
 */
export class AsyncIndexing {
  readonly queue: IndexQueue
  private readonly relay: OutboxRelay
  private readonly redisOutage: OutageLog
  private worker: IndexWorker | null = null

  constructor (private readonly o: AsyncIndexingOptions) {
    this.redisOutage = new OutageLog(o.log, 'Redis (index queue)', 'index operations wait in the outbox and are queued when Redis is back')
    this.queue = new IndexQueue(o.redisUrl, o.settings, this.redisOutage)
    this.relay = new OutboxRelay({ outbox: o.outbox, queue: this.queue, settings: o.settings, log: o.log })
  }

  get runsWorker (): boolean {
    return this.o.worker
  }

  /** The worker's jobs in flight (0 without a worker). */
  get activeJobs (): number {
    return this.worker?.active ?? 0
  }

  /** Starts the relay and, where configured, the worker (once the app is ready: the worker needs Solr's schema). */
  start (): void {
    this.relay.start()
    if (this.o.worker && this.worker === null) {
      this.worker = new IndexWorker({
        redisUrl: this.o.redisUrl,
        indexer: this.o.indexer,
        log: this.o.log,
        redisOutage: this.redisOutage,
        onRecovered: this.o.onSolrRecovered,
        wake: async slot => { await this.queue.wake(slot) },
        recordRefusal: async (uid, error) => { await this.queue.refused(uid, error) },
        closeTimeoutMs: this.o.closeTimeoutMs
      })
    }
  }

  /** The relay stops, the worker finishes its jobs in flight (SIGTERM), then the connections close. */
  async close (): Promise<void> {
    await this.relay.stop()
    await this.worker?.close()
    await this.queue.close()
  }

  /**
   * After the cause of failures was fixed (a core's schema, say): the
   * operations whose document Solr refused are offered again by the relay,
   * and the failed jobs are dropped — the outbox, not a job, is what gets
   * delivered, so each failed job's object is either delivered since or
   * pending there.
   */
  async retry (): Promise<{ operations: number, failedJobs: number }> {
    return { operations: await this.o.outbox.unrefuse(), failedJobs: await this.queue.dropFailed() }
  }
}
