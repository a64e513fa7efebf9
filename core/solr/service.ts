import type { Logger } from '../log.js'
import type { ContentStore } from '../content/store.js'
import type { Db } from '../db/db.js'
import type { Outbox } from '../indexing/outbox.js'
import type { ContentTypeRegistry } from '../content/registry.js'
import type { SolrSettingsStore } from './settings.js'
import { Solr } from './client.js'
import { schemaDrift, solrFields } from './configset.js'
import { SolrDocuments } from './documents.js'
import { Indexer } from '../indexing/delivery.js'
import { SolrMaintenance } from './maintenance.js'

export interface SolrServiceOptions {
  settings: SolrSettingsStore
  db: Db
  outbox: Outbox
  types: ContentTypeRegistry
  content: ContentStore
  log: Logger
}

/**
 * The Solr integration as plugins see it (`fastify.solr`): the client
 * (settings-driven: every call reads the current host, port, timeouts), the
 * live core's fields, and the indexer with its outbox.
 */
export class SolrService {
  readonly client: Solr
  readonly documents: SolrDocuments
  readonly indexer: Indexer
  readonly maintenance: SolrMaintenance
  /** The live core's fields (Schema API); null until read (then every generated field is sent). */
  fields: ReadonlySet<string> | null = null
  /** The fields of the generated configset. */
  readonly generatedFields: string[]
  /**
   * `async_indexing`, read once at start: the queue, the relay and the
   * worker are set up (or not) then, so switching it takes a restart.
   */
  readonly asyncIndexing: boolean
  private warnedDrift = ''

  private readonly settings: SolrSettingsStore
  private readonly log: Logger

  constructor ({ settings, db, outbox, types, content, log }: SolrServiceOptions) {
    this.settings = settings
    this.log = log
    this.client = new Solr(() => settings.current)
    this.documents = new SolrDocuments(types)
    this.generatedFields = solrFields(types).map(f => f.name)
    this.asyncIndexing = settings.current.async_indexing
    this.indexer = new Indexer({
      db,
      outbox,
      content,
      documents: this.documents,
      solr: this.client,
      settings: () => settings.current,
      fields: () => this.fields,
      log,
      onRecovered: async () => { await this.readSchema() }
    })
    this.maintenance = new SolrMaintenance(db, types, this.client, this.indexer, this.generatedFields)
  }

  active (): boolean {
    return this.settings.current.active
  }

  /**
   * From now on writes record their index operations and deliver them (the
   * indexer), and settings changes apply at once. Switching Solr on later:
   * what changed while it was off was never recorded, so the switch is
   * logged with the advice to run `sync`, which indexes what is missing or
   * stale and removes orphans.
   */
  connect (content: ContentStore): void {
    content.useIndexOperations(this.indexer)
    let wasActive = this.active()
    this.settings.onChange(async settings => {
      if (settings.active) {
        await this.readSchema()
        this.indexer.schedule(0)
        if (!wasActive) this.log.warn('Solr was switched on: content changed while it was off is not in Solr yet; run `npm run solr -- sync`')
      }
      wasActive = settings.active
    })
  }

  /**
   * Once the process is ready: the live schema, and the background delivery
   * of the outbox — unless the queue's relay and worker deliver it
   * (async_indexing; core/indexing/async.ts).
   */
  async start (): Promise<void> {
    if (this.active()) await this.readSchema()
    if (!this.asyncIndexing) this.indexer.start()
  }

  /**
   * Reads the live core's fields; warns once per distinct drift from the
   * generated configset. When Solr cannot be reached the last known fields stay.
   */
  async readSchema (): Promise<void> {
    try {
      this.fields = new Set((await this.client.fields()).map(f => f.name))
    } catch (err) {
      this.log.warn({ err }, `Could not read the Solr schema: ${(err as Error).message}`)
      return
    }
    const drift = schemaDrift(this.generatedFields, this.fields)
    const key = JSON.stringify(drift)
    if (key === this.warnedDrift) return
    this.warnedDrift = key
    if (drift.missing.length > 0 || drift.extra.length > 0) {
      this.log.warn(drift, 'The Solr core\'s schema differs from the generated configset (`npm run solr -- schema --check`); only fields it knows are sent')
    }
  }

  async close (): Promise<void> {
    await this.indexer.stop()
    this.client.close()
  }
}
