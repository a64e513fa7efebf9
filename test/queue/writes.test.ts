import pg from 'pg'
import t from 'tap'
import { build, PG_ADMIN_URL, talkBody } from '../helper.js'
import { solrDocs, startSolr } from '../solr/helper.js'
import { asyncEnv, drained, failures, indexed, noDrift, startRedis, writeLoad, type Write } from './helper.js'

const solr = await startSolr(t)
const redis = await startRedis(t)

t.test('1,000 writes from 20 concurrent clients: all 2xx, then the queue catches up with zero drift', async t => {
  const { app, call, tokenFor } = await build(t, { env: asyncEnv(solr, redis, { INDEX_WORKER: 'inline' }) })
  const admin = await tokenFor('admin')
  const write: Write = async (method, path, body) => {
    const res = await call(method, path, body, admin)
    return { status: res.statusCode, body: res.body === '' ? null : res.json() }
  }
  const { statuses, expected } = await writeLoad(write, { clients: 20, total: 1000, label: 'load' })
  t.equal(statuses.length, 1000)
  t.same(failures(statuses), [], 'every write answered 2xx')

  await drained(app)
  const status = (await call('GET', '/@solr-maintenance/status', undefined, admin)).json()
  t.match(status, { async_indexing: true, worker: 'inline', redis: 'ok', queue: { failed: 0 }, failed_jobs: [], outbox: { pending: 0, refused: 0, oldest_pending_seconds: null } })
  t.same(await app.solr.maintenance.sync({ check: true }), noDrift, 'sync --check: zero drift')
  t.same(await indexed(solr, 'load'), expected, 'Solr holds every talk in its last state, and none that was deleted')
  t.ok(expected.present > 0 && expected.revised > 0 && expected.published >= expected.revised, 'the load did create, update and publish')
})

t.test('health: PostgreSQL, Solr and Redis each answer', async t => {
  const { call } = await build(t, { env: asyncEnv(solr, redis) })
  const res = await call('GET', '/@health')
  t.equal(res.statusCode, 200)
  t.same(res.json(), { status: 'ok', postgres: 'ok', solr: 'ok', redis: 'ok' })
  t.equal(res.headers['cache-control'], 'no-store')
})

t.test('health without PostgreSQL: 503, so that the load balancer takes the process out', async t => {
  const { call, databaseUrl } = await build(t, { env: asyncEnv(solr, redis) })
  const admin = new pg.Client({ connectionString: PG_ADMIN_URL })
  await admin.connect()
  // The service's database disappears under it (its connections are terminated).
  await admin.query(`DROP DATABASE ${new URL(databaseUrl).pathname.slice(1)} WITH (FORCE)`)
  await admin.end()
  const res = await call('GET', '/@health')
  t.equal(res.statusCode, 503)
  t.same(res.json(), { status: 'down', postgres: 'down', solr: 'ok', redis: 'ok' })
})

t.test('the status needs the Manager role', async t => {
  const { call, tokenFor } = await build(t, { env: asyncEnv(solr, redis) })
  t.equal((await call('GET', '/@solr-maintenance/status')).statusCode, 401)
  t.equal((await call('GET', '/@solr-maintenance/status', undefined, await tokenFor('member'))).statusCode, 403)
})

t.test('the embedded database: the worker runs in the web process whatever INDEX_WORKER says', async t => {
  // A new site on the same core: the first test's documents would be orphans of this one.
  await solr.post('plone/update', { delete: { query: '*:*' } }, { commit: 'true' })
  const { app, call, tokenFor } = await build(t, { embedded: true, env: asyncEnv(solr, redis) })
  const admin = await tokenFor('admin')
  t.equal((await call('POST', '/talks', talkBody({ title: 'Embedded and queued' }), admin)).statusCode, 201)
  await drained(app)
  t.equal((await solrDocs(solr, 'Title:"embedded and queued"')).length, 1)
  t.match((await call('GET', '/@solr-maintenance/status', undefined, admin)).json(), { async_indexing: true, worker: 'inline' })
  t.same(await app.solr.maintenance.sync({ check: true }), noDrift, 'sync --check: zero drift')
})
