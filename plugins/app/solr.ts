import fp from 'fastify-plugin'
import { boostRulesCheck } from '../../core/solr/full-text.js'
import { SolrQueryTranslator } from '../../core/solr/lucene.js'
import { SolrSearch } from '../../core/solr/search.js'
import { SolrService } from '../../core/solr/service.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** The Solr integration: client, live schema, indexer. */
    solr: SolrService
    /** Searches answered by Solr, checked against the catalogue. */
    solrSearch: SolrSearch
  }
}

/**
 * The Solr integration: `fastify.solr` with the client, the live schema and
 * the indexer (writes record index operations in the outbox while Solr is
 * active; settings changes apply without a restart), and `fastify.solrSearch`.
 */
export default fp(async fastify => {
  const { db, outbox, contentTypes: types, content, solrSettings: settings } = fastify
  const solr = new SolrService({ settings, db, outbox, types, content, log: fastify.log })
  fastify.decorate('solr', solr)
  const solrFields = new Set(solr.generatedFields)
  settings.addCheck(boostRulesCheck(solrFields))
  fastify.decorate('solrSearch', new SolrSearch({
    db,
    solr: solr.client,
    settings: () => settings.current,
    translator: new SolrQueryTranslator(solrFields),
    catalogSearch: fastify.catalogSearch,
    listings: fastify.listings,
    types
  }))
  solr.connect(content)
  fastify.addHook('onReady', async () => { await solr.start() })
  fastify.addHook('onClose', async () => { await solr.close() })
}, { name: 'solr', dependencies: ['content', 'solr-settings'] })
