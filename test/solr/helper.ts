// Shared set-up of the Solr tests (not a test file): a real solr-dev core on the generated
// configset, the service pointed at it, documents pushed with the indexer's own builder, and
// proxies in front of it that record or slow down what the service sends.
import { createServer, request } from 'node:http'
import { connect, createServer as createTcpServer, type AddressInfo, type Socket } from 'node:net'
import { resolve } from 'node:path'
import type { FastifyInstance } from 'fastify'
import { indexableOf } from '../../core/content/indexable.js'
import { Solr } from '../../core/solr/client.js'
import { SolrDocuments } from '../../core/solr/documents.js'
import { build, type TestApp } from '../helper.js'
import { startSolrDev, type SolrDev } from '../solr-dev/helper.js'

export const CONFIGSET = resolve(import.meta.dirname, '../../infra/solr')

interface TapLike { teardown: (fn: () => unknown) => void }

export interface SolrApp extends TestApp { solr: SolrDev }

/** solr-dev with the `plone` core on the generated configset. */
export async function startSolr (t: TapLike): Promise<SolrDev> {
  return await startSolrDev(t, { cores: { plone: CONFIGSET } })
}

/**
 * The service pointed at `solr` (or at a proxy of it, by its port), with Solr on; `env` adds or
 * overrides settings, and a setting it gives as undefined is left out (`SOLR_ACTIVE: undefined`:
 * the switch left to the control panel). UIDs keep tests sharing a core apart.
 */
export async function buildWithSolr (t: TapLike, solr: SolrDev, env?: Settings): Promise<SolrApp>
export async function buildWithSolr (t: TapLike, solr: { port: number }, env?: Settings): Promise<TestApp>
export async function buildWithSolr (t: TapLike, solr: SolrDev | { port: number }, env: Settings = {}): Promise<TestApp | SolrApp> {
  const settings = Object.entries({ SOLR_ACTIVE: 'true', SOLR_PORT: String(solr.port), SOLR_BASE: '/solr/plone', ...env })
  const app = await build(t, { env: Object.fromEntries(settings.filter((entry): entry is [string, string] => entry[1] !== undefined)) })
  return 'get' in solr ? { ...app, solr } : app
}

type Settings = Record<string, string | undefined>

/**
 * Settings of the search tests, which put Solr's documents there themselves (`pushToSolr`): the
 * indexer commits within a minute rather than per write, which makes their set-up faster.
 */
export const PUSHED: Record<string, string> = { SOLR_AUTO_COMMIT: 'false', SOLR_COMMIT_WITHIN: '60000' }

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

/** Solr's committed documents matching `q` (what a search sees). */
export async function solrDocs (solr: SolrDev, q = '*:*', extra: Record<string, string> = {}): Promise<Array<Record<string, any>>> {
  const res = await solr.get('plone/select', { q, rows: 10000, fl: '*', ...extra })
  if (res.status !== 200) throw new Error(`select failed: ${JSON.stringify(res.body)}`)
  return res.body.response.docs
}

/** The document of one UID, as real-time get sees it (committed or not). */
export async function realTime (solr: SolrDev, uid: string): Promise<Record<string, any> | null> {
  const res = await solr.get('plone/get', { id: uid })
  return res.body.doc ?? null
}

export const sleep = async (ms: number): Promise<void> => { await new Promise(resolve => setTimeout(resolve, ms)) }

/** One request as it reached the search server. */
export interface Recorded { method: string, path: string, params: URLSearchParams, contentType: string | undefined }

/**
 * An HTTP proxy in front of `port` that records every request (method, path,
 * query parameters, content type) before passing it on unchanged: what the
 * service really sends, as Solr would log it.
 */
export async function recordingProxy (t: TapLike, port: number): Promise<{ port: number, requests: Recorded[] }> {
  const requests: Recorded[] = []
  const server = createServer((incoming, outgoing) => {
    const url = new URL(incoming.url ?? '/', 'http://proxy')
    requests.push({ method: incoming.method ?? '', path: url.pathname, params: url.searchParams, contentType: incoming.headers['content-type'] })
    const upstream = request({ host: '127.0.0.1', port, method: incoming.method, path: incoming.url, headers: incoming.headers }, answer => {
      outgoing.writeHead(answer.statusCode ?? 502, answer.headers)
      answer.pipe(outgoing)
    })
    upstream.on('error', () => { outgoing.destroy() })
    incoming.pipe(upstream)
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  t.teardown(async () => {
    server.closeAllConnections()
    await new Promise(resolve => server.close(resolve))
  })
  return { port: (server.address() as AddressInfo).port, requests }
}

/**
 * A slow search server: a TCP proxy to `port` that holds every request for
 * `delayMs` before passing it on (a Solr under load, for timeouts and slow-query logs).
 */
export async function slowProxy (t: TapLike, port: number, delayMs: number): Promise<number> {
  const sockets = new Set<Socket>()
  const server = createTcpServer(client => {
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
