import { execFile } from 'node:child_process'
import { createServer, request } from 'node:http'
import { connect, type AddressInfo, type Socket } from 'node:net'
import { promisify } from 'node:util'
import t from 'tap'
import { createPostgres } from '../../core/db/db.js'
import { ADMIN_PASSWORD, freshDatabase, JWT_SECRET, silentLogger, talkBody } from '../helper.js'
import { asyncEnv, indexed, ROOT, spawnService, startRedis, waitFor, type Expected, type ServiceProcess } from '../queue/helper.js'
import { sleep, startSolr } from '../solr/helper.js'
import { freePort } from '../solr-dev/helper.js'

/**
 * Restarts that drop nothing (docs/operations.md, "Restarts and rolling
 * deploys"): two web processes and an index worker on one database, behind
 * a load balancer that, like a real one, sends requests only to the
 * processes whose `@health` answers 200. Under a steady load of reads and
 * writes each process in turn gets SIGTERM and a new one takes its place:
 * no request that reached a process fails, every acknowledged write is
 * there afterwards, and Solr ends up holding exactly the catalogue.
 */
const run = promisify(execFile)
const began = Date.now()
/** Notes in the test's output how far it got, for whoever wonders where its time goes. */
const phase = (what: string): void => { t.comment(`${((Date.now() - began) / 1000).toFixed(1)} s: ${what}`) }
const DRAIN_MS = 2000
const TIMEOUT_MS = 10_000
/** How often the load balancer asks each process's `@health` (well within DRAIN_MS). */
const POLL_MS = 100
/** What each Solr update request of the worker is held (a Solr under load): long enough to signal the worker in the middle of one. */
const UPDATE_DELAY_MS = 800
/** What each client waits between two requests. */
const PAUSE_MS = 25

const solr = await startSolr(t)
const redis = await startRedis(t)
const databaseUrl = await freshDatabase(t)
const db = createPostgres(databaseUrl, silentLogger)
t.teardown(async () => { await db.close() })

/**
 * The worker reaches Solr through this: each update request is held
 * UPDATE_DELAY_MS before it goes on, and the proxy knows how many are held or
 * on their way (`pending`) and when each one's answer went back (`answered`).
 */
const slowUpdates = await (async () => {
  const state = { port: 0, pending: 0, answered: [] as number[], aborted: 0 }
  const server = createServer((incoming, outgoing) => {
    const update = (incoming.url ?? '').includes('/update')
    if (update) state.pending++
    const chunks: Buffer[] = []
    incoming.on('data', (chunk: Buffer) => chunks.push(chunk))
    incoming.on('end', () => {
      setTimeout(() => {
        const upstream = request({ host: '127.0.0.1', port: solr.port, method: incoming.method, path: incoming.url, headers: incoming.headers }, answer => {
          outgoing.writeHead(answer.statusCode ?? 502, answer.headers)
          answer.pipe(outgoing)
        })
        upstream.on('error', () => { outgoing.destroy() })
        upstream.end(Buffer.concat(chunks))
      }, update ? UPDATE_DELAY_MS : 0)
    })
    outgoing.on('close', () => {
      if (!update) return
      state.pending--
      if (outgoing.writableFinished) state.answered.push(Date.now())
      else state.aborted++
    })
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  state.port = (server.address() as AddressInfo).port
  t.teardown(async () => {
    server.closeAllConnections()
    await new Promise(resolve => server.close(resolve))
  })
  return state
})()

const env: Record<string, string> = {
  ...asyncEnv(solr, redis),
  DATABASE_URL: databaseUrl,
  ADMIN_PASSWORD,
  JWT_SECRET,
  SHUTDOWN_DRAIN_MS: String(DRAIN_MS),
  SHUTDOWN_TIMEOUT_MS: String(TIMEOUT_MS)
}
// At debug level the worker logs each batch it delivers.
const workerEnv = { ...env, SOLR_PORT: String(slowUpdates.port), LOG_LEVEL: 'debug' }

interface Backend { name: string, port: number, process: ServiceProcess, healthy: boolean }
const startWeb = async (port: number): Promise<ServiceProcess> => await spawnService(t, 'app/server.js', { ...env, PORT: String(port), HOST: '127.0.0.1' }, 'ready')
const ports = [await freePort(), await freePort()]
// Side by side, as a deploy starts them: the first start's migrations and set-up run under advisory locks.
const [webA, webB, firstWorker] = await Promise.all([
  startWeb(ports[0]), startWeb(ports[1]), spawnService(t, 'app/worker.js', workerEnv, 'index worker ready')
])
const backends: Backend[] = [{ name: 'A', port: ports[0], process: webA, healthy: false }, { name: 'B', port: ports[1], process: webB, healthy: false }]
let worker = firstWorker

/** One request as the clients saw it. */
interface Outcome { method: string, path: string, backend: string, status?: number, error?: string, retries: number, answeredAt?: number }
const outcomes: Outcome[] = []
/** What the load balancer's health checks saw: when, of which backend, and the status (0: no answer). */
const checks: Array<{ backend: string, from: number, at: number, status: number, says?: string }> = []
const refused = (err: unknown): boolean => (err as { cause?: { code?: string } }).cause?.code === 'ECONNREFUSED'

/**
 * The load balancer: polls every backend's `@health`, and sends each request
 * round-robin to one that answered 200. It tries another backend only when
 * the connection was refused (nothing was sent, as a real one would).
 */
const balancer = (() => {
  let turn = 0
  let polling = true
  const poll = async (backend: Backend): Promise<void> => {
    while (polling) {
      const from = Date.now()
      try {
        const res = await fetch(`http://127.0.0.1:${backend.port}/@health`, { signal: AbortSignal.timeout(1000) })
        const { status } = await res.json() as { status: string }
        backend.healthy = res.status === 200
        checks.push({ backend: backend.name, from, at: Date.now(), status: res.status, says: status })
      } catch {
        backend.healthy = false
        checks.push({ backend: backend.name, from, at: Date.now(), status: 0 })
      }
      await sleep(POLL_MS)
    }
  }
  const pollers = backends.map(poll)
  return {
    stop: async () => { polling = false; await Promise.all(pollers) },
    send: async (method: string, path: string, token: string, body?: unknown): Promise<{ status: number, body: any }> => {
      const outcome: Outcome = { method, path, backend: '', retries: 0 }
      outcomes.push(outcome)
      for (;;) {
        const healthy = backends.filter(b => b.healthy)
        if (healthy.length === 0) {
          await sleep(20)
          continue
        }
        const backend = healthy[turn++ % healthy.length]
        outcome.backend = backend.name
        try {
          const res = await fetch(`http://127.0.0.1:${backend.port}${path}`, {
            method,
            headers: { accept: 'application/json', authorization: `Bearer ${token}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
            ...(body !== undefined ? { body: JSON.stringify(body) } : {})
          })
          const text = await res.text()
          outcome.status = res.status
          return { status: res.status, body: text === '' ? null : JSON.parse(text) }
        } catch (err) {
          if (refused(err)) {
            backend.healthy = false
            outcome.retries++
            continue
          }
          outcome.error = String((err as { cause?: unknown }).cause ?? err)
          return { status: 0, body: null }
        }
      }
    }
  }
})()
await waitFor('the load balancer to see both web processes', () => backends.every(b => b.healthy), 10_000)

const login = await fetch(`http://127.0.0.1:${backends[0].port}/@login`, {
  method: 'POST',
  headers: { accept: 'application/json', 'content-type': 'application/json' },
  body: JSON.stringify({ login: 'admin', password: ADMIN_PASSWORD })
})
const token = (await login.json() as { token: string }).token

/** A talk a client created, and which of its writes were acknowledged. */
interface Talk { path: string, revised: boolean, published: boolean }
const talks: Talk[] = []
const LABEL = 'rolling'

/**
 * Clients until `stop`: each creates a talk, reads it, changes it, reads the
 * folder's listing, publishes the talk and reads it again, over and over, with
 * a breath between requests (a steady load that leaves the processes that
 * start room to start).
 */
function load (clients: number): { stop: () => Promise<void> } {
  let running = true
  const expect = (answer: { status: number }, ok: number): boolean => answer.status === ok
  const send = async (method: string, path: string, body?: unknown): Promise<{ status: number, body: any }> => {
    const answer = await balancer.send(method, path, token, body)
    await sleep(PAUSE_MS)
    return answer
  }
  const client = async (c: number): Promise<void> => {
    for (let n = 0; running; n++) {
      const id = `${LABEL}-c${c}-n${n}`
      const created = await send('POST', '/talks', talkBody({ id, title: `${LABEL} client ${c} talk ${n}`, speaker: `Speaker ${c}` }))
      if (!expect(created, 201)) continue
      const talk: Talk = { path: `/talks/${id}`, revised: false, published: false }
      talks.push(talk)
      await send('GET', talk.path)
      talk.revised = expect(await send('PATCH', talk.path, { speaker: `Speaker ${c}, revised` }), 204)
      await send('GET', '/talks?b_size=5')
      talk.published = expect(await send('POST', `${talk.path}/@workflow/publish`, {}), 200)
      await send('GET', talk.path)
    }
  }
  const clientsDone = Promise.all(Array.from({ length: clients }, async (_, c) => { await client(c) }))
  return { stop: async () => { running = false; await clientsDone } }
}

/** A stop as the test saw it: the exit code and how long after SIGTERM it came. */
interface Stopped { code: number | null, signalled: number, ms: number, lines: string[] }
async function stop (service: ServiceProcess): Promise<Stopped> {
  const signalled = Date.now()
  await service.kill('SIGTERM')
  const code = await service.exited
  return { code, signalled, ms: Date.now() - signalled, lines: service.lines }
}

/**
 * A create sent to one backend whose body comes in two halves: the second
 * when `finish` is called. Recorded as the load's requests are.
 */
function slowCreate (backend: Backend, id: string): { finish: () => void, done: Promise<void> } {
  const body = JSON.stringify(talkBody({ id, title: `${LABEL} slow ${id}`, speaker: 'Speaker slow' }))
  const outcome: Outcome = { method: 'POST', path: '/talks (slow body)', backend: backend.name, retries: 0 }
  outcomes.push(outcome)
  const sent = request({
    host: '127.0.0.1',
    port: backend.port,
    method: 'POST',
    path: '/talks',
    headers: { accept: 'application/json', 'content-type': 'application/json', authorization: `Bearer ${token}`, 'content-length': Buffer.byteLength(body) }
  })
  const half = Math.floor(body.length / 2)
  sent.write(body.slice(0, half))
  const done = new Promise<void>(resolve => {
    sent.on('response', answer => {
      answer.resume()
      answer.on('end', () => {
        outcome.status = answer.statusCode
        outcome.answeredAt = Date.now()
        if (answer.statusCode === 201) talks.push({ path: `/talks/${id}`, revised: false, published: false })
        resolve()
      })
    })
    sent.on('error', err => { outcome.error = String(err); resolve() })
  })
  return { finish: () => { sent.end(body.slice(half)) }, done }
}
const logged = (lines: string[], msg: string): boolean => lines.some(line => { try { return JSON.parse(line).msg === msg } catch { return false } })
const batchesLogged = (lines: string[]): number => lines.filter(line => line.includes('"msg":"index batch delivered"')).length

t.test('rolling restarts of two web processes and the worker under load: no accepted request fails, no index operation is lost', async t => {
  phase('set up; the load starts')
  const clients = load(4)
  const stops: Array<{ name: string, stopped: Stopped }> = []
  const served = (name: string): number => outcomes.filter(o => o.backend === name && o.status !== undefined).length

  const slow: Array<Promise<void>> = []
  for (const backend of backends) {
    await waitFor(`requests served by ${backend.name}`, () => served(backend.name) >= 20, 20_000)
    // A request in flight through the drain and into the close: its body ends after the drain.
    const create = slowCreate(backend, `${LABEL}-slow-${backend.name.toLowerCase()}`)
    slow.push(create.done)
    await sleep(200)
    setTimeout(create.finish, DRAIN_MS + 200)
    const stopped = await stop(backend.process)
    stops.push({ name: `web ${backend.name}`, stopped })
    phase(`web ${backend.name} stopped`)
    backend.process = await startWeb(backend.port)
    await waitFor(`the load balancer to take ${backend.name} back`, () => backend.healthy, 10_000)
  }

  phase('both web processes restarted')
  // The worker is signalled while one of its Solr update requests is on its way.
  await waitFor('the worker in the middle of a batch', () => slowUpdates.pending > 0, 20_000)
  const answeredBefore = slowUpdates.answered.length
  const signalled = Date.now()
  const batchesBefore = batchesLogged(worker.lines)
  const stoppedWorker = await stop(worker)
  stops.push({ name: 'worker', stopped: stoppedWorker })
  t.ok(slowUpdates.answered.some(at => at >= signalled) && slowUpdates.answered.length > answeredBefore,
    'the update request in flight at SIGTERM was answered: the worker finished its batch')
  t.ok(batchesLogged(stoppedWorker.lines) > batchesBefore, 'and logged it delivered, after the signal')
  t.equal(slowUpdates.aborted, 0, 'no update request was cut')
  worker = await spawnService(t, 'app/worker.js', workerEnv, 'index worker ready')
  await sleep(1000)
  await clients.stop()
  await balancer.stop()
  phase('the worker restarted; the load stopped')

  for (const { name, stopped } of stops) {
    t.equal(stopped.code, 0, `${name} exited 0`)
    t.ok(stopped.ms < DRAIN_MS + TIMEOUT_MS, `${name} exited ${stopped.ms} ms after SIGTERM, within the drain and the bound`)
    t.ok(logged(stopped.lines, name === 'worker' ? 'index worker shutting down: finishing the jobs in flight' : 'shutting down') && logged(stopped.lines, 'shut down'),
      `${name} logged its shutdown`)
  }
  await Promise.all(slow)
  for (const { name, stopped } of stops.filter(s => s.name !== 'worker')) {
    t.ok(stopped.ms >= DRAIN_MS, `${name} kept serving for the drain (${stopped.ms} ms)`)
    const backend = name.slice(-1)
    const exited = stopped.signalled + stopped.ms
    // The checks asked and answered during the drain (a check that takes longer than its timeout counts as down, as for a real one).
    const draining = checks.filter(c => c.backend === backend && c.from >= stopped.signalled && c.at < stopped.signalled + DRAIN_MS && c.status !== 0)
    t.ok(draining.length > 0 && draining.every(c => c.status === 503 && c.says === 'stopping'),
      `the load balancer's checks of ${name} during the drain were answered 503 (stopping): ${draining.map(c => `${c.status} ${c.says ?? ''} after ${c.at - stopped.signalled} ms`).join(', ')}`)
    const slowOne = outcomes.find(o => o.backend === backend && o.path === '/talks (slow body)')
    t.equal(slowOne?.status, 201, `the create ${name} received before SIGTERM, whose body ended after the drain, was answered 201`)
    // Nothing else holds it then: no kept-alive connection (each answer since SIGTERM closed its own).
    const after = exited - (slowOne?.answeredAt ?? 0)
    t.ok(after < 2500, `${name} exited ${after} ms after its last request was answered`)
  }

  const failed = outcomes.filter(o => o.error !== undefined || o.status === undefined || o.status < 200 || o.status >= 300)
  t.same(failed, [], `${outcomes.length} requests (${outcomes.filter(o => o.retries > 0).length} sent again after a refused connection), none failed`)
  for (const name of ['A', 'B']) t.ok(served(name) > 0, `web ${name} answered requests`)

  // Every acknowledged write is there.
  const wrong: string[] = []
  const queue = [...talks]
  await Promise.all(Array.from({ length: 8 }, async () => {
    for (let talk = queue.pop(); talk !== undefined; talk = queue.pop()) {
      const res = await fetch(`http://127.0.0.1:${backends[0].port}${talk.path}`, { headers: { accept: 'application/json', authorization: `Bearer ${token}` } })
      const body = await res.json() as Record<string, any>
      if (res.status !== 200) wrong.push(`${talk.path}: ${res.status}`)
      else if (talk.revised && !String(body.speaker).endsWith('revised')) wrong.push(`${talk.path}: speaker ${String(body.speaker)}`)
      else if (talk.published && body.review_state !== 'published') wrong.push(`${talk.path}: ${String(body.review_state)}`)
    }
  }))
  t.ok(talks.length > 50, `${talks.length} talks created`)
  t.same(wrong, [], 'every acknowledged create, change and transition is there')

  phase('every acknowledged write checked')
  // Nothing the index owed was lost: the outbox drains and Solr holds exactly the catalogue.
  await waitFor('the outbox to drain', async () => (await db.query('SELECT 1 FROM index_outbox')).rowCount === 0, 30_000)
  const expected: Expected = {
    present: talks.length,
    published: talks.filter(talk => talk.published).length,
    revised: talks.filter(talk => talk.revised).length
  }
  await waitFor('Solr to commit', async () => (await indexed(solr, LABEL)).present === expected.present, 10_000).catch(() => {})
  t.same(await indexed(solr, LABEL), expected, 'Solr holds every talk as the acknowledged writes left it')
  const check = await run(process.execPath, ['dist/app/cli.js', 'sync', '--check'], { cwd: ROOT, env: { ...process.env, ...env, LOG_LEVEL: 'silent' } })
  t.equal(check.stdout, 'missing 0, orphan 0, stale 0\n', '`npm run solr -- sync --check`: zero drift')
  phase('the index checked')
})

/** A raw connection that sends `head` and waits; answers whatever comes back, once the connection ends. */
function rawRequest (port: number, head: string): { socket: Socket, answer: Promise<string>, connected: Promise<void> } {
  const socket = connect(port, '127.0.0.1')
  let received = ''
  socket.on('data', data => { received += String(data) })
  const answer = new Promise<string>(resolve => { socket.on('close', () => { resolve(received) }); socket.on('error', () => {}) })
  const connected = new Promise<void>(resolve => socket.once('connect', () => { socket.write(head); resolve() }))
  return { socket, answer, connected }
}
/** What `promise` gives, or `late` when it takes longer than `ms` (a broken shutdown fails the test instead of hanging it). */
const within = async <T, L>(promise: Promise<T>, ms: number, late: L): Promise<T | L> => await Promise.race([promise, sleep(ms).then(() => late)])
const heldPost = (port: number, body: string): string =>
  `POST /talks HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAccept: application/json\r\nContent-Type: application/json\r\nAuthorization: Bearer ${token}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n`

t.test('the bound: a request in flight finishes within it; past it, the process cuts what is left and exits 1', async t => {
  const port = await freePort()
  const bounded = { ...env, PORT: String(port), HOST: '127.0.0.1', SHUTDOWN_DRAIN_MS: '0', SHUTDOWN_TIMEOUT_MS: '1500' }

  // Within the bound: a create whose body arrives 500 ms after SIGTERM is answered 201. Meanwhile an
  // idle kept-alive connection is closed, a request whose last bytes come on a kept-alive connection gets
  // 503 with Retry-After and Connection: close, and a new connection is refused.
  const web = await spawnService(t, 'app/server.js', bounded, 'ready')
  const body = JSON.stringify(talkBody({ id: 'bound-within', title: 'Within the bound' }))
  const slow = rawRequest(port, heldPost(port, body))
  await slow.connected
  const health = `GET /@health HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`
  const idle = rawRequest(port, health)
  const kept = rawRequest(port, health)
  await waitFor('the kept-alive connections answered once', () => idle.socket.bytesRead > 0 && kept.socket.bytesRead > 0, 5_000)
  await waitFor('the held request received', () => web.lines.some(line => line.includes('"url":"/talks"')), 5_000)
  // Its next request's first bytes arrive before the signal, its last after.
  kept.socket.write(`GET /talks HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n`)
  await sleep(100)
  const signalled = Date.now()
  process.kill(web.pid, 'SIGTERM')
  await waitFor('no longer accepting', () => logged(web.lines, 'no longer accepting: finishing 1 request in flight'), 5_000)
  const idleClosed = await Promise.race([idle.answer.then(() => true), sleep(300).then(() => false)])
  t.ok(idleClosed, 'the idle kept-alive connection was closed')
  kept.socket.write('Accept: application/json\r\n\r\n')
  const turnedAway = await within(kept.answer, 3_000, 'the connection stayed open')
  const second = turnedAway.slice(turnedAway.indexOf('HTTP/1.1', 1))
  t.match(second, /^HTTP\/1\.1 503 /, 'a request on a kept-alive connection while closing: 503')
  t.match(second, /retry-after: 1\r\n/i, 'with Retry-After')
  t.match(second, /connection: close\r\n/i, 'and Connection: close')
  const fresh = await fetch(`http://127.0.0.1:${port}/@health`).then(() => 'answered', (err: unknown) => refused(err) ? 'refused' : String(err))
  t.equal(fresh, 'refused', 'a new connection is refused')
  await sleep(Math.max(0, signalled + 500 - Date.now()))
  slow.socket.write(body)
  t.match(await within(slow.answer, 3_000, 'no answer'), /^HTTP\/1\.1 201 /, 'the request in flight finished: 201')
  t.equal(await within(web.exited, 3_000, 'still running'), 0, 'then the process exited 0')
  t.ok(Date.now() - signalled < 1500, `within the bound (${Date.now() - signalled} ms)`)

  // Past the bound: a body that never comes.
  const stuck = await spawnService(t, 'app/server.js', bounded, 'ready')
  const held = rawRequest(port, heldPost(port, JSON.stringify(talkBody({ id: 'bound-past', title: 'Past the bound' }))))
  await held.connected
  await waitFor('the held request received', () => stuck.lines.some(line => line.includes('"url":"/talks"')), 5_000)
  const cutAt = Date.now()
  process.kill(stuck.pid, 'SIGTERM')
  // A second signal starts no second close.
  await sleep(200)
  process.kill(stuck.pid, 'SIGTERM')
  const code = await within(stuck.exited, 5_000, 'still running')
  const ms = Date.now() - cutAt
  t.equal(code, 1, 'exit code 1')
  t.ok(ms >= 1500 && ms < 1500 + 1500, `after the bound (${ms} ms)`)
  t.equal(await within(held.answer, 1_000, 'still open'), '', 'the held request was cut without an answer')
  t.ok(stuck.lines.some(line => line.includes('"msg":"shutdown took longer than SHUTDOWN_TIMEOUT_MS (1500 ms): 1 request in flight cut"')), 'a log line says how many were cut')
  t.equal(stuck.lines.filter(line => line.includes('"msg":"shutting down"')).length, 1, 'one shutdown')
  t.ok(stuck.lines.some(line => line.includes('already shutting down')), 'the second signal was logged and changed nothing')
})
