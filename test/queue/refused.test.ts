import { execFile } from 'node:child_process'
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import t from 'tap'
import { build, talkBody } from '../helper.js'
import { CONFIGSET, sleep, solrDocs } from '../solr/helper.js'
import { startSolrDev } from '../solr-dev/helper.js'
import { asyncEnv, drained, noDrift, outboxSize, ROOT, startRedis, waitFor } from './helper.js'

const run = promisify(execFile)

// A core whose `room` is a number: Solr refuses (400) the document of every talk with a room, and only those.
const configset = await mkdtemp(join(tmpdir(), 'refusing-configset-'))
t.teardown(async () => { await rm(configset, { recursive: true, force: true }) })
await cp(CONFIGSET, configset, { recursive: true })
const schema = join(configset, 'conf/schema.xml')
await writeFile(schema, (await readFile(schema, 'utf8')).replace('<field name="room" type="string"', '<field name="room" type="pint"'))
const solr = await startSolrDev(t, { cores: { plone: configset } })
const redis = await startRedis(t)
const env = asyncEnv(solr, redis, { INDEX_WORKER: 'inline' })

t.test('a document Solr refuses: its job fails once with Solr\'s message, stays visible, and holds back nothing', async t => {
  const { app, call, tokenFor, databaseUrl } = await build(t, { env })
  const admin = await tokenFor('admin')
  const statuses: number[] = []
  for (let i = 0; i < 30; i++) statuses.push((await call('POST', '/talks', talkBody({ title: `Accepted ${i}` }), admin)).statusCode)
  const res = await call('POST', '/talks', talkBody({ title: 'Refused one', room: 'Auditorium' }), admin)
  statuses.push(res.statusCode)
  const refused = res.json()
  for (let i = 30; i < 60; i++) statuses.push((await call('POST', '/talks', talkBody({ title: `Accepted ${i}` }), admin)).statusCode)
  t.same(statuses.filter(s => s !== 201), [], 'every write succeeds: refusing is Solr\'s business, not the author\'s')

  await waitFor('the other 60 talks in Solr', async () => (await solrDocs(solr, 'Title:accepted')).length === 60)
  await waitFor('the refused job to fail', async () => (await call('GET', '/@solr-maintenance/status', undefined, admin)).json().queue.failed === 1)
  // Long enough for several passes of the relay (every 2 s) and retries: none may come.
  await sleep(7_000)
  const status = (await call('GET', '/@solr-maintenance/status', undefined, admin)).json()
  t.match(status, { queue: { failed: 1, waiting: 0, active: 0, delayed: 0 }, outbox: { pending: 0, refused: 1 } })
  t.equal(status.failed_jobs.length, 1)
  t.match(status.failed_jobs[0], { uid: refused.UID, attempts: 1 }, 'tried once, not retried forever')
  t.match(status.failed_jobs[0].error, /Auditorium/, `with Solr's message: ${String(status.failed_jobs[0].error)}`)
  t.equal(await outboxSize(app), 1, 'the operation is kept, not lost')

  const cliEnv = { ...process.env, ...env, DATABASE_URL: databaseUrl, LOG_LEVEL: 'silent' }
  const { stdout } = await run(process.execPath, ['dist/app/cli.js', 'status'], { cwd: ROOT, env: cliEnv })
  t.match(stdout, /async indexing: on/)
  t.match(stdout, /queue: waiting 0, active 0, delayed 0, failed 1/)
  t.match(stdout, /outbox: 0 pending, 1 refused/)
  t.match(stdout, new RegExp(`failed: ${String(refused.UID)} after 1 attempt\\(s\\) at .*Auditorium`))

  // The author fixes the content: a new operation, which the worker delivers along with the refused one.
  const fixed = await call('PATCH', new URL(refused['@id']).pathname, { room: null }, admin)
  t.equal(fixed.statusCode, 204)
  await drained(app)
  t.equal((await solrDocs(solr, 'Title:refused')).length, 1, 'indexed once Solr accepts it')
  t.same(await app.solr.maintenance.sync({ check: true }), noDrift, 'sync --check: zero drift')

  const retried = await run(process.execPath, ['dist/app/cli.js', 'retry'], { cwd: ROOT, env: cliEnv })
  t.equal(retried.stdout, '0 refused operation(s) left to the relay to queue again, 1 failed job(s) dropped\n')
  t.match((await call('GET', '/@solr-maintenance/status', undefined, admin)).json(), { queue: { failed: 0 }, failed_jobs: [] })
})
