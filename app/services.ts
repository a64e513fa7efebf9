import type { Config } from '../core/config/config.js'
import { contentTypesDir } from '../core/config/paths.js'
import { openContent, type ContentCore } from '../core/content/open.js'
import type { Db } from '../core/db/db.js'
import { openDatabase } from '../core/db/open.js'
import { openAsyncIndexing } from '../core/indexing/async.js'
import type { AsyncIndexing } from '../core/indexing/queue/async-indexing.js'
import type { Logger } from '../core/log.js'
import { SolrService } from '../core/solr/service.js'
import { SolrSettingsStore } from '../core/solr/settings.js'

/** The core services of a process that serves no HTTP. */
export interface Services extends ContentCore {
  db: Db
  solrSettings: SolrSettingsStore
  solr: SolrService
  /** null when async_indexing is off. */
  indexing: AsyncIndexing | null
  /** Stops the background work (finishing jobs in flight) and closes the connections. */
  close: () => Promise<void>
}

/**
 * Assembles what the index worker and the CLI need — the database, the
 * content types, the Solr settings, Solr and the queue — from the same core
 * parts the web process's plugins assemble, without routes and without the
 * web process's first-start seeding (site, admin user). The index worker
 * takes jobs from the queue; the CLI runs no background work at all (its
 * operations write to Solr themselves, and it would only take jobs to give them back).
 */
export async function openServices (config: Config, log: Logger, process: 'worker' | 'cli'): Promise<Services> {
  const worker = process === 'worker'
  const db = await openDatabase(config, log, process)
  try {
    const core = await openContent(db, [contentTypesDir])
    const solrSettings = new SolrSettingsStore(db, config)
    await solrSettings.load()
    const solr = new SolrService({ settings: solrSettings, db, outbox: core.outbox, types: core.types, content: core.content, log })
    solr.connect(core.content)
    const indexing = await openAsyncIndexing({ solr, content: core.content, settings: solrSettings, outbox: core.outbox, log, redisUrl: config.REDIS_URL, worker, closeTimeoutMs: config.SHUTDOWN_TIMEOUT_MS })
    if (worker) {
      await solr.start()
      indexing?.start()
    } else if (solr.active()) {
      await solr.readSchema()
    }
    return {
      ...core,
      db,
      solrSettings,
      solr,
      indexing,
      close: async () => {
        await indexing?.close()
        await solr.close()
        await db.close()
      }
    }
  } catch (err) {
    await db.close()
    throw err
  }
}
