import type { Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import fp from 'fastify-plugin'
import { Counter, Gauge, Histogram } from 'prom-client'
import type { CacheFigures } from '../../core/kept.js'
import { closeMetrics, DURATION_BUCKETS, listenMetrics, processMetrics } from '../../core/metrics.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** Where GET /metrics answers (METRICS_PORT), once listening; null when the metrics are off. */
    metricsAddress: () => AddressInfo | null
  }
}

/**
 * Prometheus metrics (prom-client), on a listener of their own (METRICS_PORT,
 * on METRICS_HOST: loopback unless an operator opens it; METRICS_TOKEN asks
 * for a bearer token), never on the service's port: docs/operations.md,
 * "Metrics". What every process measures is core/metrics.ts's; a web process
 * adds its requests, its caches (`fastify.caches`) and its logins. Label sets
 * are bounded: a request's route is its registered pattern (`/*`,
 * `/@search`), never its URL, and a request no route matched is `unmatched`;
 * a cache is one of the few the plugins name.
 */
export default fp(async fastify => {
  const { METRICS_PORT: port, METRICS_HOST: host, METRICS_TOKEN: token } = fastify.config
  let server: Server | null = null
  fastify.decorate('metricsAddress', () => server?.address() as AddressInfo | null ?? null)
  if (port === undefined) return

  const registry = processMetrics({ db: fastify.db, outbox: fastify.outbox, solr: fastify.solr.client, queue: fastify.indexing?.queue, log: fastify.log })

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

  const { caches, sessions } = fastify
  /** Each cache's figures: a few counters each, read by each of the three metrics below. */
  const cacheFigures = (): Array<[string, CacheFigures]> => [...caches].map(([cache, figures]) => [cache, figures()])
  // eslint-disable-next-line no-new -- a metric registers itself; its collect reads the caches at each scrape.
  new Gauge({
    name: 'cache_entries',
    help: 'Entries each cache of this process holds (cache: objects, catalog_pages, catalog_totals, catalog_rows, resident_catalog, principals)',
    labelNames: ['cache'] as const,
    registers: [registry],
    collect () {
      this.reset()
      for (const [cache, { entries }] of cacheFigures()) if (entries !== undefined) this.set({ cache }, entries)
    }
  })
  // eslint-disable-next-line no-new -- as above
  new Gauge({
    name: 'cache_bytes',
    help: 'Memory each cache of this process holds, as it counts it against its budget (KEPT_OBJECTS_BYTES, KEPT_ROWS_BYTES, …)',
    labelNames: ['cache'] as const,
    registers: [registry],
    collect () {
      this.reset()
      for (const [cache, { bytes }] of cacheFigures()) if (bytes !== undefined) this.set({ cache }, bytes)
    }
  })
  // eslint-disable-next-line no-new -- as above
  new Counter({
    name: 'cache_lookups_total',
    help: 'Look-ups of each cache of this process since start, by result: hit (answered from it) or miss (read from PostgreSQL, or made, for image_scales)',
    labelNames: ['cache', 'result'] as const,
    registers: [registry],
    collect () {
      // The caches count for themselves (a look-up costs an increment, not a metric's label lookup); the counter is set to their counts.
      this.reset()
      for (const [cache, { hits, misses }] of cacheFigures()) {
        this.inc({ cache, result: 'hit' }, hits)
        this.inc({ cache, result: 'miss' }, misses)
      }
    }
  })
  // eslint-disable-next-line no-new -- as above
  new Counter({
    name: 'login_attempts_total',
    help: 'Logins since start by outcome: succeeded, failed (wrong login or password), throttled (refused with 429 before the password was checked)',
    labelNames: ['outcome'] as const,
    registers: [registry],
    collect () {
      this.reset()
      for (const [outcome, count] of Object.entries(sessions.logins)) this.inc({ outcome }, count)
    }
  })

  const listening = await listenMetrics(registry, { port, host, token }, fastify.log)
  server = listening
  fastify.addHook('onClose', async () => { await closeMetrics(listening) })
}, { name: 'metrics', dependencies: ['db', 'content', 'solr', 'index-queue', 'auth', 'caches'] })
