import fc from 'fast-check'
import type { FastifyInstance } from 'fastify'
import t from 'tap'
import { driftCount, driftLine } from '../../core/solr/maintenance.js'
import { build, type TestApp } from '../helper.js'
import { asyncEnv, drained, startRedis } from '../queue/helper.js'
import { startSolr } from '../solr/helper.js'
import { race, schedule, setUp, type Schedule, type Send } from './racing-schedules.js'

/**
 * Racing writes converge (issue 22, finding 4; docs/api.md, "Security"): fast-check schedules
 * of concurrent imports, creates, deletes of folders and their subfolders, PATCHes and
 * workflow transitions (with and without their children) over a small tree, sent by clients
 * side by side through two processes of one site (two apps on one database), on PostgreSQL
 * and solr-dev. Once a schedule settled (the outbox drained), Solr holds exactly the objects
 * of the content table in their current version (`sync --check`: no orphan, no missing, no
 * stale document), the catalogue agrees with the content table row for row, and no write
 * answered what its kind may not (a 500 above all). Both ways of indexing: synchronous
 * (each request delivers its operations) and the queue (SOLR_ASYNC, an inline worker).
 *
 * The oracle is the content table itself, not the service's idea of it. A failure stops at
 * the first failing schedule (no shrinking: a race need not happen again) and prints it.
 */
const SEED = Number(process.env.RACE_SEED ?? Date.now() % 1_000_000)
const RUNS = Number(process.env.RACE_RUNS ?? 30)
t.comment(`RACE_SEED=${SEED} RACE_RUNS=${RUNS}`)

const solr = await startSolr(t)
const redis = await startRedis(t)

/** Objects whose catalogue row is missing, left over, or says another path, state, version or position than the content row. */
async function catalogueDisagreement (app: FastifyInstance): Promise<string[]> {
  const { rows } = await app.db.query<{ uid: string }>(`SELECT coalesce(c.uid, k.uid) AS uid FROM (SELECT * FROM content WHERE path <> '/') c
    FULL JOIN catalog k ON k.uid = c.uid
    WHERE c.uid IS NULL OR k.uid IS NULL OR k."path_string" <> c.path OR k."review_state" IS DISTINCT FROM c.review_state
      OR k."modified" <> c.modified OR k."getObjPositionInParent" <> c.position`)
  return rows.map(r => r.uid)
}

const sendFor = (apps: TestApp[], token: string) => (client: number): Send => async (method, path, body) =>
  (await apps[client % apps.length].call(method, path, body, token)).statusCode

async function converges (t: Tap, apps: TestApp[], settle: () => Promise<void>): Promise<void> {
  const [{ app, tokenFor }] = apps
  const admin = await tokenFor('admin')
  const send = sendFor(apps, admin)
  let run = 0
  const seen = new Map<string, number>()
  const last: { schedule?: Schedule, root?: string } = {}
  const started = Date.now()
  try {
    await fc.assert(fc.asyncProperty(schedule, async s => {
      const root = `/talks/run${run++}`
      last.schedule = s
      last.root = root
      await setUp(send(0), root)
      const { unexpected, saidGone } = await race(s, root, send, seen)
      await settle()
      // A 404 said the object was gone; set-up objects never come back, so it must be gone now.
      const there = (await app.db.query<{ path: string }>('SELECT path FROM content WHERE path = ANY($1)', [saidGone])).rows.map(r => r.path)
      unexpected.push(...there.map(path => `404 for ${path}, which is there`))
      const drift = await app.solr.maintenance.drift()
      const catalogue = await catalogueDisagreement(app)
      const waiting = (await app.db.query('SELECT 1 FROM index_outbox')).rowCount
      if (unexpected.length > 0 || driftCount(drift) > 0 || catalogue.length > 0 || waiting > 0) {
        throw new Error(`unexpected answers ${JSON.stringify(unexpected)}; Solr: ${driftLine(drift, true)}; catalogue disagrees on ${catalogue.length}; outbox ${waiting}`)
      }
    }), { seed: SEED, numRuns: RUNS, endOnFailure: true, includeErrorInReport: true })
    t.pass(`${RUNS} schedules converged (${Date.now() - started} ms)`)
    t.comment(JSON.stringify([...seen].sort()))
  } catch (err) {
    const message = (err as Error).message
    t.fail(message.split('\n').find(line => line.includes('unexpected answers')) ?? message)
    t.comment(`the failing schedule, under ${last.root}: ${JSON.stringify(last.schedule)}`)
  }
}

type Tap = Pick<typeof t, 'pass' | 'fail' | 'comment'>

t.test('synchronous indexing: each request delivers its own operations', async t => {
  await solr.post('plone/update', { delete: { query: '*:*' } }, { commit: 'true' })
  const env = { SOLR_ACTIVE: 'true', SOLR_PORT: String(solr.port), SOLR_BASE: '/solr/plone' }
  const first = await build(t, { env })
  const second = await build(t, { env, databaseUrl: first.databaseUrl })
  // What a request could not deliver (another delivery held the object) the background loop would; settling runs its pass now.
  await converges(t, [first, second], async () => { await first.app.solr.indexer.drain() })
})

t.test('the asynchronous queue: the worker delivers', async t => {
  await solr.post('plone/update', { delete: { query: '*:*' } }, { commit: 'true' })
  const first = await build(t, { env: asyncEnv(solr, redis, { INDEX_WORKER: 'inline' }) })
  const second = await build(t, { env: asyncEnv(solr, redis, { INDEX_WORKER: 'inline' }), databaseUrl: first.databaseUrl })
  await converges(t, [first, second], async () => { await drained(first.app) })
})
