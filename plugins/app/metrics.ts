import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import fp from 'fastify-plugin'
import { collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client'
import { sameSecret } from '../../core/security/same-secret.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** Where GET /metrics answers (METRICS_PORT), once listening; null when the metrics are off. */
    metricsAddress: () => AddressInfo | null
  }
}

/** Buckets of the request durations (seconds): a kept answer's milliseconds to a slow search's seconds. */
const DURATION_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

/**
 * Prometheus metrics (prom-client), on a listener of their own (METRICS_PORT,
 * on METRICS_HOST: loopback unless an operator opens it; METRICS_TOKEN asks
 * for a bearer token), never on the service's port: docs/operations.md,
 * "Metrics". Each process has its own registry, which Prometheus scrapes
 * per process. Label sets are bounded: a request's route is its registered
 * pattern (`/*`, `/@search`), never its URL, and a request no route matched
 * is `unmatched`.
 */
export default fp(async fastify => {
  const { METRICS_PORT: port, METRICS_HOST: host, METRICS_TOKEN: token } = fastify.config
  let server: Server | null = null
  fastify.decorate('metricsAddress', () => server?.address() as AddressInfo | null ?? null)
  if (port === undefined) return

  const registry = new Registry()
  // The process's own: CPU, memory, the heap by space, the collector's pauses, the event loop's delay.
  collectDefaultMetrics({ register: registry })

  const requests = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'Time to answer a request, by method, route pattern and status code',
    labelNames: ['method', 'route', 'status_code'] as const,
    buckets: DURATION_BUCKETS,
    registers: [registry]
  })
  fastify.addHook('onResponse', async (request, reply) => {
    const route = request.routeOptions.url ?? 'unmatched'
    requests.observe({ method: request.method, route, status_code: String(reply.statusCode) }, reply.elapsedTime / 1000)
  })

  const solrCalls = new Histogram({
    name: 'solr_request_duration_seconds',
    help: 'Time of the calls to Solr, by kind (search: selects, pings, the schema; index: adds, deletes, commits) and outcome (ok, failed: an error, a refusal or the deadline)',
    labelNames: ['kind', 'outcome'] as const,
    buckets: DURATION_BUCKETS,
    registers: [registry]
  })
  fastify.solr.client.observe((kind, seconds, failed) => { solrCalls.observe({ kind, outcome: failed ? 'failed' : 'ok' }, seconds) })

  const { db, outbox } = fastify
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
      fastify.log.warn({ err }, `metrics: ${what} could not be read`)
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
  const { indexing } = fastify
  if (indexing !== null) {
    // eslint-disable-next-line no-new -- as above
    new Gauge({
      name: 'index_queue_jobs',
      help: 'Jobs of the asynchronous index queue (BullMQ, in Redis), by state: waiting, active, delayed, failed',
      labelNames: ['state'] as const,
      registers: [registry],
      async collect () {
        await fromBackend(this, 'the index queue', async () => await indexing.queue.counts(), counts => {
          for (const [state, count] of Object.entries(counts)) this.set({ state }, count)
        })
      }
    })
  }

  server = createServer((incoming, outgoing) => {
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
      fastify.log.warn({ err }, 'metrics could not be collected')
      answer(503, 'text/plain', 'The metrics could not be collected now.\n')
    })
  })
  const listening = server
  await new Promise<void>((resolve, reject) => {
    listening.once('error', reject)
    listening.listen(port, host, () => { listening.off('error', reject); resolve() })
  })
  fastify.addHook('onClose', async () => {
    listening.closeAllConnections()
    await new Promise(resolve => listening.close(resolve))
  })
}, { name: 'metrics', dependencies: ['db', 'content', 'solr', 'index-queue'] })
