import t from 'tap'
import type { FastifyInstance } from 'fastify'
import { ADMIN_PASSWORD, build, JWT_SECRET, talkBody } from '../helper.js'
import { sleep, solrDocs, startSolr } from '../solr/helper.js'
import { freePort } from '../solr-dev/helper.js'
import { asyncEnv, countingProxy, drained, failures, noDrift, outboxSize, spawnService, startRedis, waitFor } from './helper.js'

const solr = await startSolr(t)
const redis = await startRedis(t)
// The web side: queues jobs, runs no worker (INDEX_WORKER=external, the default).
const { app, call, tokenFor, databaseUrl } = await build(t, { env: asyncEnv(solr, redis) })
const admin = await tokenFor('admin')
const workerEnv = { ...asyncEnv(solr, redis), DATABASE_URL: databaseUrl, ADMIN_PASSWORD, JWT_SECRET }

const queued = async (fastify: FastifyInstance): Promise<{ waiting: number, active: number, delayed: number, failed: number }> => {
  const counts = await fastify.indexing?.queue.counts()
  if (counts === undefined) throw new Error('no queue')
  return counts
}

/** `count` talks from 10 concurrent clients; all must answer 201. Answers their paths, in the order of their titles' numbers. */
async function create (label: string, count: number): Promise<string[]> {
  const statuses: number[] = []
  const paths: string[] = []
  let next = 0
  await Promise.all(Array.from({ length: 10 }, async () => {
    while (next < count) {
      const i = next++
      const res = await call('POST', '/talks', talkBody({ title: `${label} ${i}` }), admin)
      statuses.push(res.statusCode)
      if (res.statusCode === 201) paths[i] = new URL(res.json()['@id']).pathname
    }
  }))
  if (failures(statuses).length > 0) throw new Error(`writes failed: ${failures(statuses).join(', ')}`)
  return paths
}

/** Talks of the tests that stop a worker midway: more than two batches (up to 1 000 objects each), so that one is delivered before the others. */
const MIDWAY_TALKS = 2500

/** Polls closely until the worker has delivered part of the outbox and holds jobs in flight. */
async function midway (total: number): Promise<void> {
  const deadline = Date.now() + 60_000
  while (Date.now() < deadline) {
    const [pending, counts] = await Promise.all([outboxSize(app), queued(app)])
    if (pending < total && pending > 0 && counts.active > 0) return
    await sleep(5)
  }
  throw new Error('never saw the worker midway')
}

t.test('the worker process killed with SIGKILL in the middle of a batch, then restarted: nothing lost, zero drift', async t => {
  // The site's root folder, recorded at the first start (before the queue existed), waits too.
  const pending = await outboxSize(app)
  await create('Killed', MIDWAY_TALKS)
  t.equal(await outboxSize(app) - pending, MIDWAY_TALKS, 'no worker yet: every operation waits')
  t.match(await queued(app), { waiting: 1, active: 0 }, 'one wake-up waits for all of them, not a job per object')

  const worker = await spawnService(t, 'app/worker.js', workerEnv, 'index worker ready')
  await midway(MIDWAY_TALKS)
  await worker.kill('SIGKILL')
  const left = await outboxSize(app)
  const stuck = (await queued(app)).active
  t.ok(left > 0 && left < MIDWAY_TALKS, `killed midway: ${MIDWAY_TALKS - left} delivered, ${left} pending`)
  t.ok(stuck > 0, `${stuck} wake-up(s) in flight, left active by the dead worker`)

  const restarted = await spawnService(t, 'app/worker.js', workerEnv, 'index worker ready')
  // The dead worker's jobs come back once their lock expires (LOCK_MS + the stalled check).
  await drained(app, 90_000)
  // A wake-up queued while a job ran waits until that job ends, then runs and finds nothing: the queue settles empty.
  await waitFor('no job left in flight or waiting', async () => { const { active, waiting } = await queued(app); return active === 0 && waiting === 0 })
  t.match(await queued(app), { waiting: 0, active: 0, failed: 0 })
  t.same(await app.solr.maintenance.sync({ check: true }), noDrift, 'sync --check: zero drift')
  t.equal((await solrDocs(solr, 'Title:killed')).length, MIDWAY_TALKS)
  await restarted.kill('SIGTERM')
})

t.test('SIGTERM: the worker finishes the jobs in flight, then exits 0', async t => {
  await create('Stopped', MIDWAY_TALKS)
  const worker = await spawnService(t, 'app/worker.js', workerEnv, 'index worker ready')
  await midway(MIDWAY_TALKS)
  await worker.kill('SIGTERM')
  t.equal(await worker.exited, 0, 'exit code 0')
  t.ok(worker.lines.some(l => l.includes('index worker shutting down')), 'it said why it stops')
  t.notOk(worker.lines.some(l => l.includes('did not finish its jobs in time')), 'within the shutdown timeout')
  t.equal((await queued(app)).active, 0, 'no job left in flight: each finished (or went back to waiting)')
  const left = await outboxSize(app)
  t.ok(left < MIDWAY_TALKS, `${MIDWAY_TALKS - left} delivered before it stopped`)

  await spawnService(t, 'app/worker.js', workerEnv, 'index worker ready')
  await drained(app, 90_000)
  t.same(await app.solr.maintenance.sync({ check: true }), noDrift, 'sync --check: zero drift')
  t.equal((await solrDocs(solr, 'Title:stopped')).length, MIDWAY_TALKS)
})

t.test('batches: a worker delivers many objects per Solr update request; its metrics time them', async t => {
  await create('Batched', 1000)
  const proxy = await countingProxy(t, solr)
  const metricsPort = await freePort()
  const worker = await spawnService(t, 'app/worker.js', { ...workerEnv, SOLR_PORT: String(proxy.port), METRICS_PORT: String(metricsPort) }, 'index worker ready')
  await drained(app, 90_000)
  // The worker's own metrics (docs/operations.md, "Metrics"): the index calls to Solr are its, not the web process's.
  const metrics = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text()
  const indexCalls = Number(/^solr_request_duration_seconds_count\{kind="index",outcome="ok"\} (\d+)$/m.exec(metrics)?.[1])
  t.ok(indexCalls >= proxy.adds.length, `the worker's metrics count its index calls (${indexCalls}; ${proxy.adds.length} adds)`)
  t.match(metrics, /^index_queue_jobs\{state="waiting"\} \d+$/m, 'and the queue')
  await worker.kill('SIGTERM')
  const documents = proxy.adds.reduce((sum, n) => sum + n, 0)
  t.equal(documents, 1000, 'every object sent once')
  t.ok(proxy.adds.length <= 5, `in ${proxy.adds.length} add requests (sizes ${proxy.adds.join(' ')}), not one per object`)
  // Batches of up to 1 000: the two lanes of a wake-up may share the 1 000 objects between them.
  t.ok(Math.max(...proxy.adds) >= 500, 'batches of hundreds of objects')
  t.same(await app.solr.maintenance.sync({ check: true }), noDrift, 'sync --check: zero drift')
})

t.test('two deliveries side by side claim different objects, a batch each', async t => {
  await create('Side', 600)
  const objects = async (): Promise<number> => (await app.db.query('SELECT DISTINCT uid FROM index_outbox')).rowCount
  const before = await objects()
  const [first, second] = await Promise.all([app.solr.indexer.flushNext(250), app.solr.indexer.flushNext(250)])
  t.match([first, second], [{ claimed: 250, delivered: 250 }, { claimed: 250, delivered: 250 }])
  t.equal(await objects(), before - 500, 'no object taken twice: 500 fewer objects wait')
  while ((await app.solr.indexer.flushNext(250)).claimed > 0);
  t.equal(await outboxSize(app), 0)
  t.same(await app.solr.maintenance.sync({ check: true }), noDrift, 'sync --check: zero drift')
})

t.test('a batch that fails in the middle of a drain: retried with backoff, nothing lost, no stale version', async t => {
  const paths = await create('Midway', 1200)
  // The second add request fails: the first batch is delivered, the second comes back after the retry.
  const proxy = await countingProxy(t, solr, [2])
  const worker = await spawnService(t, 'app/worker.js', { ...workerEnv, SOLR_PORT: String(proxy.port) }, 'index worker ready')
  await waitFor('the failed batch', () => proxy.failed.length === 1)
  // Changed while their batch waits for its retry (or after they were delivered): Solr must end up with the change.
  const revised = paths.filter((_, i) => i % 30 === 0)
  const statuses: number[] = []
  for (const [n, path] of revised.entries()) statuses.push((await call('PATCH', path, { title: `Revised ${n}` }, admin)).statusCode)
  t.same(failures(statuses), [], 'every change answered 2xx')
  await drained(app, 90_000)
  await worker.kill('SIGTERM')
  t.equal(proxy.failed.length, 1, `one batch failed (${proxy.failed.join(' ')} objects)`)
  t.same(await app.solr.maintenance.sync({ check: true }), noDrift, 'sync --check: zero drift')
  t.equal((await solrDocs(solr, 'Title:revised')).length, revised.length, 'every change in Solr')
  t.equal((await solrDocs(solr, 'Title:midway')).length, 1200 - revised.length, 'every other talk as created')
  t.equal((await queued(app)).failed, 0, 'an outage fails no job for good')
})

t.test('npm run worker: exits 0 with a warning when async indexing is off, 1 on the embedded database, 0 on SIGTERM without Redis', async t => {
  const off = await spawnService(t, 'app/worker.js', { ...workerEnv, SOLR_ASYNC: 'false' }, 'async_indexing is off (SOLR_ASYNC): the index worker has nothing to do and exits')
  t.equal(await off.exited, 0)
  const embedded = spawnService(t, 'app/worker.js', { ...workerEnv, DATABASE_URL: '' }, 'never')
  await t.rejects(embedded, /needs a PostgreSQL server \(DATABASE_URL\)/)
  // Redis never reachable: it starts (and waits for Redis), and SIGTERM still ends it cleanly.
  const unreachable = await spawnService(t, 'app/worker.js', { ...workerEnv, REDIS_URL: `redis://127.0.0.1:${await freePort()}` }, 'index worker ready')
  await unreachable.kill('SIGTERM')
  // On failure the message carries what the process said last (CI on e827d37 met an exit code 1 here, where its runs before passed).
  t.equal(await unreachable.exited, 0, `SIGTERM without Redis: exit code 0 (stderr: ${unreachable.stderr()}; last lines: ${unreachable.lines.slice(-5).join(' | ')})`)
})

t.test('SIGTERM after Redis went away: the worker exits 0 without waiting for jobs it cannot finish', async t => {
  const own = await startRedis(t)
  const worker = await spawnService(t, 'app/worker.js', { ...workerEnv, REDIS_URL: own.url }, 'index worker ready')
  await own.stop()
  await worker.kill('SIGTERM')
  // On failure the message carries what the process said last (a CI log shows only the assertion).
  t.equal(await worker.exited, 0, `exit code 0 (stderr: ${worker.stderr()}; last lines: ${worker.lines.slice(-5).join(' | ')})`)
  t.notOk(worker.lines.some(l => l.includes('did not finish its jobs in time')), 'without running into the shutdown timeout')
})
