// Shared set-up of the Solr integration tests (not a test file): a real solr-dev
// core on the generated configset and the service with Solr on.
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
