import t from 'tap'
import { createPostgres } from '../../core/db/db.js'
import { build, silentLogger, talkBody } from '../helper.js'

/**
 * A database restored from another PostgreSQL server's dump (docs/operations.md, "Backups")
 * holds catalogue rows written by that server's transactions, whose ids this server may not
 * have reached yet. The resident catalogue follows the catalogue by transaction ids
 * (core/catalog/resident/feed.ts): a process started on the restored database still hears
 * every later write, also the one that gets an id a restored row carries.
 */
t.test('writes after a restore from a server whose transaction ids ran ahead are heard', async t => {
  const first = await build(t)
  const admin = await first.tokenFor('admin')
  const talks = 40
  for (let i = 0; i < talks; i++) t.equal((await first.call('POST', '/talks', talkBody({ id: `t${i}`, title: `Talk ${i}` }), admin)).statusCode, 201)
  await first.app.close()

  // As pg_restore leaves it when the dump came from a server whose counter was ahead: every row's
  // writer an id this server has yet to give, one each, and a tombstone of one more.
  const db = createPostgres(first.databaseUrl, silentLogger)
  t.teardown(async () => { await db.close() })
  const { rows: [{ now }] } = await db.query<{ now: string }>('SELECT pg_current_xact_id()::text AS now')
  const base = Number(now) + 50
  await db.query('ALTER TABLE catalog DISABLE TRIGGER USER')
  await db.query(`UPDATE catalog c SET changed_by = ((${base} + n)::text)::xid8
    FROM (SELECT uid, row_number() OVER (ORDER BY uid) AS n FROM catalog) r WHERE r.uid = c.uid`)
  await db.query('ALTER TABLE catalog ENABLE TRIGGER USER')
  const { rows: [{ rows }] } = await db.query<{ rows: number }>('SELECT count(*)::int AS rows FROM catalog')

  const restored = await build(t, { databaseUrl: first.databaseUrl })
  const resident = restored.app.catalogSearch.residentCatalog!
  for (let tries = 0; tries < 300 && !resident.loaded; tries++) await new Promise(resolve => setTimeout(resolve, 20))
  t.ok(resident.loaded, 'the restored site\'s catalogue is loaded')
  const token = await restored.tokenFor('admin')
  // The server lives on until its counter is among the ids the restored rows carry.
  const target = base + Math.floor(rows / 2)
  for (;;) {
    const { rows: [{ id }] } = await db.query<{ id: string }>('SELECT pg_current_xact_id()::text AS id')
    if (Number(id) >= target) break
  }
  t.equal((await restored.call('PATCH', '/talks/t5', { title: 'Quixotic windmills' }, token)).statusCode, 204)
  const { rows: [{ by }] } = await db.query<{ by: string }>("SELECT changed_by::text AS by FROM catalog WHERE uid = (SELECT uid FROM content WHERE path = '/talks/t5')")
  t.ok(Number(by) >= base && Number(by) <= base + rows, `the edit's transaction (${by}) has an id a restored row was written by (${base + 1}–${base + rows})`)
  const answered = resident.counts.answered
  const found = (await restored.call('GET', '/@search?SearchableText=quixotic', undefined, token)).json()
  t.same(found.items.map((item: { title: string }) => item.title), ['Quixotic windmills'], 'the edit is found')
  t.equal(resident.counts.answered, answered + 1, 'by the resident catalogue')
})
