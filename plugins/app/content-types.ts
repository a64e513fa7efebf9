import fp from 'fastify-plugin'
import { CatalogSearch } from '../../core/catalog-query.js'
import { Catalog } from '../../core/catalog.js'
import { ContentStore } from '../../core/content-store.js'
import { ContentTypeRegistry } from '../../core/registry.js'
import { Serializer } from '../../core/serializer.js'
import { Vocabularies } from '../../core/vocabularies.js'

/**
 * Loads the content types (one folder each under content-types/), gives the
 * catalogue the columns they declare, and creates the site on first start.
 */
export default fp(async fastify => {
  const types = await ContentTypeRegistry.load(fastify.contentTypeDirs)
  const catalog = new Catalog(types)
  await catalog.ensureSchema(fastify.db)
  const content = new ContentStore(fastify.db, types, catalog)
  await content.ensureSite()
  fastify.decorate('types', types)
  fastify.decorate('catalog', catalog)
  fastify.decorate('content', content)
  fastify.decorate('serializer', new Serializer(types))
  fastify.decorate('catalogSearch', new CatalogSearch(types))
  fastify.decorate('vocabularies', new Vocabularies(fastify.db, types))
  fastify.log.debug({ types: [...types.types.keys()] }, 'content types loaded')
}, { name: 'content-types', dependencies: ['db'] })
