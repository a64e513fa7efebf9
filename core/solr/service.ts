import type { FastifyBaseLogger } from 'fastify'
import type { ContentStore } from '../content-store.js'
import type { Db } from '../db.js'
import type { ContentTypeRegistry } from '../registry.js'
import type { Settings } from '../settings.js'
import { Solr } from './client.js'
import { schemaDrift, solrFields } from './configset.js'
import { SolrDocuments } from './documents.js'
import { Indexer } from './indexer.js'
import { SolrMaintenance } from './maintenance.js'

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

  constructor (private readonly settings: Settings, db: Db, types: ContentTypeRegistry, content: ContentStore, private readonly log: FastifyBaseLogger) {
    this.client = new Solr(() => settings.solr)
    this.documents = new SolrDocuments(types)
    this.generatedFields = solrFields(types).map(f => f.name)
    this.asyncIndexing = settings.solr.async_indexing
    this.indexer = new Indexer({
      db, content, documents: this.documents, solr: this.client, settings: () => settings.solr, fields: () => this.fields, log,
      onRecovered: async () => { await this.readSchema() }
    })
    this.maintenance = new SolrMaintenance(db, types, this)
  }

  active (): boolean {
    return this.settings.solr.active
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
