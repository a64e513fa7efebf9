import { spawn } from 'node:child_process'
import { resolve } from 'node:path'
import t from 'tap'
import { ADMIN_PASSWORD, freshDatabase, JWT_SECRET, talkBody } from '../helper.js'
import { ROOT, spawnService, waitFor } from '../queue/helper.js'
import { freePort } from '../solr-dev/helper.js'
import { solrDocs, startSolr } from '../solr/helper.js'
import { ask, cuttingProxy, holdingProxy, login, named, terminator } from './pg-helper.js'

// Three batches of reindex (1,000 each): while the first is held on its way to Solr the second is read
// ahead; the third's read is the one that meets the lock below.
const TALKS = 2500

const solr = await startSolr(t)
const databaseUrl = await freshDatabase(t)
const proxy = await holdingProxy(t, solr)
const postgres = await terminator(t, databaseUrl)

// The talks, written by the service with Solr off; then only the CLI is connected to the database.
const port = await freePort()
const base = `http://127.0.0.1:${port}`
const web = await spawnService(t, 'app/server.js', { DATABASE_URL: databaseUrl, ADMIN_PASSWORD, JWT_SECRET, PORT: String(port), HOST: '127.0.0.1' }, 'ready')
const token = await login(base)
let next = 0
await Promise.all(Array.from({ length: 10 }, async () => {
  while (next < TALKS) {
    const res = await ask(base, token, 'POST', '/talks', talkBody({ title: `Reindexed ${next++}` }))
    if (res.status !== 201) throw new Error(`seeding failed: ${String(res.status)} ${JSON.stringify(res.body)}`)
  }
}))
await web.kill('SIGTERM')

/** `npm run solr -- <args>` (the built CLI) against this database (at `cliDatabaseUrl`), reaching Solr through the proxy. */
function cli (args: string[], cliDatabaseUrl: string): Promise<{ code: number | null, stdout: string, stderr: string }> {
  const child = spawn(process.execPath, [resolve(ROOT, 'dist/app/cli.js'), ...args], {
    cwd: ROOT,
    env: { ...process.env, DATABASE_URL: named(cliDatabaseUrl, 'talks-cli'), SOLR_PORT: String(proxy.port), SOLR_BASE: '/solr/plone', LOG_LEVEL: 'silent', JWT_SECRET },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', chunk => { stdout += String(chunk) })
  child.stderr.on('data', chunk => { stderr += String(chunk) })
  t.teardown(() => { if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL') })
  return new Promise(resolve => child.once('close', code => { resolve({ code, stdout, stderr }) }))
}

/** Starts a reindex and waits until it sends its first batch (held by the proxy); `finished` resolves when it exits. */
async function reindexUnderWay (cliDatabaseUrl = databaseUrl): Promise<{ finished: ReturnType<typeof cli> }> {
  proxy.hold()
  const run = cli(['reindex', '--type', 'talk'], cliDatabaseUrl)
  let ended: Awaited<typeof run> | null = null
  void run.then(result => { ended = result })
  await waitFor('the CLI sending its first batch', () => proxy.held() > 0 || ended !== null, 30_000)
  if (ended !== null) throw new Error(`the CLI ended before its first batch: ${JSON.stringify(ended)}`)
  return { finished: run }
}

t.test('reindex: a batch whose connection PostgreSQL terminates runs again, and the run completes', async t => {
  await solr.post('plone/update', { delete: { query: '*:*' } }, { commit: 'true' })
  const run = await reindexUnderWay()
  // The next batch's query waits for the lock, in flight, when its connection is terminated.
  const terminated = await postgres.terminateWhileWaiting('content', 'talks-cli', () => { proxy.release() })
  t.ok(terminated > 0, `${terminated} backends of the CLI terminated`)
  const { code, stdout, stderr } = await run.finished
  t.equal(code, 0, `exit code 0 ${stderr}`)
  t.match(stdout, new RegExp(`reindexed ${TALKS} objects\\n$`))
  t.equal((await solrDocs(solr, 'portal_type:talk')).length, TALKS, 'every talk is in Solr')
})

t.test('reindex: when PostgreSQL stays away it gives up after retrying, with exit code 1 and one line', async t => {
  const database = await cuttingProxy(t, databaseUrl)
  const run = await reindexUnderWay(database.url)
  // Its connections are dropped and no new one can be made: the next batch fails, and so do its two retries.
  database.refuse()
  const opened = database.opened()
  proxy.release()
  const { code, stderr } = await run.finished
  t.equal(code, 1)
  t.equal(stderr, 'reindex failed: The database connection failed (connection closed). Nothing is lost: run it again once PostgreSQL answers.\n')
  t.equal(database.opened() - opened, 3, 'after trying to connect once for the batch and once for each of its two retries')
})
