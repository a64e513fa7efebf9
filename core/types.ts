import type { CatalogSearch } from './catalog-query.js'
import type { Catalog } from './catalog.js'
import type { Config } from './config.js'
import type { AsyncIndexing } from './queue/async-indexing.js'
import type { ContentStore } from './content-store.js'
import type { Db } from './db.js'
import type { ContentTypeRegistry } from './registry.js'
import type { Principal } from './security.js'
import type { Serializer } from './serializer.js'
import type { Settings } from './settings.js'
import type { SolrService } from './solr/service.js'
import type { Vocabularies } from './vocabularies.js'

/** Everything plugins share, declared in one place (decorators are the only shared state). */
declare module 'fastify' {
  interface FastifyInstance {
    config: Config
    contentTypeDirs: string[]
    db: Db
    types: ContentTypeRegistry
    catalog: Catalog
    content: ContentStore
    serializer: Serializer
    catalogSearch: CatalogSearch
    vocabularies: Vocabularies
    settings: Settings
    /** The Solr integration: client, live schema, indexer (plugins/app/solr.ts). */
    solr: SolrService
    /** Asynchronous indexing: queue, relay, worker (plugins/app/index-queue.ts); null when async_indexing is off. */
    indexing: AsyncIndexing | null
  }
  interface FastifyRequest {
    /** The authenticated caller, or anonymous. */
    principal: Principal
    /** The Bearer token the caller sent, once verified. */
    token: string | null
    /** `{base_url}` as this client sees it. */
    readonly baseUrl: string
    /** Path of the content object the request addresses (`/` = site root). */
    readonly contextPath: string
    absoluteUrl: (url: string) => string
  }
  interface FastifyContextConfig {
    /** The route answers with something other than JSON (downloads, the OpenAPI page). */
    binary?: boolean
  }
}
