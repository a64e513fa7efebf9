import fp from 'fastify-plugin'

/**
 * Asynchronous indexing (SEARCH.md §5), on when `async_indexing` is at start
 * (`SOLR_ASYNC=true`): writes queue their objects instead of waiting for
 * Solr, a relay moves whatever the outbox holds into the queue, and with
 * `INDEX_WORKER=inline` (or the embedded database) this process also runs
 * the worker (otherwise `npm run worker` does). `fastify.indexing` is null when it is off; the
 * synchronous delivery of plugins/app/solr.ts then applies, and it delivers
 * whatever the queue left in the outbox.
 */
export default fp(async fastify => {
  const { solr, settings } = fastify
  let announced = solr.asyncIndexing
  settings.onChange(changed => {
    if (changed.async_indexing === announced) return
    announced = changed.async_indexing
    fastify.log.warn(`async_indexing is now ${String(announced)}: it applies at the next restart (the outbox keeps every operation meanwhile)`)
  })
  if (!solr.asyncIndexing) {
    fastify.decorate('indexing', null)
    return
  }
  // Loaded only when used: BullMQ and ioredis add ~30 MB to the resident set of a process that never queues.
  const { AsyncIndexing } = await import('../../core/queue/async-indexing.js')
  const indexing = new AsyncIndexing({
    db: fastify.db,
    indexer: solr.indexer,
    settings: () => settings.solr,
    log: fastify.log,
    redisUrl: fastify.config.REDIS_URL,
    // No other process may open the embedded database's files, so its worker can only run here.
    worker: fastify.config.INDEX_WORKER === 'inline' || fastify.db.kind === 'embedded',
    onSolrRecovered: async () => { await solr.readSchema() }
  })
  fastify.decorate('indexing', indexing)
  fastify.content.useIndexOperations(indexing.queue)
  fastify.addHook('onReady', async () => { indexing.start() })
  fastify.addHook('onClose', async () => { await indexing.close() })
}, { name: 'index-queue', dependencies: ['solr', 'content-types', 'controlpanel'] })
