import pg from 'pg'
import t from 'tap'
import { ADMIN_PASSWORD, freshDatabase, JWT_SECRET } from '../helper.js'
import { alive, asyncEnv, spawnService, startRedis, waitFor } from '../queue/helper.js'
import { freePort } from '../solr-dev/helper.js'
import { sleep, solrDocs, startSolr } from '../solr/helper.js'
import { ask, holdingProxy, load, logged, login, named, terminator, unexpected } from './pg-helper.js'

const ROUNDS = 3

t.test('PostgreSQL terminates the index worker\'s connections inside its transactions: the jobs are retried, nothing is lost', async t => {
  const solr = await startSolr(t)
  const redis = await startRedis(t)
  const databaseUrl = await freshDatabase(t)
  const proxy = await holdingProxy(t, solr)
  const port = await freePort()
  const base = `http://127.0.0.1:${port}`
  const env = { ...asyncEnv(solr, redis), ADMIN_PASSWORD, JWT_SECRET }
  const web = await spawnService(t, 'app/server.js', { ...env, DATABASE_URL: named(databaseUrl, 'talks-web'), PORT: String(port), HOST: '127.0.0.1' }, 'ready')
  // The worker reaches Solr through the proxy: holding its update keeps the worker inside its delivery's transaction.
  const worker = await spawnService(t, 'app/worker.js', { ...env, DATABASE_URL: named(databaseUrl, 'talks-worker'), SOLR_PORT: String(proxy.port) }, 'index worker ready')
  const token = await login(base)
  const postgres = await terminator(t, databaseUrl)

  const clients = load(t, base, token, 10, 'queued')
  for (let round = 0; round < ROUNDS; round++) {
    proxy.hold()
    await waitFor('the worker sending a batch to Solr', () => proxy.held() > 0 || !alive(worker.pid), 20_000)
    await postgres.terminateAll()
    proxy.release()
    await sleep(300)
  }
  await clients.stop()

  t.ok(alive(worker.pid), 'the worker is still running')
  t.ok(alive(web.pid), 'the web process is still running')
  t.same(unexpected(clients.answers), [], `all ${clients.answers.length} answers were 2xx or 503 ServiceUnavailable`)
  t.ok(clients.created.length > 0, `${clients.created.length} talks created`)

  const check = new pg.Client({ connectionString: databaseUrl })
  await check.connect()
  t.teardown(async () => { await check.end() })
  const pending = async (): Promise<number> => (await check.query('SELECT 1 FROM index_outbox')).rowCount ?? 0
  // A dead worker delivers nothing: no use waiting for it.
  await waitFor('the outbox to empty', async () => await pending() === 0 || !alive(worker.pid), 60_000)
  t.equal(await pending(), 0, 'the worker delivered the outbox')
  const indexed = new Set((await solrDocs(solr, 'portal_type:talk', { fl: 'UID' })).map(d => String(d.UID)))
  t.same(clients.created.filter(uid => !indexed.has(uid)), [], 'every acknowledged talk reached Solr')

  const status = await ask(base, token, 'GET', '/@solr-maintenance/status')
  t.match(status.body, { queue: { failed: 0 } }, 'no job failed for good: BullMQ retried the ones whose database work failed')
  t.ok(logged(worker.lines, 'Index delivery from the queue failed').length >= 1, 'the worker saw its deliveries fail')
  const outageLines = logged(worker.lines, 'PostgreSQL failed')
  t.ok(outageLines.length >= 1 && outageLines.length <= ROUNDS, `the worker logs the outage once per round (${outageLines.length} lines)`)
})
