import type { Db } from '../db.js'
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
  outbox: {
    /** Objects with operations waiting for Solr. */
    pending: number
    /** Objects whose document Solr refused (kept until a new operation or `retry`). */
    refused: number
    /** Age of the oldest pending operation: how far the index is behind. */
    oldest_pending_seconds: number | null
  }
}

/** The outbox is read from PostgreSQL whatever happens to Redis; the queue's part is left out when Redis cannot answer. */
export async function indexingStatus (db: Db, indexing: AsyncIndexing | null): Promise<IndexingStatus> {
  const { rows: [outbox] } = await db.query<{ pending: number, refused: number, oldest: number | null }>(
    `SELECT count(*) FILTER (WHERE NOT refused) AS pending, count(*) FILTER (WHERE refused) AS refused,
            extract(epoch FROM now() - min(oldest) FILTER (WHERE NOT refused))::float8 AS oldest
     FROM (SELECT bool_and(refused IS NOT NULL) AS refused, min(created_at) FILTER (WHERE refused IS NULL) AS oldest
           FROM index_outbox GROUP BY uid) AS objects`)
  const status: IndexingStatus = {
    async_indexing: indexing !== null,
    worker: indexing === null ? null : indexing.runsWorker ? 'inline' : 'external',
    redis: indexing === null ? 'off' : 'ok',
    queue: null,
    failed_jobs: [],
    outbox: { pending: outbox.pending, refused: outbox.refused, oldest_pending_seconds: outbox.oldest === null ? null : Math.round(outbox.oldest) }
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
