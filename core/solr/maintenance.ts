import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { Db } from '../db/db.js'
import { retryWhileUnavailable } from '../db/faults.js'
import type { ContentTypeRegistry } from '../content/registry.js'
import { schemaDrift, schemaXml, solrconfigXml, type SchemaDrift } from './configset.js'
import type { Indexer } from '../indexing/delivery.js'
import type { Solr } from './client.js'

/** Progress of a long operation: one call per batch. */
export type Progress = (done: number, total: number) => void

/** Catalogue against Solr, by UID and `modified`. */
export interface Drift { missing: string[], orphan: string[], stale: string[] }

export const driftCount = (d: Drift): number => d.missing.length + d.orphan.length + d.stale.length

/** The result line of `sync`, the same on a terminal and over HTTP. */
export const driftLine = (d: Drift, check: boolean): string =>
  `missing ${d.missing.length}, orphan ${d.orphan.length}, stale ${d.stale.length}${check ? '' : ' (repaired)'}`

export interface SchemaReport {
  /** Committed files that differ from what the content types generate. */
  staleFiles: string[]
  /** Field drift of the live core (null when it could not be read). */
  live: SchemaDrift | null
  liveError?: string
}

/** The live core's part of a schema report, the same on a terminal and over HTTP. */
export function liveSchemaLine (report: SchemaReport): string {
  if (report.live === null) return `live core not checked: ${report.liveError ?? ''}`
  return `live core: missing fields ${report.live.missing.join(', ') || 'none'}; unknown fields ${report.live.extra.join(', ') || 'none'}`
}

const BATCH = 1000
/** The generated configset, by file name under conf/. */
export const configsetFiles = (types: ContentTypeRegistry): Record<string, string> =>
  ({ 'schema.xml': schemaXml(types), 'solrconfig.xml': solrconfigXml() })

export async function writeConfigset (confDir: string, files: Record<string, string>): Promise<void> {
  for (const [name, text] of Object.entries(files)) await writeFile(join(confDir, name), text)
}

/**
 * The maintenance operations (docs/search.md, "Operations"), shared by the CLI and
 * `@solr-maintenance`: reindex, sync, clear, schema. A step whose database
 * connection failed (terminated, the server restarting) runs again — each
 * sends current documents, so running one twice does no harm — and a long
 * run goes on instead of starting over; when the database stays away the
 * DatabaseUnavailable is thrown.
 */
export class SolrMaintenance {
  /** `generatedFields`: the fields of the generated configset, to compare with the live core's. */
  constructor (private readonly db: Db, private readonly types: ContentTypeRegistry, private readonly client: Solr,
    private readonly indexer: Indexer, private readonly generatedFields: string[]) {}

  /** Sends the full current documents of these objects (no commit). */
  private async index (uids: string[]): Promise<void> {
    const current = await this.indexer.currentDocuments(uids)
    await this.client.update(current)
  }

  /**
   * Every object (or every object of one type) in batches, then one commit.
   * Two steps overlap: while Solr takes one batch, the next is read and
   * built from the database (a reindex is bound by the slower of the two,
   * not by their sum).
   */
  async reindex (options: { type?: string, batchSize?: number }, progress: Progress = () => {}): Promise<number> {
    if (options.type !== undefined && this.types.get(options.type) === undefined) throw new Error(`Unknown content type '${options.type}'.`)
    const size = options.batchSize ?? BATCH
    const filter = options.type !== undefined ? 'AND portal_type = $1' : 'AND $1::text IS NULL'
    const { rows: [{ count }] } = await retryWhileUnavailable(async () =>
      await this.db.query<{ count: number }>(`SELECT count(*) FROM content WHERE path <> '/' ${filter}`, [options.type ?? null]))
    /** The next batch after `after` in path order, with its documents built. */
    const read = async (after: string): Promise<{ last: string, documents: Array<Record<string, unknown>> } | null> =>
      await retryWhileUnavailable(async () => {
        const { rows } = await this.db.query<{ uid: string, path: string }>(
          `SELECT uid, path FROM content WHERE path > $2 ${filter} ORDER BY path LIMIT ${size}`, [options.type ?? null, after])
        if (rows.length === 0) return null
        return { last: rows[rows.length - 1].path, documents: await this.indexer.currentDocuments(rows.map(r => r.uid)) }
      })
    let done = 0
    progress(0, count)
    let next = read('/')
    for (let batch = await next; batch !== null; batch = await next) {
      next = read(batch.last)
      // The read ahead must not be an unhandled rejection while this batch is sent; it is awaited above.
      next.catch(() => {})
      await this.client.update(batch.documents)
      done += batch.documents.length
      progress(done, Math.max(count, done))
    }
    await this.client.commit()
    return done
  }

  /** What Solr lacks (missing), has in excess (orphan) or has in an older version (stale). */
  async drift (): Promise<Drift> {
    const solrModified = new Map<string, number>()
    for (let start = 0; ; start += BATCH * 2) {
      const answer = await this.client.select({ q: '*:*', fl: 'UID,modified', sort: 'UID asc', rows: BATCH * 2, start })
      for (const doc of answer.response.docs) solrModified.set(String(doc.UID), Date.parse(String(doc.modified)))
      if (answer.response.docs.length < BATCH * 2) break
    }
    const { rows } = await this.db.query<{ uid: string, modified: Date }>("SELECT uid, modified FROM content WHERE path <> '/'")
    const drift: Drift = { missing: [], orphan: [], stale: [] }
    for (const row of rows) {
      const there = solrModified.get(row.uid)
      if (there === undefined) drift.missing.push(row.uid)
      else if (there !== row.modified.getTime()) drift.stale.push(row.uid)
      solrModified.delete(row.uid)
    }
    drift.orphan = [...solrModified.keys()]
    return drift
  }

  /** Measures the drift and, unless `check`, repairs it: index missing and stale objects, remove orphans, commit. */
  async sync (options: { check?: boolean }, progress: Progress = () => {}): Promise<Drift> {
    const drift = await retryWhileUnavailable(async () => await this.drift())
    if (options.check === true) return drift
    const toIndex = [...drift.missing, ...drift.stale]
    const total = toIndex.length + drift.orphan.length
    progress(0, total)
    for (let i = 0; i < toIndex.length; i += BATCH) {
      await retryWhileUnavailable(async () => { await this.index(toIndex.slice(i, i + BATCH)) })
      progress(Math.min(i + BATCH, toIndex.length), total)
    }
    for (let i = 0; i < drift.orphan.length; i += BATCH) {
      await this.client.deleteByIds(drift.orphan.slice(i, i + BATCH))
      progress(toIndex.length + Math.min(i + BATCH, drift.orphan.length), total)
    }
    await this.client.commit()
    return drift
  }

  /** Removes every document from the core. */
  async clear (): Promise<void> {
    await this.client.deleteByQuery('*:*')
  }

  /**
   * Compares the generated configset with the files in `confDir` and with
   * the live core's fields; `write` writes the generated files first.
   */
  async schema (confDir: string, options: { write?: boolean }): Promise<SchemaReport> {
    const files = configsetFiles(this.types)
    if (options.write === true) await writeConfigset(confDir, files)
    const staleFiles: string[] = []
    for (const [name, text] of Object.entries(files)) {
      const committed = await readFile(join(confDir, name), 'utf8').catch(() => null)
      if (committed !== text) staleFiles.push(name)
    }
    try {
      const live = (await this.client.fields()).map(f => f.name)
      return { staleFiles, live: schemaDrift(this.generatedFields, live) }
    } catch (err) {
      return { staleFiles, live: null, liveError: (err as Error).message }
    }
  }
}
