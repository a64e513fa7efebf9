import t from 'tap'
import { build, talkBody } from '../helper.js'
import { sleep, solrDocs, startSolr } from '../solr/helper.js'
import { asyncEnv, drained, failures, noDrift, outboxSize, startRedis } from './helper.js'

const solr = await startSolr(t)
const redis = await startRedis(t)

t.test('Solr stopped for 30 s while the queue drains, then started: jobs retry with backoff, zero drift', async t => {
  const { app, call, tokenFor } = await build(t, { env: asyncEnv(solr, redis, { INDEX_WORKER: 'inline' }) })
  const admin = await tokenFor('admin')
  const statuses: number[] = []
  let next = 0
  const writing = Promise.all(Array.from({ length: 10 }, async () => {
    while (next < 600) {
      const i = next++
      statuses.push((await call('POST', '/talks', talkBody({ title: `Draining ${i}` }), admin)).statusCode)
    }
  }))
  // Stopped while the writes go on and the worker delivers them.
  while (await outboxSize(app) === 0 || next < 200) await sleep(10)
  await solr.stop()
  await writing
  t.same(failures(statuses), [], 'all 600 writes answered 2xx')
  t.ok(await outboxSize(app) > 0, 'operations wait in the outbox')

  await sleep(30_000)
  const status = (await call('GET', '/@solr-maintenance/status', undefined, admin)).json()
  t.ok(status.queue.delayed + status.queue.waiting + status.queue.active > 0, `jobs wait for a retry (${JSON.stringify(status.queue)})`)
  t.equal(status.queue.failed, 0, 'an outage fails no job for good')
  t.ok(status.outbox.oldest_pending_seconds >= 29, `the status tells how far the index is behind (${String(status.outbox.oldest_pending_seconds)} s)`)
  const health = await call('GET', '/@health')
  t.same([health.statusCode, health.json()], [200, { status: 'degraded', postgres: 'ok', solr: 'down', redis: 'ok' }])

  const restarted = Date.now()
  await solr.start()
  await drained(app)
  t.comment(`caught up ${Date.now() - restarted} ms after Solr came back`)
  t.same(await app.solr.maintenance.sync({ check: true }), noDrift, 'sync --check: zero drift')
  t.equal((await solrDocs(solr, 'Title:draining')).length, 600)
  t.equal((await call('GET', '/@solr-maintenance/status', undefined, admin)).json().queue.failed, 0)
})
