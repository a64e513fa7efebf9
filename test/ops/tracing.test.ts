import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { createServer, request as httpRequest, type IncomingMessage } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import t from 'tap'
import { ADMIN_PASSWORD, freshDatabase, JWT_SECRET, talkBody } from '../helper.js'
import { QUEUE_NAME } from '../../core/indexing/queue/jobs.js'
import { asyncEnv, spawnService, startRedis, waitFor, type TestRedis } from '../queue/helper.js'
import { CONFIGSET, solrDocs } from '../solr/helper.js'
import { freePort, startSolrDev, type SolrDev } from '../solr-dev/helper.js'

/**
 * docs/operations.md, "Tracing": the built service (`node dist/app/server.js`) and its index worker
 * (`node dist/app/worker.js`), started as an operator starts them, with OpenTelemetry's standard
 * variables pointing at an OTLP/HTTP receiver this test runs (http/json, so that it can read the
 * spans), on PostgreSQL, solr-dev and a Redis of its own with asynchronous indexing. A login, a
 * create, a refused create, a GET, @health, a search through Solr and a talk whose document Solr
 * refuses; then, from what the receiver was sent: a server span per request named by its route's
 * pattern, PostgreSQL, Solr and Redis (BullMQ) spans as descendants of the requests that made them,
 * the worker's job continuing the create's trace, and nothing a client sent — a title, a
 * description, a value the service or Solr refused, a search's words, a password — in any span. Without the variables (or with OTEL_SDK_DISABLED=true) the process loads no
 * OpenTelemetry SDK and sends nothing.
 */

// Words no code of the service contains: any span that holds one holds what a client sent.
const TITLE = 'Quokkafrazzle Tracing Talk'
const DESCRIPTION = 'Marmoblitz wandered through the description'
const REFUSED = 'Zebraquill-not-a-talk-type'
const SEARCHED = 'quokkafrazzle'
/** A room of the talk's vocabulary that Solr refuses (its core below takes rooms as numbers): Solr's message quotes it. */
const ROOM = 'Auditorium'
const SECRETS = [TITLE, 'Quokkafrazzle', DESCRIPTION, 'Marmoblitz', REFUSED, SEARCHED, ROOM, ADMIN_PASSWORD]

/** The preload that makes a spawned process log every module it resolves (test/ops/module-log.mjs). */
const MODULE_LOG_HOOK = pathToFileURL(join(import.meta.dirname, 'module-log.mjs')).href

// ---- An OTLP/HTTP receiver (JSON): every request it is sent is kept.

interface Received { path: string, contentType: string | undefined, body: any }

async function startReceiver (): Promise<{ endpoint: string, received: Received[] }> {
  const received: Received[] = []
  const receiver = createServer((req: IncomingMessage, res) => {
    let text = ''
    req.setEncoding('utf8')
    req.on('data', chunk => { text += chunk })
    req.on('end', () => {
      let body: unknown = text
      try { body = JSON.parse(text) } catch {}
      received.push({ path: req.url ?? '', contentType: req.headers['content-type'], body })
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}')
    })
  })
  await new Promise<void>(resolve => receiver.listen(0, '127.0.0.1', resolve))
  t.teardown(() => { receiver.close() })
  return { endpoint: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`, received }
}
const { endpoint, received } = await startReceiver()

/** A span as the receiver got it, with its resource's service name and its attributes as a plain object. */
interface ReceivedSpan {
  service: string
  traceId: string
  spanId: string
  parentSpanId: string
  name: string
  /** OTLP's: 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  kind: number
  attributes: Record<string, unknown>
  raw: unknown
}
const SERVER = 2
const CLIENT = 3
const PRODUCER = 4
const CONSUMER = 5

const valueOf = (value: Record<string, unknown>): unknown => Object.values(value)[0]
const attributesOf = (list: Array<{ key: string, value: Record<string, unknown> }> = []): Record<string, unknown> =>
  Object.fromEntries(list.map(({ key, value }) => [key, valueOf(value)]))

function spans (): ReceivedSpan[] {
  const all: ReceivedSpan[] = []
  for (const { path, body } of received) {
    if (path !== '/v1/traces') continue
    for (const resourceSpans of body.resourceSpans ?? []) {
      const service = String(attributesOf(resourceSpans.resource?.attributes)['service.name'])
      for (const scope of resourceSpans.scopeSpans ?? []) {
        for (const span of scope.spans ?? []) {
          all.push({ service, traceId: span.traceId, spanId: span.spanId, parentSpanId: span.parentSpanId ?? '', name: span.name, kind: span.kind, attributes: attributesOf(span.attributes), raw: span })
        }
      }
    }
  }
  return all
}

/** Whether `span` descends from `ancestor` (its parent, its parent's parent, …), as far as the spans received show. */
function descends (span: ReceivedSpan, ancestor: ReceivedSpan, all: ReceivedSpan[]): boolean {
  const byId = new Map(all.map(s => [s.spanId, s]))
  for (let at: ReceivedSpan | undefined = span; at !== undefined; at = byId.get(at.parentSpanId)) {
    if (at.parentSpanId === ancestor.spanId) return at.traceId === ancestor.traceId
  }
  return false
}

// ---- The service, its backends and the worker, traced.

const moduleLogs = await mkdtemp(join(tmpdir(), 'tracing-modules-'))
t.teardown(async () => { await rm(moduleLogs, { recursive: true, force: true }) })
const tracingEnv = {
  OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
  OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
  // Exported a tenth of a second after they end, not five seconds.
  OTEL_BSP_SCHEDULE_DELAY: '100'
}
const withModuleLog = (name: string): Record<string, string> =>
  ({ NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --import=${MODULE_LOG_HOOK}`, MODULE_LOG: join(moduleLogs, name) })
const modulesOf = async (name: string): Promise<string[]> => (await readFile(join(moduleLogs, name), 'utf8')).split('\n').filter(line => line !== '')
const sdkLoaded = (modules: string[]): string[] => modules.filter(url => /@opentelemetry\/sdk-|bullmq-otel|tracing-sdk\.js|request-spans\.js/.test(url))

async function startWeb (env: Record<string, string>, log: string): Promise<string> {
  const port = await freePort()
  await spawnService(t, 'app/server.js', { ...base, ...env, ...withModuleLog(log), PORT: String(port) }, 'ready')
  return `http://127.0.0.1:${port}`
}

async function request (origin: string, method: string, path: string, body?: unknown, token?: string): Promise<{ status: number, headers: Headers, body: any }> {
  const res = await fetch(origin + path, {
    method,
    headers: { accept: 'application/json', ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...(token !== undefined ? { authorization: `Bearer ${token}` } : {}) },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {})
  })
  const text = await res.text()
  let parsed: unknown = text
  try { parsed = JSON.parse(text) } catch {}
  return { status: res.status, headers: res.headers, body: parsed }
}

/**
 * A POST whose body comes a moment after its headers, as a body larger than the first packets does:
 * the service then reads it from the socket's events, outside the request span's context, and the
 * handler's queries are the request's children only if the handler is put back into that context.
 */
async function postLate (origin: string, path: string, body: unknown, token: string): Promise<{ status: number, body: any }> {
  const text = JSON.stringify(body)
  return await new Promise((resolve, reject) => {
    const req = httpRequest(origin + path, {
      method: 'POST',
      headers: { accept: 'application/json', 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), authorization: `Bearer ${token}` }
    }, res => {
      let answer = ''
      res.setEncoding('utf8')
      res.on('data', chunk => { answer += chunk })
      res.on('end', () => { resolve({ status: res.statusCode ?? 0, body: JSON.parse(answer) }) })
    })
    req.on('error', reject)
    req.flushHeaders()
    setTimeout(() => { req.end(text) }, 200)
  })
}

type Answer = Awaited<ReturnType<typeof request>>
let solr: SolrDev
let redis: TestRedis
let base: Record<string, string>
let web: string
let login: Answer, created: Awaited<ReturnType<typeof postLate>>, refused: Answer, read: Answer, health: Answer, searched: Answer, unindexable: Answer
let failedJobs: Array<{ error: string }> = []

// In `before`, not at the top level: when any of it fails, tap still runs the teardowns, which stop the processes started.
t.before(async () => {
  // A core whose `room` is a number (as test/queue/refused.test.ts): Solr refuses the document of a talk with a room.
  const configset = await mkdtemp(join(tmpdir(), 'tracing-configset-'))
  t.teardown(async () => { await rm(configset, { recursive: true, force: true }) })
  await cp(CONFIGSET, configset, { recursive: true })
  const schema = join(configset, 'conf/schema.xml')
  await writeFile(schema, (await readFile(schema, 'utf8')).replace('<field name="room" type="string"', '<field name="room" type="pint"'))
  solr = await startSolrDev(t, { cores: { plone: configset } })
  redis = await startRedis(t)
  base = { ...asyncEnv(solr, redis), DATABASE_URL: await freshDatabase(t), ADMIN_PASSWORD, JWT_SECRET, HOST: '127.0.0.1' }
  web = await startWeb(tracingEnv, 'web')
  await spawnService(t, 'app/worker.js', { ...base, ...tracingEnv, ...withModuleLog('worker') }, 'index worker ready')

  login = await request(web, 'POST', '/@login', { login: 'admin', password: ADMIN_PASSWORD })
  const token: string = login.body.token
  // The first start's own index operations delivered and the queue idle: the create's wake-up is then a
  // job of its own (one that waits would take it in), which the worker processes in the create's trace.
  await waitFor('an idle index queue', async () => {
    const { body } = await request(web, 'GET', '/@solr-maintenance/status', undefined, token)
    return body.outbox?.pending === 0 && body.queue?.waiting === 0 && body.queue?.active === 0
  })
  created = await postLate(web, '/talks', talkBody({ id: 'a-traced-talk', title: TITLE, description: DESCRIPTION }), token)
  refused = await request(web, 'POST', '/talks', talkBody({ id: 'a-refused-talk', type_of_talk: REFUSED }), token)
  read = await request(web, 'GET', '/talks/a-traced-talk', undefined, token)
  health = await request(web, 'GET', '/@health')
  // The worker delivers the create to Solr (asynchronous indexing); then the search is Solr's.
  await waitFor('the talk in Solr', async () => (await solrDocs(solr, `Title:${SEARCHED}`)).length === 1)
  searched = await request(web, 'GET', `/@search?SearchableText=${SEARCHED}`, undefined, token)
  // Solr refuses this one's document: the worker keeps the refusal as a failed job, with Solr's message.
  unindexable = await request(web, 'POST', '/talks', talkBody({ id: 'an-unindexable-talk', room: ROOM }), token)
  await waitFor('the refusal kept as a failed job', async () => {
    failedJobs = (await request(web, 'GET', '/@solr-maintenance/status', undefined, token)).body.failed_jobs ?? []
    return failedJobs.length === 1
  })
  // The job that keeps it fails in the worker (BullMQ's `fail` span), in the trace of the write. Not
  // there in time: the tests below say what is missing.
  await waitFor('the failed job\'s span', () => spans().some(s => s.service === 'talks-worker' && s.name.startsWith('fail ')), 20_000).catch(() => {})
})

/** The server span of the request `method path` (its url.path), waited for. */
async function serverSpan (method: string, path: string): Promise<ReceivedSpan> {
  let found: ReceivedSpan | undefined
  await waitFor(`the server span of ${method} ${path}`, () => {
    found = spans().find(s => s.kind === SERVER && s.attributes['http.request.method'] === method && s.attributes['url.path'] === path)
    return found !== undefined
  }, 20_000)
  return found!
}

t.test('the requests were answered', async t => {
  t.equal(login.status, 200)
  t.equal(created.status, 201, JSON.stringify(created.body))
  t.equal(refused.status, 400, JSON.stringify(refused.body))
  t.equal(read.status, 200)
  t.match(health.body, { status: 'ok', postgres: 'ok', solr: 'ok', redis: 'ok' })
  t.equal(searched.status, 200)
  t.equal(searched.headers.get('x-search-engine'), 'solr', 'the search was answered by Solr')
  t.equal(searched.body.items_total, 1)
  t.equal(unindexable.status, 201)
  t.match(failedJobs[0]?.error, ROOM, 'Solr\'s refusal quotes the value (which no span may hold)')
})

t.test('a server span per request, named by its route pattern, never by its URL', async t => {
  const cases: Array<[string, string, string, number]> = [
    ['POST', '/@login', '/@login', 200],
    ['POST', '/talks', '/*', 201],
    ['GET', '/talks/a-traced-talk', '/*', 200],
    ['GET', '/@search', '/@search', 200]
  ]
  for (const [method, path, route, status] of cases) {
    const span = await serverSpan(method, path)
    t.equal(span.service, 'talks-web', `${method} ${path}: the web process's`)
    t.equal(span.name, `${method} ${route}`, `${method} ${path}: named by the pattern`)
    t.equal(span.attributes['http.route'], route)
    t.equal(span.attributes['http.response.status_code'], status)
    t.equal(span.parentSpanId, '', `${method} ${path}: a trace's root (the client sent no traceparent)`)
  }
  const search = await serverSpan('GET', '/@search')
  t.notOk(JSON.stringify(search.raw).includes('SearchableText'), 'the query string is not recorded')
  const refusedSpan = spans().find(s => s.kind === SERVER && s.attributes['http.response.status_code'] === 400)
  t.ok(refusedSpan, 'the refused create has its span')
  t.notOk((refusedSpan?.raw as { status?: { code?: number } }).status?.code === 2, 'a 4xx is not a server span\'s error (the conventions leave it unset)')
})

t.test('PostgreSQL statements are spans below the request that made them, with their text and without their values', async t => {
  const create = await serverSpan('POST', '/talks')
  const all = spans()
  const sql = (s: ReceivedSpan): boolean => s.kind === CLIENT && s.attributes['db.system.name'] === 'postgresql'
  const statements = all.filter(s => sql(s) && s.service === 'talks-web' && descends(s, create, all))
  t.ok(statements.length >= 2, `${statements.length} statements below the create (its reads, its write)`)
  const insert = statements.find(s => String(s.attributes['db.query.text']).includes('INSERT INTO content'))
  t.ok(insert, 'the content row\'s INSERT is one of them')
  t.match(insert?.attributes, { 'db.system': 'postgresql', 'db.operation.name': 'INSERT', 'server.address': '127.0.0.1', 'server.port': 5432 })
  t.match(String(insert?.attributes['db.query.text']), /\$1\b/, 'the text keeps its parameters\' placeholders')
  t.equal(insert?.name, `INSERT ${String(insert?.attributes['db.namespace'])}`, 'named by the operation and the database')
  const loginSpan = await serverSpan('POST', '/@login')
  const inLogin = all.filter(s => sql(s) && descends(s, loginSpan, all)).map(s => s.attributes['db.query.text'])
  t.ok(inLogin.includes('BEGIN') && inLogin.includes('COMMIT'), 'a transaction\'s BEGIN and COMMIT (the login\'s) are spans too')
  const get = await serverSpan('GET', '/talks/a-traced-talk')
  t.ok(all.some(s => sql(s) && descends(s, get, all)), 'the GET\'s read too')
})

t.test('a Solr span below the search, and the worker\'s update', async t => {
  const search = await serverSpan('GET', '/@search')
  const all = spans()
  const select = all.find(s => s.kind === CLIENT && s.name === 'GET /solr/plone/select' && descends(s, search, all))
  t.ok(select, 'the select is a client span of the search')
  t.match(select?.attributes, { 'http.request.method': 'GET', 'url.path': '/solr/plone/select', 'server.port': solr.port, 'solr.kind': 'search' })
  t.notOk(String(select?.attributes['url.full']).includes('?'), 'no query parameters')
  const update = all.find(s => s.service === 'talks-worker' && s.name === 'POST /solr/plone/update')
  t.ok(update, 'the worker\'s delivery to Solr')
  t.ok(typeof update?.attributes['solr.documents'] === 'number' && Number(update?.attributes['solr.documents']) >= 1, 'counts its documents, does not hold them')
})

t.test('Redis: the create queues its wake-up in its trace, and the worker\'s job continues that trace', async t => {
  const create = await serverSpan('POST', '/talks')
  const all = spans()
  const add = all.find(s => s.kind === PRODUCER && s.service === 'talks-web' && s.name.startsWith('add ') && descends(s, create, all))
  t.ok(add, 'BullMQ\'s add is a producer span below the create')
  t.equal(add?.attributes['bullmq.queue.name'], QUEUE_NAME)
  let job: ReceivedSpan | undefined
  await waitFor('the worker\'s job span', () => {
    job = spans().find(s => s.kind === CONSUMER && s.service === 'talks-worker' && s.traceId === create.traceId)
    return job !== undefined
  }, 20_000)
  t.ok(job, `the job's span (${job?.name}) is in the create's trace, in the worker`)
  const later = spans()
  t.ok(later.some(s => s.service === 'talks-worker' && s.attributes['db.system.name'] === 'postgresql' && descends(s, job!, later)), 'the job\'s PostgreSQL statements below it')
  t.ok(later.some(s => s.service === 'talks-worker' && s.name === 'POST /solr/plone/update' && descends(s, job!, later)), 'and its delivery to Solr')
  t.same(later.filter(s => /^(getNextJob|moveStalledJobsToWait|startStalledCheckTimer) /.test(s.name)).map(s => s.name), [],
    'no trace of BullMQ\'s polling of its own (getNextJob, the stalled check)')
})

t.test('the service\'s own Redis commands: @health\'s PING, the status\'s counts', async t => {
  const all = spans()
  const healthSpan = await serverSpan('GET', '/@health')
  const ping = all.find(s => s.kind === CLIENT && s.name === 'PING' && descends(s, healthSpan, all))
  t.match(ping?.attributes, { 'db.system.name': 'redis', 'db.operation.name': 'PING', 'server.address': '127.0.0.1', 'server.port': redis.port })
  t.ok(all.some(s => s.name === 'GET /solr/plone/admin/ping' && descends(s, healthSpan, all)), 'and Solr\'s ping')
  const status = await serverSpan('GET', '/@solr-maintenance/status')
  t.ok(all.some(s => s.name === `getJobCounts ${QUEUE_NAME}` && s.attributes['db.system.name'] === 'redis' && descends(s, status, all)), 'the queue\'s counts below the status request')
})

t.test('nothing a client sent is in any span', async t => {
  const all = JSON.stringify(received.filter(r => r.path === '/v1/traces').map(r => r.body))
  t.ok(spans().length > 20, `${spans().length} spans received`)
  t.ok(spans().some(s => s.service === 'talks-worker' && s.name.startsWith('fail ')), 'among them the failure of the job that keeps Solr\'s refusal')
  for (const secret of SECRETS) t.notOk(all.toLowerCase().includes(secret.toLowerCase()), `${JSON.stringify(secret)} is in no span`)
  t.same([...new Set(received.map(r => r.path))], ['/v1/traces'], 'traces only: no metrics, no logs')
  t.ok(received.every(r => r.contentType === 'application/json'), 'OTEL_EXPORTER_OTLP_PROTOCOL=http/json is followed')
})

t.test('the traced processes load the SDK (what the next tests look for)', async t => {
  t.ok(sdkLoaded(await modulesOf('web')).length > 0, 'web')
  t.ok(sdkLoaded(await modulesOf('worker')).length > 0, 'worker')
})

t.test('OTEL_SDK_DISABLED=true: an endpoint is set, nothing is loaded or sent', async t => {
  // A receiver of its own: the traced processes still send theirs.
  const other = await startReceiver()
  const off = await startWeb({ ...tracingEnv, OTEL_EXPORTER_OTLP_ENDPOINT: other.endpoint, OTEL_SDK_DISABLED: 'true' }, 'disabled')
  t.equal((await request(off, 'POST', '/talks', talkBody({ title: TITLE }), (await request(off, 'POST', '/@login', { login: 'admin', password: ADMIN_PASSWORD })).body.token)).status, 201)
  t.equal((await request(off, 'GET', '/talks')).status, 200)
  await new Promise(resolve => setTimeout(resolve, 1000))
  t.same(other.received, [], 'the receiver got nothing')
  t.same(sdkLoaded(await modulesOf('disabled')), [], 'no module of the SDK loaded')
})

t.test('no OTEL_* variable: nothing is loaded', async t => {
  // Unset, whatever the test's own environment holds (an empty value is an unset one).
  const off = await startWeb({ OTEL_SDK_DISABLED: '', OTEL_TRACES_EXPORTER: '', OTEL_EXPORTER_OTLP_ENDPOINT: '', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: '' }, 'unset')
  t.equal((await request(off, 'GET', '/talks')).status, 200)
  const modules = await modulesOf('unset')
  t.ok(modules.some(url => url.endsWith('/dist/app/server.js')), 'the module log works')
  t.same(sdkLoaded(modules), [], 'no module of the SDK loaded')
})
