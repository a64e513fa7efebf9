import { splitBase, SolrUnavailable } from './client.js'
import type { SolrSettings } from './settings.js'
import { storedZip } from './zip.js'

/**
 * How long one admin call may take: Solr's own Collections API waits up to
 * 180 s for a CREATE or RELOAD to reach every replica.
 */
const ADMIN_TIMEOUT_MS = 180_000

export interface DeployOptions {
  /** Name of the configset in ZooKeeper; default: the collection's name. */
  configName?: string
  /** For a new collection only: an existing one keeps its shards and replicas. */
  shards: number
  replicas: number
}

export interface DeployResult {
  collection: string
  configName: string
  /** created: the collection is new; reloaded: it existed and now reads the uploaded configset. */
  action: 'created' | 'reloaded'
}

type Query = Record<string, string | number>

/**
 * Deploys the generated configset to SolrCloud through Solr's admin APIs,
 * on the node (or load balancer) and collection that `base` names
 * (`/solr/plone`: admin at `/solr/admin/…`, collection `plone`): uploads it
 * (Configsets API, overwriting an earlier upload and removing files it no
 * longer has), then creates the collection (Collections API) or, when it
 * exists, reloads it so that every replica reads the new files.
 */
export class SolrCloudAdmin {
  constructor (private readonly settings: () => SolrSettings) {}

  async deploy (files: Record<string, string>, options: DeployOptions): Promise<DeployResult> {
    const [, collection] = splitBase(this.settings().base)
    const configName = options.configName ?? collection
    await this.call('configs', { action: 'UPLOAD', name: configName, overwrite: 'true', cleanup: 'true' }, 'configset upload', storedZip(files))
    const { collections } = await this.call<{ collections?: string[] }>('collections', { action: 'LIST' }, 'collection list')
    if (collections?.includes(collection) === true) {
      await this.call('collections', { action: 'RELOAD', name: collection }, `reload of collection '${collection}'`)
      return { collection, configName, action: 'reloaded' }
    }
    await this.call('collections', {
      action: 'CREATE',
      name: collection,
      'collection.configName': configName,
      numShards: options.shards,
      replicationFactor: options.replicas,
      waitForFinalState: 'true'
    }, `creation of collection '${collection}'`)
    return { collection, configName, action: 'created' }
  }

  /** One admin call; a refusal or an unreachable Solr is a SolrUnavailable that says which step failed and Solr's reason. */
  private async call<T = unknown> (api: 'configs' | 'collections', query: Query, step: string, zip?: Buffer): Promise<T> {
    const s = this.settings()
    const [path] = splitBase(s.base)
    const url = new URL(`http://${s.host}:${s.port}${path}/admin/${api}`)
    for (const [key, value] of Object.entries(query)) url.searchParams.append(key, String(value))
    url.searchParams.append('wt', 'json')
    const headers: Record<string, string> = {}
    if (s.login !== '' && s.password !== '') headers.authorization = `Basic ${Buffer.from(`${s.login}:${s.password}`).toString('base64')}`
    if (zip !== undefined) headers['content-type'] = 'application/octet-stream'
    let res: Response
    try {
      res = await fetch(url, { method: zip === undefined ? 'GET' : 'POST', headers, body: zip === undefined ? undefined : new Uint8Array(zip), signal: AbortSignal.timeout(ADMIN_TIMEOUT_MS) })
    } catch (err) {
      const cause = (err as { cause?: { message?: string } }).cause?.message ?? (err as Error).message
      throw new SolrUnavailable(`${step} failed: Solr is unreachable at ${url.origin}: ${cause}`)
    }
    const text = await res.text()
    let body: { error?: { msg?: string }, failure?: unknown } | undefined
    try { body = JSON.parse(text) } catch { body = undefined }
    if (!res.ok) {
      const reason = body?.error?.msg ?? (text.trim().slice(0, 300) || res.statusText)
      throw new SolrUnavailable(`${step} refused: Solr answered ${res.status}: ${reason}`, res.status)
    }
    // A Collections API call that failed on some nodes may still answer 200, with what failed where.
    if (body?.failure !== undefined) throw new SolrUnavailable(`${step} failed on some nodes: ${JSON.stringify(body.failure).slice(0, 500)}`, res.status)
    return body as T
  }
}
