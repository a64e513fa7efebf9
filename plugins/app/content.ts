import fp from 'fastify-plugin'
import type { Catalog } from '../../core/catalog/catalog.js'
import { CATALOG_CHANGED, KeptResults } from '../../core/catalog/kept-results.js'
import { ResidentCatalog } from '../../core/catalog/resident/resident.js'
import { othersOnly } from '../../core/db/notifications.js'
import { FreshStatistics } from '../../core/db/statistics.js'
import { Listings } from '../../core/catalog/listing.js'
import { CatalogSearch, RANKED_CANDIDATES } from '../../core/catalog/search.js'
import { KeptObjects } from '../../core/content/kept-objects.js'
import { Locks } from '../../core/content/locks.js'
import { openContent } from '../../core/content/open.js'
import type { ContentTypeRegistry } from '../../core/content/registry.js'
import { Serializer } from '../../core/content/serializer.js'
import type { ContentStore } from '../../core/content/store.js'
import { Transitions } from '../../core/content/transitions.js'
import { Vocabularies } from '../../core/content/vocabularies.js'
import type { Outbox } from '../../core/indexing/outbox.js'
import { QueryParser } from '../../core/query/parse.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** The content types (one folder each under content-types/) and what derives from them. */
    contentTypes: ContentTypeRegistry
    /** The catalogue's writing side: its columns and rows. */
    catalog: Catalog
    catalogSearch: CatalogSearch
    /** The content tree: traversal and every write. */
    content: ContentStore
    /** Workflow transitions and their history. */
    transitions: Transitions
    /** Index operations recorded by every write, until Solr has them. */
    outbox: Outbox
    serializer: Serializer
    vocabularies: Vocabularies
    /** Folder listings and catalogue searches, as the caller may run them. */
    listings: Listings
    /** Locks of objects being edited (`@lock`). */
    locks: Locks
  }
}

/** Loads the content types and gives the catalogue the columns they declare. */
export default fp(async fastify => {
  const { types, catalog, outbox, content } = await openContent(fastify.db, fastify.contentTypeDirs)
  content.versionsKept = fastify.config.VERSIONS_KEPT
  fastify.decorate('contentTypes', types)
  fastify.decorate('catalog', catalog)
  const results = new KeptResults(fastify.db.notifications, content.writerId, fastify.config.KEPT_ROWS_BYTES)
  content.onCatalogChange((columns, uids) => { results.changed(columns, uids) })
  const kept = new KeptObjects(fastify.db.notifications, fastify.config.KEPT_OBJECTS_BYTES, content.writerId)
  content.keepReads(kept)
  fastify.caches.set('objects', () => kept.figures())
  for (const name of Object.keys(results.figures())) fastify.caches.set(name, () => results.figures()[name])
  const catalogSearch = new CatalogSearch(types, results)
  if (fastify.config.RESIDENT_CATALOG) {
    const resident = new ResidentCatalog(fastify.db, () => types.indexes.values(), fastify.db.notifications,
      { filterBytes: fastify.config.RESIDENT_FILTER_BYTES, rankedCandidates: RANKED_CANDIDATES }, fastify.log,
      async (uids, tsquery) => await catalogSearch.rankOf(fastify.db, uids, tsquery))
    content.onCatalogChange(() => { resident.changed() })
    fastify.db.notifications.onChange(CATALOG_CHANGED, othersOnly(content.writerId, () => { resident.changed() }))
    catalogSearch.useResident(resident)
    // Its look-ups are queries: answered here (hits) or left to PostgreSQL (misses).
    fastify.caches.set('resident_catalog', () => ({ entries: resident.documents, bytes: resident.byteSize, hits: resident.counts.answered, misses: resident.counts.declined }))
    resident.start()
    fastify.addHook('onClose', async () => { await resident.close() })
  }
  fastify.decorate('catalogSearch', catalogSearch)
  fastify.decorate('outbox', outbox)
  fastify.decorate('content', content)
  fastify.decorate('transitions', new Transitions(fastify.db, content))
  const serializer = new Serializer(types, fastify.config.VERSIONS_KEPT > 0)
  fastify.decorate('serializer', serializer)
  const parser = new QueryParser(name => catalogSearch.index(name))
  fastify.decorate('listings', new Listings({ db: fastify.db, parser, catalogSearch, store: content, serializer }))
  fastify.decorate('vocabularies', new Vocabularies(fastify.db, types))
  fastify.decorate('locks', new Locks(fastify.db, () => { kept.changed() }, content.writerId))
  const statistics = new FreshStatistics(fastify.db, fastify.log)
  statistics.start()
  fastify.addHook('onClose', async () => { statistics.close() })
  fastify.log.debug({ types: [...types.types.keys()] }, 'content types loaded')
}, { name: 'content', dependencies: ['db', 'caches'] })
