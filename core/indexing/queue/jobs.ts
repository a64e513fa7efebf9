import type { JobsOptions } from 'bullmq'

/** The one BullMQ queue of index jobs. One Redis database per site: two sites must not share it. */
export const QUEUE_NAME = 'solr-index'

/**
 * A job names one object and nothing else: the worker reads what to do from
 * the object as it is when the job runs (present → index, gone → unindex),
 * so a job can run late, twice or after a newer one without sending stale
 * data. The operation itself stays in the outbox, the source of truth.
 */
export interface IndexJob { uid: string }

/** The name of the backoff strategy the worker implements (`retryDelay`). */
export const CAPPED_EXPONENTIAL = 'capped-exponential'
const FIRST_RETRY_MS = 1_000
const MAX_RETRY_MS = 15_000

/** Waits between attempts: 1 s, doubling, at most 15 s (an outage of Solr costs at most 15 s after it ends). */
export function retryDelay (attemptsMade: number): number {
  return Math.min(FIRST_RETRY_MS * 2 ** Math.max(attemptsMade - 1, 0), MAX_RETRY_MS)
}

/**
 * Every failure except a refused document (Solr or PostgreSQL unavailable) is
 * retried, for about an hour; a job that still fails then is kept as failed
 * and the relay queues its object again from the outbox. A refused document
 * fails at once (UnrecoverableError in the worker).
 */
export const DEFAULT_JOB_OPTIONS: JobsOptions = {
  attempts: 250,
  backoff: { type: CAPPED_EXPONENTIAL },
  removeOnComplete: true,
  // Failed jobs stay visible (status, CLI) for a week, the last thousand at most.
  removeOnFail: { age: 7 * 24 * 3600, count: 1000 }
}

/**
 * One job per object at a time: the UID deduplicates. While a job for the
 * object is waiting, another add is dropped (the waiting one will read the
 * newer state); while one is running, BullMQ keeps the newest add and queues
 * it when the running one ends (`keepLastIfActive`), because the running one
 * may have read the object before the change.
 */
export function indexJob (uid: string): { name: string, data: IndexJob, opts: JobsOptions } {
  return { name: 'index', data: { uid }, opts: { deduplication: { id: uid, keepLastIfActive: true } } }
}
