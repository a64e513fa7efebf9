import { createServer, type Server } from 'node:http'
import { collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client'
import type { Db } from './db/db.js'
import type { Outbox } from './indexing/outbox.js'
import type { IndexQueue } from './indexing/queue/index-queue.js'
import type { Logger } from './log.js'
import { sameSecret } from './security/same-secret.js'
import type { Solr } from './solr/client.js'

/** Buckets of the durations (seconds): a kept answer's milliseconds to a slow search's seconds. */
export const DURATION_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

/** What every process of the service measures of itself and its backends (a web process adds its requests, caches and logins). */
export interface ProcessBackends { db: Db, outbox: Outbox, solr: Solr, queue: IndexQueue | undefined, log: Logger }

/**
 * A process's registry of Prometheus metrics (prom-client) with what every
 * process of the service has: the process's own (CPU, memory, the heap by
 * space, the collector's pauses, the event loop's delay), PostgreSQL's pool,
 * the outbox, the index queue, Solr's calls. docs/operations.md, "Metrics".
 * Each process has its own registry, which Prometheus scrapes per process.
 */
export function processMetrics ({ db, outbox, solr, queue, log }: ProcessBackends): Registry {
  const registry = new Registry()
  collectDefaultMetrics({ register: registry })

  const solrCalls = new Histogram({
    name: 'solr_request_duration_seconds',
    help: 'Time of the calls to Solr, by kind (search: selects, pings, the schema; index: adds, deletes, commits) and outcome (ok, failed: an error, a refusal or the deadline)',
    labelNames: ['kind', 'outcome'] as const,
    buckets: DURATION_BUCKETS,
    registers: [registry]
  })
  solr.observe((kind, seconds, failed) => { solrCalls.observe({ kind, outcome: failed ? 'failed' : 'ok' }, seconds) })

  // eslint-disable-next-line no-new -- a metric registers itself; its collect reads the pool at each scrape.
  new Gauge({
    name: 'pg_pool_connections',
    help: 'PostgreSQL connections of this process\'s pool, by state (in_use, idle), and requests waiting for one (waiting)',
    labelNames: ['state'] as const,
    registers: [registry],
    collect () {
      const connections = db.connections?.()
      if (connections === undefined) return
      this.set({ state: 'in_use' }, connections.total - connections.idle)
      this.set({ state: 'idle' }, connections.idle)
      this.set({ state: 'waiting' }, connections.waiting)
    }
  })
  /**
   * A backend's figures, read for a scrape: when the backend fails, the gauge is left out of this
   * scrape rather than kept at its last values (the process's own metrics still answer, when they
   * matter most) and the failure is logged.
   */
  const fromBackend = async <T>(gauge: Gauge, what: string, read: () => Promise<T>, set: (value: T) => void): Promise<void> => {
    try {
      set(await read())
    } catch (err) {
      gauge.reset()
      log.warn({ err }, `metrics: ${what} could not be read`)
    }
  }
  // The outbox is read once per scrape for both of its gauges.
  let outboxRead: ReturnType<typeof outbox.status> | null = null
  const outboxStatus = async (): Promise<Awaited<ReturnType<typeof outbox.status>>> => await (outboxRead ??= outbox.status().finally(() => { outboxRead = null }))
  // eslint-disable-next-line no-new -- as above
  new Gauge({
    name: 'index_outbox_objects',
    help: 'Objects whose index operations wait in the outbox for Solr, by state (pending; refused: Solr refused them, an operator retries)',
    labelNames: ['state'] as const,
    registers: [registry],
    async collect () {
      await fromBackend(this, 'the outbox', outboxStatus, status => {
        this.set({ state: 'pending' }, status.pending)
        this.set({ state: 'refused' }, status.refused)
      })
    }
  })
  // eslint-disable-next-line no-new -- as above
  new Gauge({
    name: 'index_outbox_oldest_pending_seconds',
    help: 'Age of the oldest index operation waiting for Solr (0 when none waits)',
    registers: [registry],
    async collect () {
      await fromBackend(this, 'the outbox', outboxStatus, status => { this.set(status.oldest_pending_seconds ?? 0) })
    }
  })
  if (queue !== undefined) {
    // eslint-disable-next-line no-new -- as above
    new Gauge({
      name: 'index_queue_jobs',
      help: 'Jobs of the asynchronous index queue (BullMQ, in Redis), by state: waiting, active, delayed, failed',
      labelNames: ['state'] as const,
      registers: [registry],
      async collect () {
        await fromBackend(this, 'the index queue', async () => await queue.counts(), counts => {
          for (const [state, count] of Object.entries(counts)) this.set({ state }, count)
        })
      }
    })
  }
  return registry
}

/** Where the metrics answer: METRICS_PORT (0: any free port) on METRICS_HOST; METRICS_TOKEN, when not empty, asks for a bearer token. */
export interface MetricsListener { port: number, host: string, token: string }

/**
 * A listener of its own that answers `GET /metrics` from `registry`, never on
 * the service's port (docs/operations.md, "Metrics"); resolves once listening.
 */
export async function listenMetrics (registry: Registry, { port, host, token }: MetricsListener, log: Logger): Promise<Server> {
  const server = createServer((incoming, outgoing) => {
    const answer = (status: number, type: string, body: string): void => {
      outgoing.writeHead(status, { 'content-type': type, 'cache-control': 'no-store' }).end(body)
    }
    if (incoming.method !== 'GET' || new URL(incoming.url ?? '/', 'http://metrics').pathname !== '/metrics') {
      answer(404, 'text/plain', 'Not found: the metrics are at GET /metrics.\n')
      return
    }
    if (token !== '' && !sameSecret(incoming.headers.authorization ?? '', `Bearer ${token}`)) {
      answer(401, 'text/plain', 'Unauthorized: GET /metrics needs Authorization: Bearer <METRICS_TOKEN>.\n')
      return
    }
    registry.metrics().then(text => { answer(200, registry.contentType, text) }, (err: unknown) => {
      log.warn({ err }, 'metrics could not be collected')
      answer(503, 'text/plain', 'The metrics could not be collected now.\n')
    })
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, host, () => { server.off('error', reject); resolve() })
  })
  return server
}

/** Ends the listener and its connections (a scraper's keep-alive one would hold the process). */
export async function closeMetrics (server: Server): Promise<void> {
  server.closeAllConnections()
  await new Promise(resolve => server.close(resolve))
}
