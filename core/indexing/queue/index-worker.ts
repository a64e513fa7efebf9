import { UnrecoverableError, Worker, type Job } from 'bullmq'
import type { Logger } from '../../log.js'
import type { Redis } from 'ioredis'
import type { Indexer } from '../delivery.js'
import { CAPPED_EXPONENTIAL, DRAIN_SLOTS, QUEUE_NAME, REFUSED, retryDelay, type IndexJob } from './jobs.js'
import { OutageLog } from '../../log.js'
import { bullmqTelemetry, workerConnection } from './redis.js'

/**
 * Objects per Solr update request, as the reindex and the raw ingest floor
 * post them (docs/performance-history.md): half as many requests, claims and
 * transactions as with 500, for a batch that still holds its locks for
 * about one Solr request only.
 */
const BATCH_SIZE = 1000
/**
 * Batches one wake-up delivers side by side: while one waits for Solr, the
 * next is read from PostgreSQL and built (Outbox.claimNext gives them
 * different objects).
 */
const LANES = 2
/**
 * A crashed worker's jobs are seen as stalled once their lock expired and the
 * next stalled check ran: at most about LOCK_MS + 2 × STALLED_CHECK_MS after
 * the crash. A live worker renews its locks every LOCK_MS / 2, so a slow Solr
 * (index_timeout) does not make its jobs look stalled.
 */
const LOCK_MS = 10_000
const STALLED_CHECK_MS = 5_000
/** What closing waits for the jobs in flight when not told (SHUTDOWN_TIMEOUT_MS tells it); then they are left to stall. */
const CLOSE_TIMEOUT_MS = 20_000
/**
 * A refusal is recorded on the producer's fail-fast connection (1 s a
 * command): under load one attempt may time out, which would leave the
 * refusal in the outbox without its failed job. It is tried this many times,
 * REFUSAL_RETRY_MS apart.
 */
const REFUSAL_ATTEMPTS = 3
const REFUSAL_RETRY_MS = 250
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
  /** Queues the wake-up of a slot (on the producer's fail-fast connection: a drain never waits for Redis). */
  wake: (slot: number) => Promise<void>
  /** Keeps a document Solr refused as a failed job. */
  recordRefusal: (uid: string, error: string) => Promise<void>
  /** How long `close` waits for the jobs in flight (SHUTDOWN_TIMEOUT_MS; a batch is bounded by index_timeout). */
  closeTimeoutMs?: number
}

/**
 * The consumer of the index queue. A job only wakes it: it then drains the
 * outbox in batches of BATCH_SIZE objects, LANES at a time (Indexer.flushNext: one claim,
 * one read of the objects' current state and one Solr update request per
 * batch, the operations removed only after Solr accepted), until nothing is
 * left that no other delivery holds. Finding a full batch, it wakes the next
 * slot so that other workers join in. A failure (Solr, PostgreSQL) fails the
 * job, which BullMQ retries with backoff; the batches delivered before it
 * stay delivered. A document Solr refuses does not hold back the rest of its
 * batch: it is marked in the outbox and kept as a failed job of its own.
 */
export class IndexWorker {
  private readonly connection: Redis
  private readonly worker: Worker<IndexJob>
  private readonly delivery: OutageLog
  /** Set by `close`: a drain stops after its current batch. */
  private closing = false
  /** Jobs being processed now (what a shutdown past its bound cuts). */
  private running = 0

  constructor (private readonly o: IndexWorkerOptions) {
    this.delivery = new OutageLog(o.log, 'Index delivery from the queue', 'jobs are retried with backoff, the operations stay in the outbox')
    this.connection = workerConnection(o.redisUrl, o.redisOutage)
    this.worker = new Worker<IndexJob>(QUEUE_NAME, async job => { await this.process(job) }, {
      connection: this.connection,
      lockDuration: LOCK_MS,
      stalledInterval: STALLED_CHECK_MS,
      settings: { backoffStrategy: (attemptsMade: number, type?: string) => type === CAPPED_EXPONENTIAL ? retryDelay(attemptsMade) : 0 },
      // With tracing on, a job's span continues the trace of the write that queued it (bullmq-otel).
      ...bullmqTelemetry()
    })
    this.worker.on('error', err => { o.redisOutage.failed(err) })
  }

  /** Jobs in flight. */
  get active (): number {
    return this.running
  }

  private async process (job: Job<IndexJob>): Promise<void> {
    this.running++
    try {
      await this.drain(job)
    } finally {
      this.running--
    }
  }

  private async drain (job: Job<IndexJob>): Promise<void> {
    const { data } = job
    if (job.name === REFUSED && 'error' in data) throw new UnrecoverableError(data.error)
    // Jobs of the earlier form ({uid}, one per object) wake the worker as well: the outbox says what to deliver.
    const slot = 'slot' in data ? data.slot : 0
    let woken = false
    let interrupted = false
    const lane = async (): Promise<void> => {
      while (true) {
        if (this.closing) {
          interrupted = true
          return
        }
        const batch = await this.deliver()
        if (batch.claimed === 0) return
        if (batch.claimed === BATCH_SIZE && !woken && slot + 1 < DRAIN_SLOTS) {
          woken = true
          await this.o.wake(slot + 1).catch(() => {})
        }
      }
    }
    // Both lanes end before the job does (a failed one fails it): no batch outlives its job's lock.
    const lanes = await Promise.allSettled(Array.from({ length: LANES }, lane))
    const failed = lanes.find(l => l.status === 'rejected')
    if (failed !== undefined) throw failed.reason
    // Closing stopped the drain with objects perhaps left: the slot's wake-up is queued again (BullMQ
    // keeps it until this job ends, keepLastIfActive), so that another worker takes over at once rather
    // than when the relay next looks. What this worker did not claim is still in the outbox either way.
    if (interrupted) await this.o.wake(slot).catch(() => {})
  }

  /** One batch; a thrown error fails the job (retried with backoff). */
  private async deliver (): Promise<{ claimed: number }> {
    let batch
    try {
      batch = await this.o.indexer.flushNext(BATCH_SIZE)
      this.o.log.debug({ claimed: batch.claimed, delivered: batch.delivered }, 'index batch delivered')
    } catch (err) {
      this.delivery.failed(err)
      throw err
    }
    if (this.delivery.isDown) {
      this.delivery.recovered()
      await this.o.onRecovered?.().catch(() => {})
    }
    for (const [uid, err] of batch.refused) {
      this.o.log.error({ err, uid }, `Solr refuses the document of ${uid}; it is kept as a failed job and the operation stays in the outbox`)
      await this.recordRefusal(uid, err.message)
    }
    return batch
  }

  /** Keeps a refusal as a failed job; without Redis it is still in the outbox (status: outbox.refused), only the failed job is missing. */
  private async recordRefusal (uid: string, message: string): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        await this.o.recordRefusal(uid, message)
        return
      } catch (err) {
        if (attempt === REFUSAL_ATTEMPTS || this.closing) {
          this.o.log.warn({ err, uid }, `The refusal of ${uid}'s document was not kept as a failed job; it stays marked in the outbox`)
          return
        }
        await new Promise(resolve => setTimeout(resolve, REFUSAL_RETRY_MS))
      }
    }
  }

  /**
   * Stops taking jobs and waits for those in flight, each to the end of the batch it delivers (not
   * while Redis is down); after `closeTimeoutMs` they are left to stall and return to the queue.
   */
  async close (): Promise<void> {
    this.closing = true
    let timer: NodeJS.Timeout | undefined
    const timeout = new Promise<'timeout'>(resolve => { timer = setTimeout(() => { resolve('timeout') }, this.o.closeTimeoutMs ?? CLOSE_TIMEOUT_MS) })
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
