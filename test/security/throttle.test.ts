import t from 'tap'
import { createPostgres } from '../../core/db/db.js'
import { migrate } from '../../core/db/migrate.js'
import { FailureCounts } from '../../core/security/throttle.js'
import { freshDatabase, silentLogger } from '../helper.js'

// Login throttling (docs/api.md): failures per key in a sliding window, counted in the
// database so that every process sees the same count; times in ms from an origin.
const WINDOW = 60_000
const databaseUrl = await freshDatabase(t)
const db = createPostgres(databaseUrl, silentLogger)
t.teardown(async () => { await db.close() })
await migrate(db)
const at = (ms: number): Date => new Date(Date.UTC(2026, 0, 1) + ms)
const rows = async (): Promise<number> => (await db.query('SELECT 1 FROM login_failures')).rowCount
t.beforeEach(async () => { await db.query('DELETE FROM login_failures') })

t.test('a key may try until it has `limit` failures in the window', async t => {
  const counts = new FailureCounts(db, WINDOW)
  await counts.fail(['jane'], at(0))
  await counts.fail(['jane'], at(1000))
  t.equal(await counts.retryAfter([['jane', 3]], at(2000)), 0, 'two failures are below the limit of 3')
  await counts.fail(['jane'], at(2000))
  t.equal(await counts.retryAfter([['jane', 3]], at(2000)), 58, 'three: wait until the first leaves the window, in seconds')
  t.equal(await counts.retryAfter([['joe', 3]], at(2000)), 0, 'each key counts for itself')
})

t.test('the wait ends when the oldest counted failure leaves the window', async t => {
  const counts = new FailureCounts(db, WINDOW)
  await counts.fail(['jane'], at(0))
  await counts.fail(['jane'], at(30_000))
  t.equal(await counts.retryAfter([['jane', 2]], at(WINDOW - 1)), 1, 'a millisecond before: one second, rounded up')
  t.equal(await counts.retryAfter([['jane', 2]], at(WINDOW)), 0, 'then one failure is left in the window')
  await counts.fail(['jane'], at(WINDOW))
  t.equal(await counts.retryAfter([['jane', 2]], at(WINDOW)), 30, 'and the next failure waits for the second one')
})

t.test('several keys with their own limits: the longest wait', async t => {
  const counts = new FailureCounts(db, WINDOW)
  await counts.fail(['user:jane', 'address:1.2.3.4'], at(0))
  await counts.fail(['user:jane', 'address:1.2.3.4'], at(10_000))
  t.equal(await counts.retryAfter([['user:jane', 5], ['address:1.2.3.4', 2]], at(10_000)), 50, 'the address is throttled (until its failure at 0 leaves), the user not yet')
  t.equal(await counts.retryAfter([['user:jane', 2], ['address:1.2.3.4', 1]], at(10_000)), 60, 'both: the longer wait')
})

t.test('reset forgets a key', async t => {
  const counts = new FailureCounts(db, WINDOW)
  await counts.fail(['jane'], at(0))
  t.equal(await counts.retryAfter([['jane', 1]], at(0)), 60, 'throttled')
  await counts.reset('jane')
  t.equal(await counts.retryAfter([['jane', 1]], at(0)), 0, 'free again')
})

t.test('failures that left the window are deleted by the next failure, whatever its key', async t => {
  const counts = new FailureCounts(db, 100)
  await counts.fail(['a', 'b'], at(0))
  await counts.fail(['c'], at(50))
  t.equal(await rows(), 3, 'within the window nothing is forgotten')
  await counts.fail(['d'], at(149))
  t.equal(await rows(), 2, 'a and b (at 0) left the window at 100 and are gone; c (at 50) and d stay')
})

t.test('two instances on one database count the same failures (two processes)', async t => {
  const other = createPostgres(databaseUrl, silentLogger)
  t.teardown(async () => { await other.close() })
  const here = new FailureCounts(db, WINDOW)
  const there = new FailureCounts(other, WINDOW)
  await here.fail(['jane'], at(0))
  await there.fail(['jane'], at(1))
  t.equal(await here.retryAfter([['jane', 2]], at(2)), 60, 'each sees the other\'s failure')
})
