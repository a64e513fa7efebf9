import { Queue } from 'bullmq'
import { setTimeout as sleep } from 'node:timers/promises'
import type { Redis } from 'ioredis'
import type { IndexOperations } from '../../content/store.js'
import type { SolrSettings } from '../../solr/settings.js'
import { DEFAULT_JOB_OPTIONS, drainJob, QUEUE_NAME, refusedJob, type IndexJob } from './jobs.js'
import type { OutageLog } from '../../log.js'
import { bullmqTelemetry, producerConnection, redisSpans } from './redis.js'

/** How long closing waits for BullMQ to give up a connection that never became ready (ms). */
const UNREADY_CLOSE_MS = 200

export interface QueueCounts { waiting: number, active: number, delayed: number, failed: number }

/** `uid` names the object whose document Solr refused; null for a wake-up that ran out of attempts. */
export interface FailedJob { uid: string | null, error: string, attempts: number, failed_at: string | null }

/**
 * The producer side of asynchronous indexing: writes (and the relay) wake
 * the workers on a fail-fast connection. It takes the content store's place
 * as the destination of index operations: after a write's transaction
 * committed (its operations are in the outbox), one wake-up is queued —
 * dropped by deduplication while one waits — and the request answers
 * without waiting for Solr.
 */
export class IndexQueue implements IndexOperations {
  private readonly connection: Redis
  private readonly queue: Queue<IndexJob>
  /** This class's own commands, outside BullMQ's spans (core/indexing/queue/redis.ts). */
  private readonly command: ReturnType<typeof redisSpans>

  constructor (redisUrl: string, private readonly settings: () => SolrSettings, private readonly outage: OutageLog) {
    this.connection = producerConnection(redisUrl, outage)
    this.queue = new Queue<IndexJob>(QUEUE_NAME, { connection: this.connection, defaultJobOptions: DEFAULT_JOB_OPTIONS, ...bullmqTelemetry() })
    this.command = redisSpans(this.connection)
    this.queue.on('error', err => { outage.failed(err) })
  }

  recording (): boolean {
    return this.settings().active
  }

  /** After a write: what Redis cannot take now waits in the outbox, where the relay finds it. Never throws. */
  async deliver (uids: string[]): Promise<void> {
    try {
      await this.enqueue(uids)
    } catch (err) {
      this.outage.failed(err)
    }
  }

  /** Wakes the workers for these objects' operations (none: nothing to do). Throws at once when Redis is not connected. */
  async enqueue (uids: string[]): Promise<void> {
    if (uids.length === 0) return
    await this.wake(0)
  }

  /** Queues the wake-up of this slot unless one waits already. Throws at once when Redis is not connected. */
  async wake (slot: number): Promise<void> {
    this.connected()
    const { name, data, opts } = drainJob(slot)
    await this.queue.add(name, data, opts)
    this.outage.recovered()
  }

  /** Keeps a document Solr refused as a failed job with Solr's message (status, CLI, `retry`). */
  async refused (uid: string, error: string): Promise<void> {
    this.connected()
    const { name, data, opts } = refusedJob(uid, error)
    await this.queue.add(name, data, opts)
  }

  async counts (): Promise<QueueCounts> {
    this.connected()
    const c = await this.command(`getJobCounts ${QUEUE_NAME}`, 'getJobCounts', async () => await this.queue.getJobCounts('waiting', 'prioritized', 'active', 'delayed', 'failed'))
    return { waiting: c.waiting + c.prioritized, active: c.active, delayed: c.delayed, failed: c.failed }
  }

  /** The newest failed jobs, with the reason of their last failure (for a refused document, Solr's message). */
  async failedJobs (limit: number): Promise<FailedJob[]> {
    this.connected()
    const jobs = await this.command(`getFailed ${QUEUE_NAME}`, 'getFailed', async () => await this.queue.getFailed(0, limit - 1))
    return jobs.map(job => ({
      uid: 'uid' in job.data ? job.data.uid : null,
      error: job.failedReason,
      attempts: job.attemptsMade,
      failed_at: job.finishedOn === undefined ? null : new Date(job.finishedOn).toISOString()
    }))
  }

  /** Removes every failed job; returns how many there were. */
  async dropFailed (): Promise<number> {
    this.connected()
    return (await this.queue.clean(0, 0, 'failed')).length
  }

  async ping (): Promise<void> {
    this.connected()
    await this.command('PING', 'PING', async () => await this.connection.ping())
  }

  /** Waits up to `timeoutMs` for the connection (a short-lived process, such as the CLI, asks before its first command). */
  async ready (timeoutMs: number): Promise<boolean> {
    if (this.connection.status === 'ready') return true
    return await new Promise(resolve => {
      const done = (ok: boolean): void => {
        clearTimeout(timer)
        this.connection.off('ready', onReady)
        resolve(ok)
      }
      const onReady = (): void => { done(true) }
      const timer = setTimeout(() => { done(false) }, timeoutMs)
      this.connection.once('ready', onReady)
    })
  }

  async close (): Promise<void> {
    if (this.connection.status !== 'ready') {
      // BullMQ may report a connection that never became ready with an 'error' once it ends; closing
      // the queue first would remove the listener and make that error crash the process. End it
      // first and give that report a moment (it comes within a few ticks, or not at all when Redis
      // was never reached: then nothing settles, hence the bound).
      this.connection.disconnect()
      await Promise.race([this.queue.waitUntilReady().catch(() => {}), sleep(UNREADY_CLOSE_MS)])
    }
    await this.queue.close()
    this.connection.disconnect()
  }

  /**
   * BullMQ waits for a connection that is not ready yet (Redis down when the
   * process started), whatever the connection's options: refuse instead.
   */
  private connected (): void {
    if (this.connection.status !== 'ready') throw new Error(`Redis is not connected (${this.connection.status})`)
  }
}
