import t from 'tap'
import pg from 'pg'
import { createPostgres } from '../../core/db/db.js'
import { freshDatabase, silentLogger } from '../helper.js'
import { waitFor } from '../queue/helper.js'

/**
 * Changes other processes make reach this one through LISTEN/NOTIFY on a
 * dedicated connection. When PostgreSQL ends that connection, every listener
 * hears at once that anything may have changed (caches stop trusting
 * themselves), the connection comes back, and changes are heard again.
 */
const databaseUrl = await freshDatabase(t)
const here = createPostgres(databaseUrl, silentLogger, 'talks-here')
const there = createPostgres(databaseUrl, silentLogger, 'talks-there')
t.teardown(async () => { await here.close(); await there.close() })

const heard: Array<string | null> = []
here.notifications.onChange('things', key => { heard.push(key) })
await waitFor('listening', () => here.notifications.listening, 10_000)
heard.length = 0

t.test('a change notified by another process is heard; one in a transaction only at its commit', async t => {
  await there.notifications.notify(there, 'things', 'a')
  await waitFor('heard a', () => heard.includes('a'), 5_000)
  await there.transaction(async tx => {
    await there.notifications.notify(tx, 'things', 'b')
    await new Promise(resolve => setTimeout(resolve, 300))
    t.notOk(heard.includes('b'), 'not before the commit')
  })
  await waitFor('heard b', () => heard.includes('b'), 5_000)
  await there.transaction(async tx => {
    await there.notifications.notify(tx, 'things', 'c')
    throw new Error('rolled back')
  }).catch(() => {})
  await there.notifications.notify(there, 'other topic', 'd')
  await there.notifications.notify(there, 'things', 'e')
  await waitFor('heard e', () => heard.includes('e'), 5_000)
  t.same(heard, ['a', 'b', 'e'], 'never a rolled-back change, nor another topic')
})

t.test('the listening connection terminated: listeners hear "anything may have changed", it comes back, changes are heard again', async t => {
  heard.length = 0
  const admin = new pg.Client({ connectionString: databaseUrl })
  await admin.connect()
  t.teardown(async () => { await admin.end() })
  const { rowCount } = await admin.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'talks-here-listen'")
  t.equal(rowCount, 1, 'its one connection terminated')
  await waitFor('told', () => heard.includes(null), 5_000)
  t.equal(heard[0], null, 'at once: anything may have changed')
  await waitFor('listening again', () => here.notifications.listening, 15_000)
  t.ok(heard.filter(k => k === null).length >= 2, 'and again once it listens anew (what changed meanwhile was never heard)')
  await there.notifications.notify(there, 'things', 'after')
  await waitFor('heard after', () => heard.includes('after'), 5_000)
  t.pass('changes are heard again')
})
