import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import t from 'tap'
import { build, talkBody } from '../helper.js'
import { solrDocs, startSolr } from '../solr/helper.js'
import { asyncEnv, drained, failures, noDrift, outboxSize, ROOT, startRedis } from './helper.js'

const run = promisify(execFile)

const solr = await startSolr(t)
const redis = await startRedis(t)

t.test('Redis stopped during 200 writes, then started: every write 2xx, the relay queues the outbox, zero drift', async t => {
  const { app, call, tokenFor } = await build(t, { env: asyncEnv(solr, redis, { INDEX_WORKER: 'inline' }) })
  const admin = await tokenFor('admin')
  const paths: string[] = []
  for (let i = 0; i < 20; i++) {
    const res = await call('POST', '/talks', talkBody({ title: `Before ${i}`, speaker: 'Old Speaker' }), admin)
    paths.push(new URL(res.json()['@id']).pathname)
  }
  await drained(app)
  t.equal((await solrDocs(solr, 'Title:before')).length, 20, 'indexed through the queue before the outage')

  const statuses: number[] = []
  const writes = async (from: number, to: number): Promise<void> => {
    for (let i = from; i < to; i++) {
      const res = await call('POST', '/talks', talkBody({ title: `During ${i}` }), admin)
      statuses.push(res.statusCode)
    }
  }
  await writes(0, 50)
  await redis.stop()
  const started = Date.now()
  await writes(50, 150)
  for (const path of paths.slice(0, 10)) statuses.push((await call('PATCH', path, { speaker: 'New Speaker' }, admin)).statusCode)
  for (const path of paths.slice(0, 10)) statuses.push((await call('POST', `${path}/@workflow/publish`, {}, admin)).statusCode)
  for (const path of paths.slice(10, 20)) statuses.push((await call('DELETE', path, undefined, admin)).statusCode)
  const outage = Date.now() - started

  const health = await call('GET', '/@health')
  t.equal(health.statusCode, 200, 'still in the load balancer\'s pool')
  t.same(health.json(), { status: 'degraded', postgres: 'ok', solr: 'ok', redis: 'down' })
  const status = (await call('GET', '/@solr-maintenance/status', undefined, admin)).json()
  t.equal(status.redis, 'down')
  t.equal(status.queue, null)
  t.ok(status.outbox.pending > 0, `the outbox keeps what Redis could not take (${String(status.outbox.pending)} objects)`)

  await redis.start()
  await writes(150, 170)
  t.equal(statuses.length, 200)
  t.same(failures(statuses), [], 'all 200 writes answered 2xx')
  t.comment(`${outage} ms for the 130 writes while Redis was down`)

  // The restarted Redis is empty: only the outbox, through the relay, can bring the outage's writes to Solr.
  await drained(app)
  t.equal(await outboxSize(app), 0)
  t.same(await app.solr.maintenance.sync({ check: true }), noDrift, 'sync --check: zero drift')
  t.equal((await solrDocs(solr, 'Title:during')).length, 170)
  t.equal((await solrDocs(solr, 'speaker:"New Speaker" AND review_state:published')).length, 10)
  t.equal((await solrDocs(solr, 'Title:before')).length, 10, 'deleted ones are gone')
  t.same((await call('GET', '/@health')).json(), { status: 'ok', postgres: 'ok', solr: 'ok', redis: 'ok' })
})

t.test('Redis down when the process starts: writes succeed, delivered once Redis is up', async t => {
  // A new site on the same core: the previous test's documents would be orphans of this one.
  await solr.post('plone/update', { delete: { query: '*:*' } }, { commit: 'true' })
  await redis.stop()
  const { app, call, tokenFor, databaseUrl } = await build(t, { env: asyncEnv(solr, redis, { INDEX_WORKER: 'inline' }) })
  const admin = await tokenFor('admin')
  const res = await call('POST', '/talks', talkBody({ title: 'Started without Redis' }), admin)
  t.equal(res.statusCode, 201)

  const cliEnv = { ...process.env, ...asyncEnv(solr, redis), DATABASE_URL: databaseUrl, LOG_LEVEL: 'silent' }
  const status = await run(process.execPath, ['dist/app/cli.js', 'status'], { cwd: ROOT, env: cliEnv })
  t.match(status.stdout, /redis: down \(Redis is not connected/, 'the CLI status says Redis is down')
  t.match(status.stdout, /outbox: [1-9]\d* pending/, 'and what waits in the outbox')
  await t.rejects(run(process.execPath, ['dist/app/cli.js', 'retry'], { cwd: ROOT, env: cliEnv }),
    { code: 1, stdout: `Redis does not answer at ${redis.url}: nothing changed\n` }, 'retry changes nothing without Redis')

  await redis.start()
  await drained(app)
  t.equal((await solrDocs(solr, 'Title:"started without redis"')).length, 1)
  t.same(await app.solr.maintenance.sync({ check: true }), noDrift)
})
