import { cp, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { migrationsDir } from '../../core/config/paths.js'
import { createPostgres } from '../../core/db/db.js'
import { migrate } from '../../core/db/migrate.js'
import { ADMIN_PASSWORD, build, freshDatabase, silentLogger } from '../helper.js'

/**
 * Several processes starting at once on one empty database, as a deployment
 * of several replicas does: the migrations apply once, in one transaction
 * under an advisory lock, and each web process answers only once the admin
 * can log in.
 */
const files = (await readdir(migrationsDir)).filter(name => /^\d+_.*\.sql$/.test(name)).sort()

t.test('migrations started by four processes at once apply each file once', async t => {
  const databaseUrl = await freshDatabase(t)
  const dbs = Array.from({ length: 4 }, () => createPostgres(databaseUrl, silentLogger))
  t.teardown(async () => { await Promise.all(dbs.map(async db => { await db.close() })) })
  const applied = await Promise.all(dbs.map(async db => await migrate(db)))
  t.same(applied.flat().sort(), files, 'every file applied, by one of them, once')
  t.ok(applied.filter(names => names.length > 0).length === 1, 'all of them by the same process, in its one transaction')
  const { rows } = await dbs[0].query<{ name: string }>('SELECT name FROM schema_migrations ORDER BY name')
  t.same(rows.map(row => row.name), files, 'each recorded once')
  t.same(await migrate(dbs[1]), [], 'a later start applies none')
})

t.test('a migration that fails leaves nothing of that start behind', async t => {
  const databaseUrl = await freshDatabase(t)
  const db = createPostgres(databaseUrl, silentLogger)
  t.teardown(async () => { await db.close() })
  const dir = await mkdtemp(join(tmpdir(), 'migrations-'))
  t.teardown(async () => { await rm(dir, { recursive: true, force: true }) })
  await cp(migrationsDir, dir, { recursive: true })
  await writeFile(join(dir, '999_broken.sql'), 'CREATE TABLE later (id int);\nSELECT * FROM no_such_table;\n')
  await t.rejects(migrate(db, dir), /no_such_table/)
  const { rows } = await db.query("SELECT to_regclass('schema_migrations') AS migrations, to_regclass('content') AS content, to_regclass('later') AS later")
  t.same(rows[0], { migrations: null, content: null, later: null }, 'the earlier files of the same start are rolled back with it')
  t.same(await migrate(db), files, 'the next start applies them all')
})

t.test('three web processes starting at once on an empty database: the admin logs in at each as soon as it answers', async t => {
  const databaseUrl = await freshDatabase(t)
  const webs = await Promise.all([0, 1, 2].map(async () => await build(t, { databaseUrl })))
  for (const [i, web] of webs.entries()) {
    const res = await web.inject({ method: 'POST', url: '/@login', payload: { login: 'admin', password: ADMIN_PASSWORD } })
    t.equal(res.statusCode, 200, `process ${i + 1} logs the admin in`)
  }
  const { rows } = await webs[0].app.db.query("SELECT count(*)::int AS admins FROM users WHERE id = 'admin'")
  t.equal(rows[0].admins, 1, 'one admin')
  const folders = await webs[0].app.db.query("SELECT path FROM content WHERE parent_uid IS NULL OR path = '/talks' ORDER BY path")
  t.same(folders.rows.map(row => row.path), ['/', '/talks'], 'one site root and one talks folder')
})
