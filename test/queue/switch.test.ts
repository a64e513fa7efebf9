import t from 'tap'
import { build, freshDatabase, talkBody, type TestApp } from '../helper.js'
import { solrDocs, startSolr } from '../solr/helper.js'
import { asyncEnv, drained, noDrift, outboxSize, startRedis } from './helper.js'

const solr = await startSolr(t)
const redis = await startRedis(t)
const databaseUrl = await freshDatabase(t)

/** One run of the service on the shared database, as after a restart with other environment variables. */
const service = async (env: Record<string, string>): Promise<TestApp> => await build(t, { env: { ...env, DATABASE_URL: databaseUrl } })

async function create (s: TestApp, label: string, count: number): Promise<void> {
  const admin = await s.tokenFor('admin')
  for (let i = 0; i < count; i++) {
    const res = await s.call('POST', '/talks', talkBody({ title: `${label} ${i}` }), admin)
    if (res.statusCode !== 201) throw new Error(`write failed: ${res.statusCode} ${res.body}`)
  }
}

t.test('switching SOLR_ASYNC on and off takes a restart and loses no operation', async t => {
  // On, with no worker anywhere: the operations wait in the queue and the outbox.
  const queued = await service(asyncEnv(solr, redis))
  const pending = await outboxSize(queued.app) // the site's root folder, recorded at the first start
  await create(queued, 'Queued', 30)
  t.equal(await outboxSize(queued.app) - pending, 30)
  t.equal((await solrDocs(solr, 'Title:queued')).length, 0, 'nothing indexed yet')
  await queued.app.close()

  // Off: the synchronous delivery's background loop takes over the outbox.
  const sync = await service({ ...asyncEnv(solr, redis), SOLR_ASYNC: 'false' })
  t.equal(sync.app.indexing, null)
  await drained(sync.app)
  t.equal((await solrDocs(solr, 'Title:queued')).length, 30, 'what the queue held arrived without it')
  await solr.stop()
  await create(sync, 'Offline', 20)
  t.equal(await outboxSize(sync.app), 20, 'Solr down: kept in the outbox')
  await sync.app.close()
  await solr.start()

  // On again, with the worker inline: the relay queues what the synchronous run left behind.
  const inline = await service(asyncEnv(solr, redis, { INDEX_WORKER: 'inline' }))
  await drained(inline.app)
  t.equal((await solrDocs(solr, 'Title:offline')).length, 20)
  t.same(await inline.app.solr.maintenance.sync({ check: true }), noDrift, 'sync --check: zero drift')
  // The 30 jobs queued by the first run ran late, after the synchronous run delivered their objects: nothing to do, nothing failed.
  t.match(await inline.app.indexing?.queue.counts(), { waiting: 0, failed: 0 })
})
