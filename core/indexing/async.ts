import type { ContentStore } from '../content/store.js'
import type { Logger } from '../log.js'
import type { SolrService } from '../solr/service.js'
import type { SolrSettingsStore } from '../solr/settings.js'
import type { Outbox } from './outbox.js'
import type { AsyncIndexing } from './queue/async-indexing.js'

export interface AsyncIndexingSetup {
  solr: SolrService
  content: ContentStore
  settings: SolrSettingsStore
  outbox: Outbox
  log: Logger
  redisUrl: string
  /** Run a worker in this process (`INDEX_WORKER=inline`, the embedded database, `npm run worker`). */
  worker: boolean
  /** How long closing waits for the worker's jobs in flight (SHUTDOWN_TIMEOUT_MS). */
  closeTimeoutMs?: number
}

/**
 * Asynchronous indexing when `async_indexing` was on at start, else null:
 * writes queue their objects and the worker delivers them. The queue's code
 * is loaded only then: BullMQ and ioredis add ~30 MB to the resident set of
 * a process that never queues. Writes are connected to the queue.
 */
export async function openAsyncIndexing (setup: AsyncIndexingSetup): Promise<AsyncIndexing | null> {
  let announced = setup.solr.asyncIndexing
  setup.settings.onChange(changed => {
    if (changed.async_indexing === announced) return
    announced = changed.async_indexing
    setup.log.warn(`async_indexing is now ${String(announced)}: it applies at the next restart (the outbox keeps every operation meanwhile)`)
  })
  if (!setup.solr.asyncIndexing) return null
  const { AsyncIndexing } = await import('./queue/async-indexing.js')
  const { solr, settings } = setup
  const indexing = new AsyncIndexing({
    outbox: setup.outbox,
    indexer: solr.indexer,
    settings: () => settings.current,
    log: setup.log,
    redisUrl: setup.redisUrl,
    worker: setup.worker,
    closeTimeoutMs: setup.closeTimeoutMs,
    onSolrRecovered: async () => { await solr.readSchema() }
  })
  setup.content.useIndexOperations(indexing.queue)
  return indexing
}
