import { Agent } from 'node:http'
import { createRequire } from 'node:module'
import { inherits } from 'node:util'
import type { SolrSettings } from './settings.js'
import { tracing, type SpanAttributes } from '../tracing.js'

/** A failed Solr call: Solr's own message (or the network's), and the HTTP status when Solr answered. */
export class SolrUnavailable extends Error {
  constructor (message: string, readonly status?: number) {
    super(message)
    this.name = 'SolrUnavailable'
  }
}

/** The part of solr-client (a CommonJS package without types) that the service uses. */
interface RawClient {
  addAsync: (docs: object[], options?: Record<string, unknown>) => Promise<unknown>
  commitAsync: (options?: Record<string, unknown>) => Promise<unknown>
  deleteByQueryAsync: (query: string, options?: Record<string, unknown>) => Promise<unknown>
  updateAsync: (data: object, options?: Record<string, unknown>) => Promise<unknown>
  getAsync: (handler: string, query: string) => Promise<unknown>
  pingAsync: () => Promise<unknown>
}
const require = createRequire(import.meta.url)

/**
 * solr-client builds its SolrError from Solr's answer and then overwrites the
 * message with the HTTP status text, losing Solr's explanation ("undefined
 * field nonsense"). Before it loads, its error class is replaced by one that
 * also keeps the body, so that every failure can carry Solr's own message.
 */
function keepSolrErrorBodies (): void {
  const path = require.resolve('solr-client/lib/error/solr-error.js')
  const Original = require(path) as new (req: unknown, res: unknown, text: string) => Error
  function SolrErrorWithBody (this: Error & { body?: string }, req: unknown, res: unknown, text: string): void {
    Original.call(this, req, res, text)
    this.body = text
  }
  inherits(SolrErrorWithBody, Original)
  require.cache[path]!.exports = SolrErrorWithBody
}
interface SolrClientModule { createClient: (options: object) => RawClient }
let solrClient: SolrClientModule | undefined

/** solr-client, loaded at the first call to Solr: it adds ~25 MB to the resident set of a service that never calls Solr. */
function loadSolrClient (): SolrClientModule {
  if (solrClient === undefined) {
    keepSolrErrorBodies()
    solrClient = require('solr-client') as SolrClientModule
  }
  return solrClient
}

export interface SelectResponse {
  response: { numFound: number, start: number, maxScore?: number, docs: Array<Record<string, unknown>> }
  facet_counts?: { facet_fields: Record<string, Array<string | number>> }
  highlighting?: Record<string, Record<string, string[]>>
  responseHeader: { QTime: number }
}

export interface SchemaField { name: string, type: string, indexed?: boolean, stored?: boolean, multiValued?: boolean }

type Params = Record<string, string | number | boolean | Array<string | number>>

/** Encodes select parameters; repeated parameters (`fq`, `facet.field`) as arrays. */
export function encodeParams (params: Params): string {
  const search = new URLSearchParams()
  for (const [key, value] of Object.entries(params)) {
    for (const item of Array.isArray(value) ? value : [value]) search.append(key, String(item))
  }
  return search.toString()
}

const TIMEOUT = 'Solr did not answer in time (timeout).'

/** Solr's own error text from a failed call (solr-client keeps it in the HTTP error's body). */
function solrMessage (err: unknown): SolrUnavailable {
  if (err instanceof SolrUnavailable) return err
  const e = err as { name?: string, message?: string, statusCode?: number, body?: string, code?: string }
  if (e.name === 'AbortError' || e.code === 'ABORT_ERR') return new SolrUnavailable(TIMEOUT)
  let detail = e.message ?? String(err)
  if (typeof e.body === 'string') {
    try {
      detail = (JSON.parse(e.body) as { error?: { msg?: string } }).error?.msg ?? detail
    } catch { detail = e.body.slice(0, 500) }
  }
  return new SolrUnavailable(e.statusCode !== undefined ? `Solr answered ${e.statusCode}: ${detail}` : `Solr is unreachable: ${detail}`, e.statusCode)
}

/**
 * The service's one way to talk to Solr: solr-client, configured from the
 * current settings, with a deadline on every call (index_timeout for writes,
 * search_timeout for reads; 0 = none) and errors that carry Solr's message.
 */
/** Told of every call to Solr when it ends: its kind, how long it took (seconds) and whether it failed. */
export type SolrCallObserver = (kind: 'index' | 'search', seconds: number, failed: boolean) => void

/**
 * The calls the service makes, each with its kind (the metrics' label) and the HTTP request
 * solr-client sends for it: its method and handler (the last part of its path).
 */
const CALLS = {
  ping: { kind: 'search', method: 'GET', handler: 'admin/ping' },
  select: { kind: 'search', method: 'GET', handler: 'select' },
  schema: { kind: 'search', method: 'GET', handler: 'schema/fields' },
  add: { kind: 'index', method: 'POST', handler: 'update' },
  delete: { kind: 'index', method: 'POST', handler: 'update' },
  commit: { kind: 'index', method: 'POST', handler: 'update' }
} as const
type Call = keyof typeof CALLS

/** A failed call's span: Solr's HTTP status, or `timeout`, or `unreachable` — never Solr's message, which may quote a document. */
function failureOf (err: unknown): SpanAttributes {
  const status = err instanceof SolrUnavailable ? err.status : undefined
  if (status !== undefined) return { 'error.type': String(status), 'http.response.status_code': status }
  return { 'error.type': err instanceof SolrUnavailable && err.message === TIMEOUT ? 'timeout' : 'unreachable' }
}

export class Solr {
  private readonly agent = new Agent({ keepAlive: true, maxSockets: 16 })
  private readonly observers: SolrCallObserver[] = []
  /**
   * How a call is made, chosen once: timed alone, or, with tracing on (core/tracing.ts), inside an
   * HTTP client span of the request or job it serves: `GET /solr/plone/select`, with the server, the
   * path and the operation, never the query's parameters nor the documents (`solr.documents`: how many).
   */
  private readonly call: <T>(name: Call, fn: (client: RawClient) => Promise<unknown>, documents?: number) => Promise<T>

  constructor (private readonly settings: () => SolrSettings) {
    const traced = tracing()
    this.call = traced === undefined
      ? async (name, fn) => await this.timed(CALLS[name].kind, fn)
      : async (name, fn, documents) => {
        const { kind, method, handler } = CALLS[name]
        const s = this.settings()
        const [path, core] = splitBase(s.base)
        const urlPath = [path, core, handler].filter(part => part !== '').join('/')
        const attributes: SpanAttributes = {
          'http.request.method': method,
          'server.address': s.host,
          'server.port': s.port,
          'url.full': `http://${s.host}:${s.port}${urlPath}`,
          'url.path': urlPath,
          'url.template': urlPath,
          'solr.operation': name,
          'solr.kind': kind
        }
        if (documents !== undefined) attributes['solr.documents'] = documents
        return await traced.client(`${method} ${urlPath}`, attributes, async () => await this.timed(kind, fn), failureOf)
      }
  }

  /** Adds an observer of every call (the metrics). */
  observe (observer: SolrCallObserver): void {
    this.observers.push(observer)
  }

  /** A client for one call: cheap (a plain object), and the only way to give each call its own deadline. */
  private client (timeoutSeconds: number): RawClient {
    const s = this.settings()
    const [path, core] = splitBase(s.base)
    // A timer counts whole milliseconds: a fraction of one would be refused, not waited for.
    const request = timeoutSeconds > 0 ? { signal: AbortSignal.timeout(Math.ceil(timeoutSeconds * 1000)) } : undefined
    const client = loadSolrClient().createClient({ host: s.host, port: s.port, path, core, solrVersion: '9.0', agent: this.agent, request })
    if (s.login !== '' && s.password !== '') (client as unknown as { basicAuth: (u: string, p: string) => void }).basicAuth(s.login, s.password)
    return client
  }

  private async timed<T> (kind: 'index' | 'search', fn: (client: RawClient) => Promise<unknown>): Promise<T> {
    const s = this.settings()
    const started = performance.now()
    let failed = false
    try {
      return await fn(this.client(kind === 'index' ? s.index_timeout : s.search_timeout)) as T
    } catch (err) {
      failed = true
      throw solrMessage(err)
    } finally {
      const seconds = (performance.now() - started) / 1000
      for (const observer of this.observers) observer(kind, seconds, failed)
    }
  }

  async ping (): Promise<void> {
    await this.call('ping', async c => await c.pingAsync())
  }

  /** solr-client appends `wt=json` to every request itself: adding it here would send it twice. */
  async select (params: Params): Promise<SelectResponse> {
    return await this.call('select', async c => await c.getAsync('select', encodeParams(params)))
  }

  /** Adds or atomically updates documents; `commitWithin` (ms) or an explicit commit per the strategy. */
  async update (docs: object[], options: { commit?: boolean, commitWithin?: number } = {}): Promise<void> {
    if (docs.length === 0) return
    const query: Record<string, unknown> = {}
    if (options.commit === true) query.commit = true
    if (options.commitWithin !== undefined && options.commitWithin > 0) query.commitWithin = options.commitWithin
    await this.call('add', async c => await c.addAsync(docs, query), docs.length)
  }

  async deleteByIds (ids: string[], options: { commit?: boolean, commitWithin?: number } = {}): Promise<void> {
    if (ids.length === 0) return
    const query: Record<string, unknown> = {}
    if (options.commit === true) query.commit = true
    if (options.commitWithin !== undefined && options.commitWithin > 0) query.commitWithin = options.commitWithin
    await this.call('delete', async c => await c.updateAsync({ delete: ids.map(id => ({ id })) }, query), ids.length)
  }

  async deleteByQuery (query: string): Promise<void> {
    await this.call('delete', async c => await c.deleteByQueryAsync(query, { commit: true }))
  }

  async commit (): Promise<void> {
    await this.call('commit', async c => await c.commitAsync())
  }

  /** The live core's fields, through the read-only Schema API. */
  async fields (): Promise<SchemaField[]> {
    const answer = await this.call<{ fields: SchemaField[] }>('schema', async c => await c.getAsync('schema/fields', ''))
    return answer.fields
  }

  close (): void {
    this.agent.destroy()
  }
}

/** `/solr/plone` → path `/solr`, core (or SolrCloud collection) `plone`. */
export function splitBase (base: string): [string, string] {
  const trimmed = base.replace(/\/+$/, '')
  const at = trimmed.lastIndexOf('/')
  return at <= 0 ? ['/solr', trimmed.replace(/^\//, '')] : [trimmed.slice(0, at), trimmed.slice(at + 1)]
}
