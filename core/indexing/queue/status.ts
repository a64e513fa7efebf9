import type { Outbox, OutboxStatus } from '../outbox.js'
import type { AsyncIndexing } from './async-indexing.js'
import type { FailedJob, QueueCounts } from './index-queue.js'

/** Failed jobs listed in the status (the count covers all of them). */
const FAILED_LISTED = 100

/** What operators watch (`GET @solr-maintenance/status`, `npm run solr -- status`). */
export interface IndexingStatus {
  async_indexing: boolean
  /** Where jobs are processed: in this process (`inline`) or a `npm run worker` process; null without the queue. */
  worker: 'inline' | 'external' | null
  redis: 'ok' | 'down' | 'off'
  /** Why Redis is `down`. */
  redis_error?: string
  /** null when Redis is off or down. */
  queue: QueueCounts | null
  failed_jobs: FailedJob[]
  outbox: OutboxStatus
}

/** The outbox is read from PostgreSQL whatever happens to Redis; the queue's part is left out when Redis cannot answer. */
export async function indexingStatus (outbox: Outbox, indexing: AsyncIndexing | null): Promise<IndexingStatus> {
  const status: IndexingStatus = {
    async_indexing: indexing !== null,
    worker: indexing === null ? null : indexing.runsWorker ? 'inline' : 'external',
    redis: indexing === null ? 'off' : 'ok',
    queue: null,
    failed_jobs: [],
    outbox: await outbox.status()
  }
  if (indexing === null) return status
  try {
    status.queue = await indexing.queue.counts()
    status.failed_jobs = await indexing.queue.failedJobs(FAILED_LISTED)
  } catch (err) {
    status.redis = 'down'
    status.redis_error = (err as Error).message
  }
  return status
}
