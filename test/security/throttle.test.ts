import t from 'tap'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { loadConfig } from '../../core/config/config.js'
import { createEmbedded, createPostgres } from '../../core/db/db.js'
import { migrate } from '../../core/db/migrate.js'
import { FailureCounts, type Budget, type Reservation } from '../../core/security/throttle.js'
import { freshDatabase, silentLogger } from '../helper.js'

// Budgets of failed logins (docs/api.md, "Security"): attempts taken from budgets in a sliding
// window before their password is checked, in the database so that every process spends the
// same budgets; times in ms from an origin.
const WINDOW = 60_000
const databaseUrl = await freshDatabase(t)
const db = createPostgres(databaseUrl, silentLogger)
t.teardown(async () => { await db.close() })
await migrate(db)
const at = (ms: number): Date => new Date(Date.UTC(2026, 0, 1) + ms)
const stored = async (): Promise<Array<{ key: string, n: number }>> =>
  (await db.query<{ key: string, n: number }>('SELECT key, cardinality(failures) AS n FROM login_failures ORDER BY key')).rows
t.beforeEach(async () => { await db.query('DELETE FROM login_failures') })

/** The seconds to wait, or 0 when the attempt was admitted. */
const waitOf = (answer: Reservation | { retryAfter: number }): number => 'retryAfter' in answer ? answer.retryAfter : 0
const budget = (key: string, limit: number): Budget => ({ key, limit })

t.test('a budget admits `limit` attempts in the window, then says how long to wait', async t => {
  const counts = new FailureCounts(db, WINDOW)
  t.equal(waitOf(await counts.reserve([budget('jane', 3)], at(0))), 0)
  t.equal(waitOf(await counts.reserve([budget('jane', 3)], at(1000))), 0)
  t.equal(waitOf(await counts.reserve([budget('jane', 3)], at(2000))), 0, 'the third of 3')
  t.equal(waitOf(await counts.reserve([budget('jane', 3)], at(2000))), 58, 'the fourth waits until the first leaves the window, in seconds')
  t.equal(waitOf(await counts.reserve([budget('joe', 3)], at(2000))), 0, 'each key counts for itself')
})

t.test('the wait ends when the oldest counted failure leaves the window', async t => {
  const counts = new FailureCounts(db, WINDOW)
  await counts.reserve([budget('jane', 2)], at(0))
  await counts.reserve([budget('jane', 2)], at(30_000))
  t.equal(waitOf(await counts.reserve([budget('jane', 2)], at(WINDOW - 1))), 1, 'a millisecond before: one second, rounded up')
  t.equal(waitOf(await counts.reserve([budget('jane', 2)], at(WINDOW))), 0, 'then one failure is left in the window, and this one joins it')
  t.equal(waitOf(await counts.reserve([budget('jane', 2)], at(WINDOW))), 30, 'the next waits for the one at 30 s')
})

t.test('an attempt is taken from all its budgets or from none', async t => {
  const counts = new FailureCounts(db, WINDOW)
  await counts.reserve([budget('address:1.2.3.4', 2), budget('user:jane', 5)], at(0))
  await counts.reserve([budget('address:1.2.3.4', 2), budget('user:jane', 5)], at(10_000))
  t.equal(waitOf(await counts.reserve([budget('user:jane', 5), budget('address:1.2.3.4', 2)], at(10_000))), 50, 'the address is spent (until its failure at 0 leaves)')
  t.same(await stored(), [{ key: 'address:1.2.3.4', n: 2 }, { key: 'user:jane', n: 2 }], 'the refused attempt cost jane\'s budget nothing')
  t.equal(waitOf(await counts.reserve([budget('user:jane', 2), budget('address:1.2.3.4', 1)], at(10_000))), 60, 'both spent: the longer wait')
})

t.test('a refunded attempt was no failure', async t => {
  const counts = new FailureCounts(db, WINDOW)
  const first = await counts.reserve([budget('jane', 1), budget('address:a', 9)], at(0))
  t.equal(waitOf(await counts.reserve([budget('jane', 1)], at(0))), 60, 'while its password is checked, it holds the budget')
  await counts.refund(first as Reservation)
  t.equal(waitOf(await counts.reserve([budget('jane', 1)], at(0))), 0, 'given back')
  t.same(await stored(), [{ key: 'address:a', n: 0 }, { key: 'jane', n: 1 }], 'from every budget it was taken from, once')
})

t.test('storage is bounded: a budget is one row of at most its limit, and rows that left the window go', async t => {
  const counts = new FailureCounts(db, WINDOW)
  for (let i = 0; i < 300; i++) await counts.reserve([budget('hammered', 4)], at(i * 10))
  t.same(await stored(), [{ key: 'hammered', n: 4 }], '300 attempts on one budget: one row of 4 failures')
  for (let i = 0; i < 200; i++) await counts.reserve([budget(`spray-${i}`, 4)], at(1000 + i))
  t.equal((await stored()).length, 201, 'a spray of distinct keys within the window: one row each')
  await counts.reserve([budget('late', 4)], at(1199 + WINDOW))
  t.same(await stored(), [{ key: 'late', n: 1 }], 'the next attempt after the window deletes every row whose failures left it')
})

t.test('parallel attempts from two processes never exceed a budget', async t => {
  const other = createPostgres(databaseUrl, silentLogger)
  t.teardown(async () => { await other.close() })
  const processes = [new FailureCounts(db, WINDOW), new FailureCounts(other, WINDOW)]
  const answers = await Promise.all(Array.from({ length: 40 }, async (_, i) =>
    await processes[i % 2].reserve([budget('user:jane', 5), budget(`address:10.0.0.${i % 3}`, 100)], at(0))))
  t.equal(answers.filter(answer => waitOf(answer) === 0).length, 5, '40 at once: exactly 5 admitted')
  const rows = await stored()
  t.same(rows.filter(row => row.key === 'user:jane'), [{ key: 'user:jane', n: 5 }], 'the account holds the 5')
  const total = rows.filter(row => row.key.startsWith('address:')).reduce((sum, row) => sum + row.n, 0)
  t.equal(total, 5, 'the addresses hold the 5 admitted: the 35 refused cost them nothing')
})

t.test('the embedded database (PGlite) keeps the same budgets', async t => {
  const dataDir = await mkdtemp(join(tmpdir(), 'cms-throttle-'))
  const embedded = await createEmbedded(dataDir)
  t.teardown(async () => {
    await embedded.close()
    await rm(dataDir, { recursive: true, force: true })
  })
  await migrate(embedded)
  const counts = new FailureCounts(embedded, WINDOW)
  const first = await counts.reserve([budget('jane', 2), budget('address:a', 9)], at(0))
  t.equal(waitOf(await counts.reserve([budget('jane', 2), budget('address:a', 9)], at(1000))), 0)
  t.equal(waitOf(await counts.reserve([budget('jane', 2), budget('address:a', 9)], at(2000))), 58, 'spent: wait until the first (at 0) leaves')
  await counts.refund(first as Reservation)
  t.equal(waitOf(await counts.reserve([budget('jane', 2)], at(2000))), 0, 'a refund gives the unit back')
  await counts.reserve([budget('other', 2)], at(2001 + WINDOW))
  t.same((await embedded.query<{ key: string }>('SELECT key FROM login_failures')).rows, [{ key: 'other' }], 'rows that left the window go')
})

t.test('the configured limits are bounded, and so is a budget\'s row', async t => {
  for (const name of ['LOGIN_MAX_FAILURES', 'LOGIN_MAX_FAILURES_PER_IP']) {
    t.equal(loadConfig({ [name]: '10000' })[name as 'LOGIN_MAX_FAILURES'], 10000, `${name}: 10000 is the most`)
    t.throws(() => loadConfig({ [name]: '10001' }), new RegExp(`${name}: must be <= 10000`), `${name}: more stops the start`)
  }
})
