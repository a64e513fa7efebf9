import { Redis } from 'ioredis'
import type { OutageLog } from '../../log.js'

/** How long a request may wait for Redis before its index operations are left to the relay (ms). */
const PRODUCER_COMMAND_TIMEOUT_MS = 1_000

/** Every connection reports its errors (an 'error' without a listener would crash the process), once per outage. */
function watched (redis: Redis, outage: OutageLog): Redis {
  redis.on('error', err => { outage.failed(err) })
  redis.on('ready', () => { outage.recovered() })
  return redis
}

/**
 * The connection requests enqueue through (BullMQ's production guide: fail
 * fast). With no offline queue a command fails at once while Redis is
 * unreachable instead of waiting for a reconnection, and the command timeout
 * bounds a Redis that accepts connections but does not answer: a write never
 * waits for Redis, its operations wait in the outbox.
 */
export function producerConnection (url: string, outage: OutageLog): Redis {
  return watched(new Redis(url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    commandTimeout: PRODUCER_COMMAND_TIMEOUT_MS,
    connectionName: 'talks:index-producer'
  }), outage)
}

/**
 * The worker's connection (BullMQ's production guide: `maxRetriesPerRequest:
 * null`): its commands wait through a Redis outage instead of failing, so
 * that the worker resumes by itself when Redis is back. BullMQ duplicates it
 * for its blocking connection.
 */
export function workerConnection (url: string, outage: OutageLog): Redis {
  return watched(new Redis(url, { maxRetriesPerRequest: null, connectionName: 'talks:index-worker' }), outage)
}
