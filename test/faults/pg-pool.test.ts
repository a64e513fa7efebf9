import type { FastifyBaseLogger } from 'fastify'
import { setTimeout as sleep } from 'node:timers/promises'
import t from 'tap'
import { createPostgres } from '../../core/db/db.js'
import { DatabaseUnavailable } from '../../core/db/faults.js'
import { freshDatabase } from '../helper.js'
import { cuttingProxy, terminator } from './pg-helper.js'

/** A logger that keeps the messages of the levels it is asked for. */
function collectingLog (): { log: FastifyBaseLogger, messages: string[] } {
  const messages: string[] = []
  const keep = (level: string) => (first: unknown, second?: unknown) => {
    messages.push(`${level} ${String(typeof first === 'string' ? first : second)}`)
  }
  const log = { error: keep('error'), warn: keep('warn'), info: keep('info'), debug: () => {}, trace: () => {}, fatal: keep('fatal') }
  return { log: log as unknown as FastifyBaseLogger, messages }
}

t.test('connections terminated hundreds of times under concurrent queries and transactions: every failure is DatabaseUnavailable, and the process lives', async t => {
  const databaseUrl = await freshDatabase(t)
  const { log, messages } = collectingLog()
  const db = createPostgres(databaseUrl, log)
  t.teardown(async () => { await db.close() })
  await db.exec('CREATE TABLE written (id int PRIMARY KEY)')
  const postgres = await terminator(t, databaseUrl)

  const committed: number[] = []
  const rolledBack: number[] = []
  const unexpected: string[] = []
  let running = true
  let next = 0
  const loop = async (n: number): Promise<void> => {
    while (running) {
      const id = next++
      try {
        if (n % 2 === 0) {
          await db.query('SELECT pg_sleep(0.002)')
          continue
        }
        // Between its two statements the transaction's client is idle: a connection ended then reports itself as an 'error' event only.
        await db.transaction(async tx => {
          await tx.query('INSERT INTO written (id) VALUES ($1)', [id])
          await sleep(2)
          await tx.query('SELECT pg_sleep(0.002)')
        })
        committed.push(id)
      } catch (err) {
        if (!(err instanceof DatabaseUnavailable)) unexpected.push(String(err))
        else if (!err.mayHaveCommitted) rolledBack.push(id)
      }
    }
  }
  const loops = Promise.all(Array.from({ length: 20 }, async (_, n) => { await loop(n) }))
  await sleep(200)
  // Often enough that some connections end just as they are made or handed out.
  let terminated = 0
  for (let round = 0; round < 200; round++) {
    terminated += await postgres.terminateAll()
    await sleep(5 + Math.random() * 15)
  }
  running = false
  await loops

  t.same(unexpected, [], 'every failure was a DatabaseUnavailable')
  t.ok(rolledBack.length > 0 && committed.length > 0, `${committed.length} transactions committed, ${rolledBack.length} rolled back`)
  const { rows } = await db.query<{ id: number }>('SELECT id FROM written')
  const written = new Set(rows.map(r => r.id))
  t.same(committed.filter(id => !written.has(id)), [], 'every committed transaction is there')
  t.same(rolledBack.filter(id => written.has(id)), [], 'no transaction that failed before its COMMIT left anything')
  const report = db.faults()
  t.ok(report.connections_lost > 0 && report.connections_lost <= terminated, `${report.connections_lost} connections lost of ${terminated} terminated backends`)
  // A backend ended mid-query says 57P01; one ended while its connection was idle or being made only closes the socket: the last failure is either.
  t.match(report.last_failure, { reason: /^(57P01 admin_shutdown|connection closed)$/ }, 'the last failure names why, in safe words')
  t.equal(messages.filter(m => m.startsWith('error PostgreSQL failed')).length, 1, 'one outage, logged once')
  // After a quiet second the next success ends the outage in the log.
  await sleep(1200)
  t.equal((await db.query('SELECT 1 AS one')).rows[0].one, 1, 'the pool serves with new connections')
  t.same(messages.at(-1), 'info PostgreSQL answers again')
})

t.test('connections dropped silently while idle in the pool: reads and transactions go on with new ones, a lone write is not sent twice, a server that is gone fails at once', async t => {
  const proxy = await cuttingProxy(t, await freshDatabase(t))
  const { log } = collectingLog()
  const db = createPostgres(proxy.url, log)
  t.teardown(async () => { await db.close() })
  await db.exec('CREATE TABLE written (id int PRIMARY KEY)')
  /** Fills the pool with `n` connections that have served, then drops them all. */
  const idleConnectionsDropped = async (n: number): Promise<void> => {
    await Promise.all(Array.from({ length: n }, async () => await db.query('SELECT pg_sleep(0.05)')))
    proxy.cut()
  }

  await idleConnectionsDropped(6)
  let opened = proxy.opened()
  t.same((await db.query('SELECT 1 AS one')).rows, [{ one: 1 }], 'a read after six dropped connections is answered')
  t.equal(proxy.opened() - opened, 1, 'on the one new connection it took, after trying the dropped ones')

  await idleConnectionsDropped(6)
  const written = await db.transaction(async tx => {
    await tx.query('INSERT INTO written (id) VALUES (1)')
    return (await tx.query<{ id: number }>('SELECT id FROM written')).rows
  })
  t.same(written, [{ id: 1 }], 'a transaction whose BEGIN met a dropped connection runs on a new one')

  await idleConnectionsDropped(6)
  // The service cannot tell a write that never arrived from one whose answer was lost.
  await t.rejects(db.query('INSERT INTO written (id) VALUES (2)'), { name: 'DatabaseUnavailable', mayHaveCommitted: true }, 'a lone write is not sent again: its outcome is unknown')
  t.same((await db.query('SELECT id FROM written ORDER BY id')).rows, [{ id: 1 }], 'and it was not written twice (nor, here, once)')

  await idleConnectionsDropped(6)
  proxy.refuse()
  opened = proxy.opened()
  await t.rejects(db.query('SELECT 1 AS one'), { name: 'DatabaseUnavailable', mayHaveCommitted: false }, 'a read fails when the server is gone')
  t.equal(proxy.opened() - opened, 1, 'after one new connection: it does not keep knocking')
  t.ok(db.faults().connections_lost >= 24, `@health counts the dropped connections (${db.faults().connections_lost})`)
})
