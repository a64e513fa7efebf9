import t from 'tap'
import { ADMIN_PASSWORD, build, freshDatabase, JWT_SECRET, talkBody } from '../helper.js'
import { solrDocs, startSolr } from '../solr/helper.js'
import { freePort } from '../solr-dev/helper.js'
import { asyncEnv, drained, failures, httpWriter, noDrift, spawnService, startRedis, type ServiceProcess } from './helper.js'

const solr = await startSolr(t)
const redis = await startRedis(t)
const databaseUrl = await freshDatabase(t)
const port = await freePort()
const env = { ...asyncEnv(solr, redis), DATABASE_URL: databaseUrl, ADMIN_PASSWORD, JWT_SECRET, PORT: String(port), HOST: '127.0.0.1' }
const base = `http://127.0.0.1:${port}`

const startWeb = async (): Promise<ServiceProcess> => await spawnService(t, 'app/server.js', env, 'ready')
async function login (): Promise<string> {
  const res = await fetch(`${base}/@login`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json' }, body: JSON.stringify({ login: 'admin', password: ADMIN_PASSWORD }) })
  return (await res.json() as { token: string }).token
}

t.test('the web process killed with SIGKILL right after a write returned, and during writes: nothing committed is lost', async t => {
  let web = await startWeb()
  let write = httpWriter(base, await login())
  const statuses: number[] = []
  for (let i = 0; i < 50; i++) statuses.push((await write('POST', '/talks', talkBody({ title: `Returned ${i}` }))).status)
  const last = await write('POST', '/talks', talkBody({ title: 'Returned last' }))
  statuses.push(last.status)
  await web.kill('SIGKILL')
  t.same(failures(statuses), [], 'every write returned 2xx before the kill')

  // Killed again with writes in flight: those that committed before the kill must reach Solr too,
  // whether or not their job was queued; those that did not commit must not.
  web = await startWeb()
  write = httpWriter(base, await login())
  const inFlight = Array.from({ length: 40 }, async (_, i) => await write('POST', '/talks', talkBody({ title: `Interrupted ${i}` })).catch(() => null))
  await new Promise(resolve => setTimeout(resolve, 150))
  await web.kill('SIGKILL')
  const answered = (await Promise.all(inFlight)).filter(r => r !== null)
  t.same(failures(answered.map(r => r.status)), [], `${answered.length} of 40 answered before the kill, all 2xx`)

  // A process with the worker inline: the relay queues what was committed without a job.
  await spawnService(t, 'app/server.js', { ...env, INDEX_WORKER: 'inline' }, 'ready')
  const { app } = await build(t, { env: { ...env, PORT: '0' } })
  await drained(app)
  t.same(await app.solr.maintenance.sync({ check: true }), noDrift, 'sync --check: zero drift')
  t.equal((await solrDocs(solr, 'Title:returned')).length, 51, 'every write that returned is in Solr')
  t.equal((await solrDocs(solr, `UID:${String(last.body.UID)}`)).length, 1, 'the last one before the kill included')
  const { rows: [{ committed }] } = await app.db.query<{ committed: number }>("SELECT count(*)::int AS committed FROM content WHERE data->>'title' LIKE 'Interrupted%'")
  t.equal((await solrDocs(solr, 'Title:interrupted')).length, committed, `as many interrupted writes in Solr as committed in PostgreSQL (${committed})`)
  t.ok(committed >= answered.length)
})
