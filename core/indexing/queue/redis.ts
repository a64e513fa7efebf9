import type { Telemetry } from 'bullmq'
import { Redis } from 'ioredis'
import type { OutageLog } from '../../log.js'
import { errorType, tracing, type SpanAttributes } from '../../tracing.js'

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

/** BullMQ's `telemetry` option: its own spans of the queue and the workers (bullmq-otel) when the process traces, none otherwise. */
export function bullmqTelemetry (): { telemetry?: Telemetry } {
  const traced = tracing()
  return traced === undefined ? {} : { telemetry: traced.bullmq }
}

/**
 * The commands the service sends to Redis itself, outside BullMQ's own spans (a PING for @health,
 * the queue's counts and failed jobs for the status and the metrics): client spans of the request they serve when
 * the process traces, chosen once; otherwise the command alone. `name` is the span's (`PING`,
 * `getJobCounts solr-index`), `operation` the command or BullMQ's method.
 */
export function redisSpans (connection: Redis): <T>(name: string, operation: string, call: () => Promise<T>) => Promise<T> {
  const traced = tracing()
  if (traced === undefined) return async (_name, _operation, call) => await call()
  const { host, port } = connection.options
  const server: SpanAttributes = { 'db.system.name': 'redis', 'db.system': 'redis' }
  if (host !== undefined) server['server.address'] = host
  if (port !== undefined) server['server.port'] = port
  const failure = (err: unknown): SpanAttributes => ({ 'error.type': errorType(err) })
  return async (name, operation, call) => await traced.client(name, { ...server, 'db.operation.name': operation }, call, failure)
}
