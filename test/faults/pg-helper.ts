// Shared set-up of the fault tests (not a test file): PostgreSQL terminating the connections of
// the service's processes while they use them, a load of concurrent HTTP clients, and a Solr
// whose update requests can be held back.
import { createServer, request } from 'node:http'
import { createServer as createTcpServer, connect, type AddressInfo, type Socket } from 'node:net'
import pg from 'pg'
import { ADMIN_PASSWORD, talkBody } from '../helper.js'
import type { SolrDev } from '../solr-dev/helper.js'
import { sleep } from '../solr/helper.js'
import { waitFor } from '../queue/helper.js'

interface TapLike { teardown: (fn: () => unknown) => void }

/** The database URL with an application name, so that pg_stat_activity tells the processes apart. */
export function named (databaseUrl: string, applicationName: string): string {
  const url = new URL(databaseUrl)
  url.searchParams.set('application_name', applicationName)
  return url.toString()
}

export interface Terminator {
  /** The issue's statement: terminates every other backend of the database; answers how many. */
  terminateAll: () => Promise<number>
  /**
   * Locks `table`, calls `whenLocked`, waits (up to 10 s) until a backend (of
   * `applicationName`, when given) waits for that lock — a query in flight, in a
   * transaction or not, whose text matches the regular expression `statement`
   * when given — then terminates every other backend and unlocks.
   * Answers how many backends were terminated.
   */
  terminateWhileWaiting: (table: string, applicationName?: string, whenLocked?: () => void, statement?: string) => Promise<number>
}

/** A client of its own on the service's database (never terminated by its own statement). */
export async function terminator (t: TapLike, databaseUrl: string): Promise<Terminator> {
  const client = new pg.Client({ connectionString: named(databaseUrl, 'fault-injection') })
  await client.connect()
  t.teardown(async () => { await client.end() })
  // A terminated backend stays in pg_stat_activity for a moment, still waiting: it must not count as the next waiter.
  const terminatedPids: number[] = []
  const terminateAll = async (): Promise<number> => {
    // In the select list, as in the issue: a function in WHERE may run before the condition that spares this backend.
    const { rows } = await client.query<{ pid: number, terminated: boolean }>(
      'SELECT pid, pg_terminate_backend(pid) AS terminated FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()')
    const terminated = rows.filter(r => r.terminated).map(r => r.pid)
    terminatedPids.push(...terminated)
    return terminated.length
  }
  return {
    terminateAll,
    terminateWhileWaiting: async (table, applicationName, whenLocked, statement) => {
      await client.query('BEGIN')
      try {
        await client.query(`LOCK TABLE ${table} IN ACCESS EXCLUSIVE MODE`)
        whenLocked?.()
        // When none comes (the process died, say), the backends are terminated all the same: the test's assertions tell what went wrong.
        await waitFor(`a backend${applicationName !== undefined ? ` of ${applicationName}` : ''} waiting for the lock on ${table}`, async () => {
          // Inside a transaction pg_stat_activity answers from a snapshot taken at its first read.
          await client.query('SELECT pg_stat_clear_snapshot()')
          const { rowCount } = await client.query(
            `SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND pid <> ALL($2::int[])
             AND wait_event_type = 'Lock' AND ($1::text IS NULL OR application_name = $1) AND ($3::text IS NULL OR query ~ $3)`, [applicationName ?? null, terminatedPids, statement ?? null])
          return (rowCount ?? 0) > 0
        }, 10_000).catch(() => {})
        return await terminateAll()
      } finally {
        await client.query('ROLLBACK')
      }
    }
  }
}

export async function login (base: string): Promise<string> {
  const res = await fetch(`${base}/@login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify({ login: 'admin', password: ADMIN_PASSWORD })
  })
  if (res.status !== 200) throw new Error(`login failed: ${res.status} ${await res.text()}`)
  return (await res.json() as { token: string }).token
}

/** One answer as a client saw it: a socket error has no status. */
export interface Answer {
  request: string
  status: number | null
  body: any
  retryAfter: string | null
  error?: string
}

/** A request as a client makes it: a failed socket is an answer too (status null), never a throw. */
export async function ask (base: string, token: string, method: string, path: string, body?: unknown): Promise<Answer> {
  const requestLine = `${method} ${path}`
  try {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: { accept: 'application/json', authorization: `Bearer ${token}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {})
    })
    const text = await res.text()
    let parsed: unknown = text
    try { parsed = JSON.parse(text) } catch {}
    return { request: requestLine, status: res.status, body: parsed, retryAfter: res.headers.get('retry-after') }
  } catch (err) {
    // A process that is gone refuses at once: do not spin.
    await sleep(100)
    return { request: requestLine, status: null, body: null, retryAfter: null, error: String((err as Error).cause ?? err) }
  }
}

export interface Load {
  answers: Answer[]
  /** The UIDs of the talks whose creation was acknowledged (201). */
  created: string[]
  /** The titles of the talks whose creation was answered 503 with "nothing was changed". */
  rolledBack: string[]
  /** Stops the clients and waits for their requests in flight. */
  stop: () => Promise<void>
}

/**
 * `clients` concurrent clients, each in a loop: list the talks, search, create
 * a talk (as admin). Runs until stopped (also at teardown).
 */
export function load (t: TapLike, base: string, token: string, clients: number, label: string): Load {
  const result: Load = { answers: [], created: [], rolledBack: [], stop: async () => {} }
  let running = true
  const loop = async (c: number): Promise<void> => {
    for (let n = 0; running; n++) {
      result.answers.push(await ask(base, token, 'GET', '/talks'))
      result.answers.push(await ask(base, token, 'GET', `/@search?SearchableText=${label}&sort_on=created`))
      const title = `${label} client ${c} talk ${n}`
      const created = await ask(base, token, 'POST', '/talks', talkBody({ title }))
      result.answers.push(created)
      if (created.status === 201) result.created.push(String(created.body.UID))
      if (created.status === 503 && /nothing was changed/.test(String(created.body?.message))) result.rolledBack.push(title)
    }
  }
  const loops = Promise.all(Array.from({ length: clients }, async (_, c) => { await loop(c) }))
  result.stop = async () => {
    running = false
    await loops
  }
  t.teardown(result.stop)
  return result
}

/**
 * The answers outside the contract under faults: anything but a 2xx, or a
 * 503 `ServiceUnavailable` in the error shape with a Retry-After.
 */
export function unexpected (answers: Answer[]): Answer[] {
  return answers.filter(a => {
    if (a.status !== null && a.status >= 200 && a.status < 300) return false
    return !(a.status === 503 && a.body?.type === 'ServiceUnavailable' && typeof a.body.message === 'string' &&
      a.body.message !== '' && /^\d+$/.test(a.retryAfter ?? ''))
  })
}

/** The log lines of a process whose message starts with `prefix`. */
export const logged = (lines: string[], prefix: string): string[] =>
  lines.filter(line => { try { return String(JSON.parse(line).msg).startsWith(prefix) } catch { return false } })

export interface HoldingProxy {
  port: number
  /** Update requests wait (the sender stays inside its transaction) until `release`. */
  hold: () => void
  release: () => void
  /** How many update requests are being held now. */
  held: () => number
}

/** A pass-through proxy in front of solr-dev that can hold back update requests. */
export async function holdingProxy (t: TapLike, solr: SolrDev): Promise<HoldingProxy> {
  let holding = false
  let waiting: Array<() => void> = []
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', chunk => chunks.push(chunk as Buffer))
    req.on('end', () => {
      const forward = (): void => {
        const upstream = request({ host: '127.0.0.1', port: solr.port, method: req.method, path: req.url, headers: req.headers }, answer => {
          res.writeHead(answer.statusCode ?? 502, answer.headers)
          answer.pipe(res)
        })
        upstream.on('error', () => { res.destroy() })
        upstream.end(Buffer.concat(chunks))
      }
      if (holding && (req.url ?? '').includes('/update')) waiting.push(forward)
      else forward()
    })
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  const release = (): void => {
    holding = false
    const held = waiting
    waiting = []
    for (const forward of held) forward()
  }
  t.teardown(async () => {
    release()
    server.closeAllConnections()
    await new Promise(resolve => server.close(resolve))
  })
  return { port: (server.address() as AddressInfo).port, hold: () => { holding = true }, release, held: () => waiting.length }
}

export interface CuttingProxy {
  /** The database URL through the proxy. */
  url: string
  /**
   * Ends every connection's way to PostgreSQL (whose backends go away). An
   * idle connection (its last message from the server said "ready for query")
   * hears nothing of it until its client writes, when the client's socket is
   * closed: a connection dropped while idle, as a restart, a failover or a
   * firewall leaves it. A connection waiting for an answer is closed at once.
   */
  cut: () => void
  /** Cuts, and from now on closes every new connection as soon as it is made: the server is gone. */
  refuse: () => void
  /** How many connections clients have opened through the proxy. */
  opened: () => number
}

/** The last message of an answer: ReadyForQuery ('Z', length 5, transaction status). */
const endsWithReadyForQuery = (chunk: Buffer): boolean =>
  chunk.length >= 6 && chunk[chunk.length - 6] === 0x5a && chunk.readInt32BE(chunk.length - 5) === 5

/** A TCP proxy in front of PostgreSQL whose connections can be dropped, silently when idle. */
export async function cuttingProxy (t: TapLike, databaseUrl: string): Promise<CuttingProxy> {
  const target = new URL(databaseUrl)
  interface Pair { client: Socket, server: Socket, idle: boolean }
  const pairs = new Set<Pair>()
  let refusing = false
  let opened = 0
  const proxy = createTcpServer(client => {
    opened++
    if (refusing) {
      // Read what the client sends, then close: a close with unread data would be a reset instead.
      client.on('error', () => {}).resume().end()
      return
    }
    const server = connect(Number(target.port === '' ? 5432 : target.port), target.hostname)
    const pair: Pair = { client, server, idle: false }
    pairs.add(pair)
    client.on('data', (chunk: Buffer) => { pair.idle = false; server.write(chunk) })
    server.on('data', (chunk: Buffer) => { pair.idle = endsWithReadyForQuery(chunk); client.write(chunk) })
    const close = (): void => {
      pairs.delete(pair)
      client.destroy()
      server.destroy()
    }
    client.on('error', close).on('close', close)
    server.on('error', close).on('close', close)
  })
  await new Promise<void>(resolve => proxy.listen(0, '127.0.0.1', resolve))
  t.teardown(async () => {
    for (const { client, server } of pairs) { client.destroy(); server.destroy() }
    await new Promise(resolve => proxy.close(resolve))
  })
  const cut = (): void => {
    for (const pair of pairs) {
      pairs.delete(pair)
      pair.server.removeAllListeners('data').removeAllListeners('close').on('error', () => {}).destroy()
      if (!pair.idle) {
        pair.client.destroy()
        continue
      }
      pair.client.removeAllListeners('data').on('data', () => { pair.client.destroy() })
    }
  }
  const url = new URL(databaseUrl)
  url.hostname = '127.0.0.1'
  url.port = String((proxy.address() as AddressInfo).port)
  return {
    url: url.toString(),
    cut,
    refuse: () => { refusing = true; cut() },
    opened: () => opened
  }
}
