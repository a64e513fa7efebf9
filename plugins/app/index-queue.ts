import fp from 'fastify-plugin'
import { openAsyncIndexing } from '../../core/indexing/async.js'
import type { AsyncIndexing } from '../../core/indexing/queue/async-indexing.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** Asynchronous indexing: queue, relay, worker; null when async_indexing is off. */
    indexing: AsyncIndexing | null
  }
}

/**
 * Asynchronous indexing, on when `async_indexing` is at start
 * (`SOLR_ASYNC=true`): writes queue their objects instead of waiting for
 * Solr, a relay moves whatever the outbox holds into the queue, and with
 * `INDEX_WORKER=inline` (or the embedded database) this process also runs
 * the worker (otherwise `npm run worker` does). `fastify.indexing` is null
 * when it is off; the synchronous delivery of the Solr plugin then applies,
 * and it delivers whatever the queue left in the outbox.
 */
export default fp(async fastify => {
  const indexing = await openAsyncIndexing({
    solr: fastify.solr,
    content: fastify.content,
    settings: fastify.solrSettings,
    outbox: fastify.outbox,
    log: fastify.log,
    redisUrl: fastify.config.REDIS_URL,
    // No other process may open the embedded database's files, so its worker can only run here.
    worker: fastify.config.INDEX_WORKER === 'inline' || fastify.db.kind === 'embedded',
    closeTimeoutMs: fastify.config.SHUTDOWN_TIMEOUT_MS
  })
  fastify.decorate('indexing', indexing)
  if (indexing === null) return
  fastify.addHook('onReady', async () => { indexing.start() })
  fastify.addHook('onClose', async () => { await indexing.close() })
}, { name: 'index-queue', dependencies: ['solr', 'content', 'solr-settings'] })
