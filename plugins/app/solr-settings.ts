import fp from 'fastify-plugin'
import { SolrSettingsStore } from '../../core/solr/settings.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** The Solr control panel's values: declarative ones (environment, config file) win. */
    solrSettings: SolrSettingsStore
  }
}

export default fp(async fastify => {
  const settings = new SolrSettingsStore(fastify.db, fastify.config)
  await settings.load()
  fastify.decorate('solrSettings', settings)
}, { name: 'solr-settings', dependencies: ['db'] })
