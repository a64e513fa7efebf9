import pg from 'pg'
import t from 'tap'
import { ADMIN_PASSWORD, freshDatabase, JWT_SECRET, talkBody } from '../helper.js'
import { alive, spawnService } from '../queue/helper.js'
import { freePort } from '../solr-dev/helper.js'
import { sleep } from '../solr/helper.js'
import { ask, load, logged, login, terminator, unexpected } from './pg-helper.js'

const ROUNDS = 4
/** The rounds under load, the one that terminates everything, and the two of one create each. */
const ALL_ROUNDS = ROUNDS + 3

t.test('PostgreSQL terminates the web process\'s connections under load: 503 for the requests in flight, then it serves on', async t => {
  const databaseUrl = await freshDatabase(t)
  const port = await freePort()
  const base = `http://127.0.0.1:${port}`
  const web = await spawnService(t, 'app/server.js', { DATABASE_URL: databaseUrl, ADMIN_PASSWORD, JWT_SECRET, PORT: String(port), HOST: '127.0.0.1' }, 'ready')
  const token = await login(base)
  const postgres = await terminator(t, databaseUrl)

  const clients = load(t, base, token, 20, 'faulty')
  await sleep(500)
  let terminated = 0
  for (let round = 0; round < ROUNDS; round++) {
    // Requests wait for the lock in their queries (reads, and writes inside their transactions) when their connections end.
    terminated += await postgres.terminateWhileWaiting('content')
    await sleep(300)
  }
  // And the statement as it is, whatever the connections are doing at that moment.
  terminated += await postgres.terminateAll()
  await sleep(300)
  await clients.stop()
  // And, without load around it, a create whose connection ends while its first statement waits:
  // under load the creates that meet the terminations are a matter of timing. That statement
  // reads the folder (its write takes the position), and a read is sent again.
  const readingCreate = 'Ended while it read its folder'
  let ended: Promise<Awaited<ReturnType<typeof ask>>> | undefined
  terminated += await postgres.terminateWhileWaiting('content', undefined, () => {
    ended = ask(base, token, 'POST', '/talks', talkBody({ title: readingCreate }))
  })
  t.equal((await ended!).status, 201, 'a create whose connection ended while it read its folder: its read is sent again, and it is created')
  // And a create whose connection ends in its write (which waits for the catalogue's lock; the service's own reads of it wait too,
  // so the round waits for a waiting INSERT): a 503 that says the change may have been saved, and it was not.
  const writingCreate = 'Ended while it wrote'
  let refused: Promise<Awaited<ReturnType<typeof ask>>> | undefined
  terminated += await postgres.terminateWhileWaiting('catalog', undefined, () => {
    refused = ask(base, token, 'POST', '/talks', talkBody({ title: writingCreate }))
  }, 'INSERT INTO catalog')
  const writeEnded = await refused!
  t.same(unexpected([writeEnded]), [], 'a create whose connection ended in its write: 503 ServiceUnavailable with Retry-After')
  t.match(writeEnded, { status: 503, body: { message: /may or may not have been saved/ } }, 'that says the change may have been saved')

  t.ok(alive(web.pid), 'the process is still running')
  t.ok(terminated >= ROUNDS, `${terminated} backends terminated in ${ALL_ROUNDS} rounds`)
  const answers = clients.answers
  t.same(unexpected(answers), [], `all ${answers.length} answers during the faults were 2xx or 503 ServiceUnavailable with Retry-After`)
  // Whether a request of the load was in its write when its connection ended is a matter of timing (reads are sent again): the round above makes one so.
  const unavailable = [...answers, writeEnded].filter(a => a.status === 503)
  t.same(unavailable.filter(a => a.request.startsWith('GET') && !/nothing was changed\. Try again\.$/.test(a.body.message)), [], 'a read may always be sent again')
  t.ok(clients.created.length > 0, `${clients.created.length} talks created during the faults`)

  const after = await Promise.all([
    ...Array.from({ length: 10 }, async () => await ask(base, token, 'GET', '/talks')),
    ...Array.from({ length: 10 }, async () => await ask(base, token, 'GET', '/@search?SearchableText=faulty')),
    ...Array.from({ length: 10 }, async (_, i) => await ask(base, token, 'POST', '/talks', talkBody({ title: `After the faults ${i}` })))
  ])
  t.same(after.filter(a => a.status === null || a.status >= 300).map(a => `${a.request}: ${String(a.status)}`), [], 'after the faults every request succeeds')

  const health = await ask(base, token, 'GET', '/@health?verbose')
  t.equal(health.status, 200)
  t.match(health.body, { status: 'ok', postgres: 'ok', database: { connections_lost: Number, operations_failed: Number, last_failure: { at: String, reason: /57P01/ } } })
  const database = health.body?.database ?? {}
  t.ok(database.connections_lost >= ROUNDS, `@health counts the lost connections (${String(database.connections_lost)})`)
  // Each write is its own operation; readers asking the same page or count at once wait for one read (core/kept.ts), which fails them all.
  const failedWrites = unavailable.filter(a => !a.request.startsWith('GET')).length
  const failedReads = unavailable.length - failedWrites
  t.ok(database.operations_failed >= failedWrites + Math.min(failedReads, 1), `and the operations that failed (${String(database.operations_failed)}, for ${failedWrites} writes and ${failedReads} reads answered 503)`)

  const check = new pg.Client({ connectionString: databaseUrl })
  await check.connect()
  const { rows: [{ found }] } = await check.query<{ found: number }>('SELECT count(*)::int AS found FROM content WHERE uid = ANY($1::uuid[])', [clients.created])
  const { rolledBack } = clients
  const { rows: [{ saved }] } = await check.query<{ saved: number }>("SELECT count(*)::int AS saved FROM content WHERE data->>'title' = ANY($1)", [rolledBack])
  const { rowCount: readingCreates } = await check.query("SELECT 1 FROM content WHERE data->>'title' = $1", [readingCreate])
  const { rowCount: writingCreates } = await check.query("SELECT 1 FROM content WHERE data->>'title' = $1", [writingCreate])
  await check.end()
  t.equal(readingCreates, 1, 'the create whose read was sent again is there once')
  t.equal(writingCreates, 0, 'the create whose write ended is not there')
  t.equal(found, clients.created.length, 'every acknowledged write is in the database')
  t.equal(saved, 0, `none of the ${rolledBack.length} creations answered "nothing was changed" is in the database`)

  const outageLines = logged(web.lines, 'PostgreSQL failed')
  t.ok(outageLines.length >= 1 && outageLines.length <= ALL_ROUNDS, `the outage is logged once per round, not per request (${outageLines.length} lines)`)
  t.same(logged(web.lines, 'request failed'), [], 'no request failed with an internal error')
})
