import type { JobsOptions } from 'bullmq'

/** The one BullMQ queue of index jobs. One Redis database per site: two sites must not share it. */
export const QUEUE_NAME = 'solr-index'

/**
 * A job is a wake-up: it names no object. The worker that takes it claims
 * the outbox's pending objects in batches (Outbox.claimNext) and reads each
 * object as it is then (present → index, gone → unindex), so a job can run
 * late or twice without sending stale data; the operations stay in the
 * outbox, the source of truth, until Solr accepted them. `slot` tells the
 * wake-ups that may run side by side apart (DRAIN_SLOTS).
 */
export interface DrainJob { slot: number }

/**
 * A document Solr refused, kept as a failed job of its own (with Solr's
 * message) where operators look for failures: the status, the CLI, `retry`.
 */
export interface RefusedJob { uid: string, error: string }

export type IndexJob = DrainJob | RefusedJob

export const DRAIN = 'drain'
export const REFUSED = 'refused'

/**
 * How many wake-ups may run at once, across all workers: a worker that
 * finds a full batch wakes the next slot, so that another worker (or the
 * same one's second job) drains beside it.
 */
export const DRAIN_SLOTS = 4

/** The name of the backoff strategy the worker implements (`retryDelay`). */
export const CAPPED_EXPONENTIAL = 'capped-exponential'
const FIRST_RETRY_MS = 1_000
const MAX_RETRY_MS = 15_000

/** Waits between attempts: 1 s, doubling, at most 15 s (an outage of Solr costs at most 15 s after it ends). */
export function retryDelay (attemptsMade: number): number {
  return Math.min(FIRST_RETRY_MS * 2 ** Math.max(attemptsMade - 1, 0), MAX_RETRY_MS)
}

/**
 * A wake-up whose delivery fails (Solr or PostgreSQL unavailable) is
 * retried, for about an hour; one that still fails then is kept as failed
 * and the relay wakes the workers again while the outbox holds operations.
 */
export const DEFAULT_JOB_OPTIONS: JobsOptions = {
  attempts: 250,
  backoff: { type: CAPPED_EXPONENTIAL },
  removeOnComplete: true,
  // Failed jobs stay visible (status, CLI) for a week, the last thousand at most.
  removeOnFail: { age: 7 * 24 * 3600, count: 1000 }
}

/**
 * One wake-up per slot at a time (BullMQ deduplication): while one is
 * waiting, another add is dropped (the waiting one will find the newer
 * operations); while one runs, BullMQ keeps the newest add and queues it when
 * the running one ends (`keepLastIfActive`), because the running one may have
 * looked at the outbox before the write committed.
 */
export function drainJob (slot = 0): { name: string, data: DrainJob, opts: JobsOptions } {
  return { name: DRAIN, data: { slot }, opts: { deduplication: { id: `${DRAIN}-${slot}`, keepLastIfActive: true } } }
}

/** Fails at its first run (the worker throws an UnrecoverableError with `error`). */
export function refusedJob (uid: string, error: string): { name: string, data: RefusedJob, opts: JobsOptions } {
  return { name: REFUSED, data: { uid, error }, opts: { attempts: 1 } }
}
