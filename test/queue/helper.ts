// Shared set-up of the asynchronous indexing tests (not a test file): a Redis of the test's
// own (never the shared 6379), solr-dev, the service with SOLR_ASYNC on, processes of the
// built service (`dist/`) to kill, and a write load of several concurrent clients.
import { spawn, type ChildProcess } from 'node:child_process'
import { createServer, request } from 'node:http'
import { connect, type AddressInfo } from 'node:net'
import { resolve } from 'node:path'
import { createInterface } from 'node:readline'
import type { FastifyInstance } from 'fastify'
import { talkBody } from '../helper.js'
import { freePort, type SolrDev } from '../solr-dev/helper.js'
import { sleep, solrDocs } from '../solr/helper.js'

export const ROOT = resolve(import.meta.dirname, '../..')

interface TapLike { teardown: (fn: () => unknown) => void }

export function alive (pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

/** Signals a child and waits until it is gone. */
async function ended (child: ChildProcess, signal: NodeJS.Signals): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return
  const gone = new Promise(resolve => child.once('exit', resolve))
  child.kill(signal)
  await gone
}

export async function waitFor (what: string, condition: () => Promise<boolean> | boolean, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!await condition()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)
    await sleep(100)
  }
}

/** Whether something answers PING on this port. */
async function pong (port: number): Promise<boolean> {
  return await new Promise(resolve => {
    const socket = connect(port, '127.0.0.1')
    socket.setTimeout(500)
    socket.once('data', data => { socket.destroy(); resolve(data.toString().startsWith('+PONG')) })
    socket.once('error', () => { resolve(false) })
    socket.once('timeout', () => { socket.destroy(); resolve(false) })
    socket.once('connect', () => socket.write('PING\r\n'))
  })
}

export interface TestRedis {
  port: number
  url: string
  pid: number
  /** SIGTERM, and wait for the process to exit. Without persistence it comes back empty. */
  stop: () => Promise<void>
  start: () => Promise<void>
}

/** redis-server on a port of its own, without persistence, a child of the test: stopped by its PID. */
export async function startRedis (t: TapLike): Promise<TestRedis> {
  const port = await freePort()
  let child: ChildProcess | null = null
  const redis: TestRedis = {
    port,
    url: `redis://127.0.0.1:${port}`,
    pid: 0,
    start: async () => {
      child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--daemonize', 'no'], { stdio: 'ignore' })
      redis.pid = child.pid ?? 0
      await waitFor(`redis-server on port ${port}`, async () => await pong(port), 10_000)
    },
    stop: async () => {
      if (child !== null) await ended(child, 'SIGTERM')
      child = null
    }
  }
  t.teardown(async () => { await redis.stop() })
  await redis.start()
  return redis
}

/** The environment of the service with asynchronous indexing against this Solr and Redis. */
export function asyncEnv (solr: SolrDev, redis: TestRedis, extra: Record<string, string> = {}): Record<string, string> {
  return { SOLR_ACTIVE: 'true', SOLR_PORT: String(solr.port), SOLR_BASE: '/solr/plone', SOLR_ASYNC: 'true', REDIS_URL: redis.url, ...extra }
}

export const outboxSize = async (app: FastifyInstance): Promise<number> => (await app.db.query('SELECT 1 FROM index_outbox')).rowCount

export const noDrift = { missing: [], orphan: [], stale: [] }

export interface ServiceProcess {
  pid: number
  /** Lines the process wrote (its JSON log). */
  lines: string[]
  /** What it wrote to stderr so far (an uncaught error's stack). */
  stderr: () => string
  kill: (signal: NodeJS.Signals) => Promise<void>
  /** Resolves with the exit code (null after a signal) once the process ended. */
  exited: Promise<number | null>
}

/**
 * Runs `node dist/<script>` of the built service (npm test builds it first)
 * with this environment, until its log says `ready` (matched against each
 * line's msg); killed at teardown if still running.
 */
export async function spawnService (t: TapLike, script: string, env: Record<string, string>, ready: string): Promise<ServiceProcess> {
  const child = spawn(process.execPath, [resolve(ROOT, 'dist', script)], {
    cwd: ROOT,
    env: { ...process.env, LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  const lines: string[] = []
  // 'close', not 'exit': by then every line the process wrote has been read.
  let closed: number | null | undefined
  const exited = new Promise<number | null>(resolve => child.once('close', code => { closed = code; resolve(code) }))
  let stderr = ''
  child.stderr?.on('data', chunk => { stderr += String(chunk) })
  createInterface({ input: child.stdout! }).on('line', line => lines.push(line))
  t.teardown(async () => { await ended(child, 'SIGKILL') })
  const seen = (): boolean => lines.some(line => { try { return JSON.parse(line).msg === ready } catch { return false } })
  await waitFor(`${script}: ${ready}`, () => seen() || closed !== undefined, 60_000)
  if (!seen()) throw new Error(`${script} exited (${String(closed)}) before '${ready}': ${stderr}${lines.join('\n')}`)
  return { pid: child.pid ?? 0, lines, stderr: () => stderr, kill: async signal => { await ended(child, signal) }, exited }
}

/** One write as a client makes it: the status and, for JSON answers, the body. */
export type Write = (method: 'POST' | 'PATCH' | 'DELETE', path: string, body?: unknown) => Promise<{ status: number, body: any }>

/** What Solr must hold for a load's talks once the index caught up. */
export interface Expected { present: number, published: number, revised: number }

/**
 * `total` writes from `clients` concurrent clients, creates, updates,
 * transitions and deletes: each client creates a talk, changes it, publishes
 * it, then deletes it (even talks) or changes it once more (odd ones).
 * Answers every status seen and, from the writes made, what Solr must hold
 * for the talks titled with `label`.
 */
export async function writeLoad (write: Write, options: { clients: number, total: number, label: string }): Promise<{ statuses: number[], expected: Expected }> {
  const statuses: number[] = []
  const expected: Expected = { present: 0, published: 0, revised: 0 }
  let issued = 0
  const client = async (c: number): Promise<void> => {
    for (let n = 0; ; n++) {
      const path = `/talks/${options.label}-c${c}-n${n}`
      const steps: Array<{ run: () => Promise<{ status: number }>, effect: (e: Expected) => void }> = [
        { run: async () => await write('POST', '/talks', talkBody({ id: path.slice('/talks/'.length), title: `${options.label} client ${c} talk ${n}`, speaker: `Speaker ${c}` })), effect: e => { e.present++ } },
        { run: async () => await write('PATCH', path, { description: `changed by client ${c}` }), effect: () => {} },
        { run: async () => await write('POST', `${path}/@workflow/publish`, {}), effect: e => { e.published++ } },
        n % 2 === 0
          ? { run: async () => await write('DELETE', path), effect: e => { e.present--; e.published-- } }
          : { run: async () => await write('PATCH', path, { speaker: `Speaker ${c}, revised` }), effect: e => { e.revised++ } }
      ]
      for (const step of steps) {
        if (issued >= options.total) return
        issued++
        statuses.push((await step.run()).status)
        step.effect(expected)
      }
    }
  }
  await Promise.all(Array.from({ length: options.clients }, async (_, c) => { await client(c) }))
  return { statuses, expected }
}

/** The answers that were not 2xx (a test expects none). */
export const failures = (statuses: number[]): number[] => statuses.filter(s => s < 200 || s >= 300)

/** Solr's documents of a load's talks, in the three counts of `Expected`. */
export async function indexed (solr: SolrDev, label: string): Promise<Expected> {
  const count = async (q: string): Promise<number> => (await solrDocs(solr, q)).length
  return {
    present: await count(`Title:${label}`),
    published: await count(`Title:${label} AND review_state:published`),
    revised: await count(`Title:${label} AND speaker:*revised`)
  }
}

/** Waits until Solr holds everything the outbox held (the index caught up). */
export async function drained (app: FastifyInstance, timeoutMs = 120_000): Promise<void> {
  await waitFor('the outbox to empty', async () => await outboxSize(app) === 0, timeoutMs)
}

/** A Write over real HTTP, for a spawned web process. */
export function httpWriter (baseUrl: string, token: string): Write {
  return async (method, path, body) => {
    const res = await fetch(`${baseUrl}${path}`, {
      method,
      headers: { accept: 'application/json', authorization: `Bearer ${token}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {})
    })
    const text = await res.text()
    return { status: res.status, body: text === '' ? null : JSON.parse(text) }
  }
}

export interface CountingProxy {
  port: number
  /** The number of documents of each add request (a JSON array of documents) that went to Solr. */
  adds: number[]
  /** The number of documents of each add request the proxy failed instead (`failAdds`). */
  failed: number[]
}

/**
 * A pass-through HTTP proxy in front of solr-dev that notes the size of every
 * add request: how the worker batches is seen on the wire, not taken from the
 * worker's word. The add requests whose number (from 1) `failAdds` names are
 * answered 503 without reaching Solr: a failure in the middle of a drain.
 */
export async function countingProxy (t: TapLike, solr: SolrDev, failAdds: number[] = []): Promise<CountingProxy> {
  const proxy: CountingProxy = { port: 0, adds: [], failed: [] }
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', chunk => chunks.push(chunk as Buffer))
    req.on('end', () => {
      const body = Buffer.concat(chunks)
      if (req.method === 'POST' && (req.url ?? '').includes('/update') && body[0] === 0x5b) {
        const documents = (JSON.parse(body.toString()) as unknown[]).length
        if (failAdds.includes(proxy.adds.length + proxy.failed.length + 1)) {
          proxy.failed.push(documents)
          res.writeHead(503, { 'content-type': 'text/plain' })
          res.end('failed by the test proxy')
          return
        }
        proxy.adds.push(documents)
      }
      const upstream = request({ host: '127.0.0.1', port: solr.port, method: req.method, path: req.url, headers: req.headers }, answer => {
        res.writeHead(answer.statusCode ?? 502, answer.headers)
        answer.pipe(res)
      })
      upstream.on('error', () => { res.destroy() })
      upstream.end(body)
    })
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  proxy.port = (server.address() as AddressInfo).port
  t.teardown(async () => { await new Promise(resolve => server.close(resolve)) })
  return proxy
}
