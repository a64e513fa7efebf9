// Shared set-up of the Solr integration tests (not a test file): a real solr-dev
// core on the generated configset and the service with Solr on.
import { createServer, request } from 'node:http'
import type { AddressInfo } from 'node:net'
import { resolve } from 'node:path'
import { build, type TestApp } from '../helper.js'
import { startSolrDev, type SolrDev } from '../solr-dev/helper.js'

export const CONFIGSET = resolve(import.meta.dirname, '../../infra/solr')

interface TapLike { teardown: (fn: () => unknown) => void }

export interface SolrApp extends TestApp { solr: SolrDev }

/** solr-dev with the `plone` core on the generated configset. */
export async function startSolr (t: TapLike): Promise<SolrDev> {
  return await startSolrDev(t, { cores: { plone: CONFIGSET } })
}

/** The service pointed at `solr` (`env` adds or overrides settings); UIDs keep tests sharing a core apart. */
export async function buildWithSolr (t: TapLike, solr: SolrDev, env: Record<string, string> = {}): Promise<SolrApp> {
  const app = await build(t, { env: { SOLR_ACTIVE: 'true', SOLR_PORT: String(solr.port), SOLR_BASE: '/solr/plone', ...env } })
  return { ...app, solr }
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
