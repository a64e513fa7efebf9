import fp from 'fastify-plugin'
import { SolrService } from '../../core/solr/service.js'

/**
 * The Solr integration (SEARCH.md §5): `fastify.solr` with the client, the
 * live schema and the indexer. Writes record index operations in the outbox
 * while Solr is active; settings changes apply without a restart.
 *
 * Switching Solr on later: what changed while it was off was never recorded,
 * so the switch is logged with the advice to run `sync`, which indexes what
 * is missing or stale and removes orphans.
 */
export default fp(async fastify => {
  const solr = new SolrService(fastify.settings, fastify.db, fastify.types, fastify.content, fastify.log)
  fastify.decorate('solr', solr)
  fastify.content.useIndexOperations(solr.indexer)
  let wasActive = solr.active()
  fastify.settings.onChange(async settings => {
    if (settings.active) {
      await solr.readSchema()
      solr.indexer.schedule(0)
      if (!wasActive) fastify.log.warn('Solr was switched on: content changed while it was off is not in Solr yet; run `npm run solr -- sync`')
    }
    wasActive = settings.active
  })
  fastify.addHook('onReady', async () => {
    if (solr.active()) await solr.readSchema()
    // With async_indexing the queue's relay and worker deliver the outbox instead (plugins/app/index-queue.ts).
    if (!solr.asyncIndexing) solr.indexer.start()
  })
  fastify.addHook('onClose', async () => { await solr.close() })
}, { name: 'solr', dependencies: ['content-types', 'controlpanel'] })
