// Shared set-up of the Solr search tests (not a test file): solr-dev with the generated
// configset, the service pointed at it, and documents pushed with the indexer's own builder.
import { connect, createServer, type AddressInfo, type Socket } from 'node:net'
import { dirname, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { FastifyInstance } from 'fastify'
import { indexableOf } from '../../core/content/indexable.js'
import { Solr } from '../../core/solr/client.js'
import { SolrDocuments } from '../../core/solr/documents.js'
import { build, type TestApp } from '../helper.js'
import { startSolrDev, type SolrDev } from '../solr-dev/helper.js'

export const CONFIGSET = resolve(dirname(fileURLToPath(import.meta.url)), '../../infra/solr')

interface TapLike { teardown: (fn: () => unknown) => void }

/** solr-dev on the generated configset. */
export async function startSolr (t: TapLike): Promise<SolrDev> {
  return await startSolrDev(t, { cores: { plone: CONFIGSET } })
}

/**
 * The service with Solr declared at `port`; `active` false leaves the switch
 * to the control panel. The indexer commits within a minute rather than per
 * write (faster set-up): pushToSolr commits what the tests search.
 */
export async function buildWithSolr (t: TapLike, port: number, active = true): Promise<TestApp> {
  return await build(t, {
    env: { ...(active ? { SOLR_ACTIVE: 'true' } : {}), SOLR_PORT: String(port), SOLR_BASE: '/solr/plone', SOLR_AUTO_COMMIT: 'false', SOLR_COMMIT_WITHIN: '60000' }
  })
}

/**
 * Makes Solr hold exactly the service's content (the site root apart, as in
 * the catalogue): every object rebuilt with SolrDocuments.build from
 * ContentStore.indexable, as the indexer does, then committed.
 */
export async function pushToSolr (app: FastifyInstance): Promise<void> {
  const solr = new Solr(() => app.solrSettings.current)
  try {
    const known = new Set((await solr.fields()).map(f => f.name))
    const documents = new SolrDocuments(app.contentTypes)
    const { rows } = await app.db.query<{ path: string }>("SELECT path FROM content WHERE path <> '/' ORDER BY path")
    const docs = []
    for (const { path } of rows) {
      const found = (await app.content.locate(path)).found!
      docs.push(documents.build(found.type, indexableOf(found), known))
    }
    await solr.deleteByQuery('*:*')
    await solr.update(docs, { commit: true })
  } finally {
    solr.close()
  }
}

/** A Manager's change of the Solr settings through the control panel. */
export async function patchSettings (app: TestApp, changes: Record<string, unknown>): Promise<void> {
  const res = await app.call('PATCH', '/@controlpanels/solr-controlpanel', changes, await app.tokenFor('admin'))
  if (res.statusCode !== 204) throw new Error(`PATCH settings failed: ${res.statusCode} ${res.body}`)
}

/**
 * A slow search server: a TCP proxy to `port` that holds every request for
 * `delayMs` before passing it on (a Solr under load, for timeouts and slow-query logs).
 */
export async function slowProxy (t: TapLike, port: number, delayMs: number): Promise<number> {
  const sockets = new Set<Socket>()
  const server = createServer(client => {
    const upstream = connect(port, '127.0.0.1')
    for (const s of [client, upstream]) { sockets.add(s); s.on('error', () => { client.destroy(); upstream.destroy() }) }
    client.on('data', data => { setTimeout(() => { if (!upstream.destroyed) upstream.write(data) }, delayMs) })
    upstream.pipe(client)
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  t.teardown(async () => {
    for (const s of sockets) s.destroy()
    await new Promise(resolve => server.close(resolve))
  })
  return (server.address() as AddressInfo).port
}
