/**
 * `node bench/one-folder.mjs`: creates in one folder from concurrent clients,
 * the case a folder's position counter serialises (core/content/positions.ts,
 * docs/architecture.md). Three phases on a fresh database, each `--seconds`
 * long, in one new folder each:
 *   creates         `--clients` clients POST talks, one after the other each;
 *   creates+import  the same, while one more client imports 100 talks a
 *                   request into the same folder (an import holds the folder's
 *                   counter for its transaction);
 *   refused         the same clients, as a Member who may view the folder but
 *                   not add to it (403), then one create: its position tells
 *                   how many positions the refusals spent.
 * Options: --root=<checkout> (whose dist/app/server.js runs; default this
 * one: compare two revisions by building each), --seconds=8, --clients=10.
 * Prints one line a phase; checks that the folder's positions are distinct.
 */
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import pg from 'pg'
import { createDatabase, freePort, startServer } from './processes.mjs'
import { talkBody } from './talks.mjs'

const { values: args } = parseArgs({ options: { root: { type: 'string' }, seconds: { type: 'string', default: '8' }, clients: { type: 'string', default: '10' } } })
const ROOT = args.root ?? fileURLToPath(new URL('..', import.meta.url))
const SECONDS = Number(args.seconds)
const CLIENTS = Number(args.clients)
const ADMIN_PASSWORD = 'bench-admin-password'
const IMPORT_BATCH = 100

const percentile = (sorted, p) => sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.ceil(p / 100 * sorted.length) - 1)]

const database = await createDatabase()
const server = await startServer({
  script: join(ROOT, 'dist', 'app', 'server.js'),
  env: { LOG_LEVEL: 'warn', DATABASE_URL: database.url, ADMIN_PASSWORD, JWT_SECRET: 'bench-secret-that-is-long-enough-for-hs256' },
  port: await freePort(),
  readyPath: '/',
  logFile: join(ROOT, 'bench', 'one-folder.log')
})

async function send (method, path, body, token) {
  const res = await fetch(server.url + path, {
    method,
    headers: { accept: 'application/json', 'content-type': 'application/json', ...(token !== undefined ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify(body)
  })
  return { status: res.status, body: await res.json() }
}
const login = async (login, password) => (await send('POST', '/@login', { login, password })).body.token
const admin = await login('admin', ADMIN_PASSWORD)
const db = new pg.Client({ connectionString: database.url })
await db.connect()
await db.query('INSERT INTO users (id, email, fullname, password_hash, roles) SELECT \'viewer\', \'viewer@example.org\', \'Viewer\', password_hash, \'{Member}\' FROM users WHERE id = \'admin\'')
const viewer = await login('viewer', ADMIN_PASSWORD)

/** A published folder at the site's root: Members may view it, only the admin may add to it. */
async function newFolder (id) {
  const created = await send('POST', '/', { '@type': 'folder', id, title: id }, admin)
  if (created.status !== 201) throw new Error(`folder ${id}: ${created.status} ${JSON.stringify(created.body)}`)
  await send('POST', `/${id}/@workflow/publish`, {}, admin)
  return `/${id}`
}

/** Clients sending `request(client, n)` without pause for SECONDS; the latencies of the answers with `status`. */
async function clients (count, request, status) {
  const latencies = []
  let unexpected = 0
  const end = performance.now() + SECONDS * 1000
  await Promise.all(Array.from({ length: count }, async (_, c) => {
    for (let n = 0; performance.now() < end; n++) {
      const started = performance.now()
      const answer = await request(c, n)
      if (answer.status === status) latencies.push(performance.now() - started)
      else unexpected++
    }
  }))
  return { latencies: latencies.sort((a, b) => a - b), unexpected }
}

const line = (phase, { latencies, unexpected }, extra = '') =>
  console.log(`${phase.padEnd(16)} ${(latencies.length / SECONDS).toFixed(0).padStart(5)}/s  p50 ${percentile(latencies, 50).toFixed(1).padStart(6)} ms  p99 ${percentile(latencies, 99).toFixed(1).padStart(7)} ms  unexpected ${unexpected}${extra}`)

const createIn = folder => async (c, n) => await send('POST', folder, talkBody(c * 1_000_000 + n, `client ${c} talk ${n}`), admin)

const plain = await newFolder('creates')
line('creates', await clients(CLIENTS, createIn(plain), 201))

const shared = await newFolder('shared')
const importing = clients(1, async (c, n) => await send('POST', `${shared}/@import`, {
  items: Array.from({ length: IMPORT_BATCH }, (_, i) => talkBody(9_000_000 + n * IMPORT_BATCH + i, `import ${n}-${i}`))
}, admin), 201)
const creating = await clients(CLIENTS, createIn(shared), 201)
const imported = await importing
line('creates+import', creating, `; beside them ${(imported.latencies.length * IMPORT_BATCH / SECONDS).toFixed(0)} imported talks/s`)

const closed = await newFolder('closed')
await send('POST', closed, talkBody(1, 'first'), admin)
const refused = await clients(CLIENTS, async (c, n) => await send('POST', closed, talkBody(c * 1_000_000 + n, 'refused'), viewer), 403)
const after = await send('POST', closed, talkBody(2, 'after'), admin)
const { rows: [{ position }] } = await db.query('SELECT position FROM content WHERE uid = $1', [after.body.UID])
line('refused', refused, `; the next create took position ${position} (1 if the refusals spent none)`)

const { rows: [check] } = await db.query('SELECT count(*)::int AS items, count(DISTINCT (parent_uid, position))::int AS positions FROM content WHERE parent_uid IS NOT NULL')
console.log(`integrity: ${check.items} objects at ${check.positions} distinct positions in their folders`)
await db.end()
await server.stop()
await database.drop()
