import t from 'tap'
import { createPostgres } from '../../core/db/db.js'
import { DatabaseUnavailable } from '../../core/db/faults.js'
import { freshDatabase, silentLogger } from '../helper.js'
import { terminator } from './pg-helper.js'

const PREPARED = { prepared: true }

/** The statements this connection keeps prepared (pg_prepared_statements is per session). */
const preparedTexts = async (q: { query: (sql: string) => Promise<{ rows: Array<{ statement: string }> }> }): Promise<string[]> =>
  (await q.query('SELECT statement FROM pg_prepared_statements')).rows.map(r => r.statement)

t.test('prepared texts: kept by the connection and answered like any other; beyond the bound they run unprepared', async t => {
  const db = createPostgres(await freshDatabase(t), silentLogger)
  t.teardown(async () => { await db.close() })
  await db.transaction(async tx => {
    const text = 'SELECT $1::int * 2 AS doubled'
    t.same((await tx.query(text, [21], PREPARED)).rows, [{ doubled: 42 }])
    t.same((await tx.query(text, [5], PREPARED)).rows, [{ doubled: 10 }], 'the kept text with other parameters')
    t.same(await preparedTexts(tx), [text], 'the connection keeps it')
    t.same((await tx.query('SELECT $1::int + 1 AS next', [1])).rows, [{ next: 2 }])
    t.same(await preparedTexts(tx), [text], 'a text not asked to be prepared is not kept')

    // 200 texts are kept in all (one is already); texts beyond run as they would unprepared.
    for (let k = 1; k <= 210; k++) t.equal((await tx.query(`SELECT $1::int + ${k} AS n`, [0], PREPARED)).rows[0].n, k)
    const kept = await preparedTexts(tx)
    t.equal(kept.length, 200, 'at most 200 texts are kept')
    t.notOk(kept.includes('SELECT $1::int + 200 AS n'), 'the 200th new text ran unprepared')
  })
})

t.test('a prepared text after PostgreSQL ended the connections: failures only as DatabaseUnavailable, then answered on new connections', async t => {
  const databaseUrl = await freshDatabase(t)
  const db = createPostgres(databaseUrl, silentLogger)
  t.teardown(async () => { await db.close() })
  const postgres = await terminator(t, databaseUrl)
  const text = 'SELECT $1::text AS echoed'
  await Promise.all(Array.from({ length: 10 }, async (_, i) => { t.equal((await db.query(text, [`before ${i}`], PREPARED)).rows[0].echoed, `before ${i}`) }))
  t.ok(await postgres.terminateAll() > 0, 'the pool\'s connections were ended')
  const outcomes = await Promise.allSettled(Array.from({ length: 20 }, async (_, i) => (await db.query(text, [`after ${i}`], PREPARED)).rows[0].echoed))
  for (const outcome of outcomes) {
    if (outcome.status === 'rejected') t.type(outcome.reason, DatabaseUnavailable, 'a query on an ended connection fails as the database being unavailable')
  }
  t.same((await Promise.all(Array.from({ length: 10 }, async (_, i) => (await db.query(text, [`later ${i}`], PREPARED)).rows[0].echoed))),
    Array.from({ length: 10 }, (_, i) => `later ${i}`), 'new connections prepare the text again and answer')
})
