import { UnrecoverableError, Worker } from 'bullmq'
import type { Logger } from '../../log.js'
import type { Redis } from 'ioredis'
import type { Indexer } from '../delivery.js'
import { Batcher } from './batcher.js'
import { CAPPED_EXPONENTIAL, QUEUE_NAME, retryDelay, type IndexJob } from './jobs.js'
import { OutageLog } from '../../log.js'
import { workerConnection } from './redis.js'

/** Objects per Solr update request. */
const BATCH_SIZE = 100
/** How long a batch waits for more jobs after its first one (ms): jobs are fetched one after the other. */
const BATCH_LINGER_MS = 20
/**
 * A crashed worker's jobs are seen as stalled once their lock expired and the
 * next stalled check ran: at most about LOCK_MS + 2 × STALLED_CHECK_MS after
 * the crash. A live worker renews its locks every LOCK_MS / 2, so a slow Solr
 * (index_timeout) does not make its jobs look stalled.
 */
const LOCK_MS = 10_000
const STALLED_CHECK_MS = 5_000
/** SIGTERM waits this long for the jobs in flight (a batch is bounded by index_timeout); then they are left to stall. */
const CLOSE_TIMEOUT_MS = 30_000
/** How long closing asks Redis whether it is there before taking it for gone. */
const PING_TIMEOUT_MS = 1_000

export interface IndexWorkerOptions {
  redisUrl: string
  indexer: Indexer
  log: Logger
  /** Shared with the producer: one line per Redis outage for the whole process. */
  redisOutage: OutageLog
  /** Called when deliveries succeed again after failing (the plugin re-reads Solr's schema). */
  onRecovered?: () => Promise<void>
}

/**
 * The consumer of the index queue: takes up to BATCH_SIZE jobs at a time
 * (two batches in flight), delivers their objects with one Indexer.flush per
 * batch, which reads each object's current state and removes its outbox
 * rows only after Solr accepted. A document Solr refuses fails its job at
 * once with Solr's message (kept as a failed job, not retried) and does not
 * hold back the rest of its batch; any other failure is retried with backoff.
 */
export class IndexWorker {
  private readonly connection: Redis
  private readonly worker: Worker<IndexJob>
  private readonly delivery: OutageLog

  constructor (private readonly o: IndexWorkerOptions) {
    this.delivery = new OutageLog(o.log, 'Index delivery from the queue', 'jobs are retried with backoff, the operations stay in the outbox')
    this.connection = workerConnection(o.redisUrl, o.redisOutage)
    const batches = new Batcher<string>(BATCH_SIZE, BATCH_LINGER_MS, async uids => await this.deliver(uids))
    this.worker = new Worker<IndexJob>(QUEUE_NAME, async job => { await batches.add(job.data.uid) }, {
      connection: this.connection,
      concurrency: BATCH_SIZE * 2,
      lockDuration: LOCK_MS,
      stalledInterval: STALLED_CHECK_MS,
      settings: { backoffStrategy: (attemptsMade: number, type?: string) => type === CAPPED_EXPONENTIAL ? retryDelay(attemptsMade) : 0 }
    })
    this.worker.on('error', err => { o.redisOutage.failed(err) })
  }

  /** One batch: the objects Solr refused fail for good, the rest succeeded; a thrown error fails (and retries) them all. */
  private async deliver (uids: string[]): Promise<Map<string, Error>> {
    let refused
    try {
      let delivered
      ({ delivered, refused } = await this.o.indexer.flushEach(uids))
      this.o.log.debug({ jobs: uids.length, delivered }, 'index batch delivered')
    } catch (err) {
      this.delivery.failed(err)
      throw err
    }
    if (this.delivery.isDown) {
      this.delivery.recovered()
      await this.o.onRecovered?.().catch(() => {})
    }
    const failures = new Map<string, Error>()
    for (const [uid, err] of refused) {
      this.o.log.error({ err, uid }, `Solr refuses the document of ${uid}; its job failed and the operation stays in the outbox`)
      failures.set(uid, new UnrecoverableError(err.message))
    }
    return failures
  }

  /** Stops taking jobs and waits for those in flight (not while Redis is down); after CLOSE_TIMEOUT_MS they are left to stall and return to the queue. */
  async close (): Promise<void> {
    let timer: NodeJS.Timeout | undefined
    const timeout = new Promise<'timeout'>(resolve => { timer = setTimeout(() => { resolve('timeout') }, CLOSE_TIMEOUT_MS) })
    // Without Redis no job can be finished or handed back: waiting would only delay the exit. Jobs in
    // flight then stall and run again (their operations are still in the outbox). The connection's
    // status alone may not know yet that Redis just went away: Redis is asked.
    const force = !await this.redisAnswers()
    const closed = this.worker.close(force).catch((err: unknown) => { this.o.log.warn({ err }, 'Closing the index worker failed') })
    if (await Promise.race([closed, timeout]) === 'timeout') {
      this.o.log.warn('The index worker did not finish its jobs in time; they return to the queue as stalled jobs')
    }
    clearTimeout(timer)
    this.connection.disconnect()
  }

  private async redisAnswers (): Promise<boolean> {
    if (this.connection.status !== 'ready') return false
    let timer: NodeJS.Timeout | undefined
    const silence = new Promise<false>(resolve => { timer = setTimeout(() => { resolve(false) }, PING_TIMEOUT_MS) })
    const answer = this.connection.ping().then(() => true, () => false)
    try {
      return await Promise.race([answer, silence])
    } finally {
      clearTimeout(timer)
    }
  }
}
