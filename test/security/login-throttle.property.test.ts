import t from 'tap'
import fc from 'fast-check'
import { randomBytes, scryptSync } from 'node:crypto'
import { createPostgres } from '../../core/db/db.js'
import { migrate } from '../../core/db/migrate.js'
import { DeviceCookies } from '../../core/security/device-cookies.js'
import { Sessions } from '../../core/security/sessions.js'
import { ApiError } from '../../core/errors.js'
import { freshDatabase, JWT_SECRET, silentLogger } from '../helper.js'

/**
 * Login throttling with device cookies (docs/api.md, "Security"), as a property: random
 * sequences of login attempts by several clients (the user's browsers, an attacker's), from a
 * few addresses, by every spelling of a login, with right and wrong passwords, with the
 * cookies each client was given or forged ones, while time advances, answer what an oracle
 * written from the rules (not from the code) says: the status, and the wait of every 429.
 *
 * The rules: a client that holds an unexpired device cookie the service gave it when it logged
 * in as that user is a known device of that user, and its attempts as that user spend only its
 * own budget of LIMIT failures per WINDOW. Any other attempt (no cookie, a cookie forged, of
 * another user, expired) spends its account's budget (LIMIT: a user by any spelling, an unknown
 * login string by itself, in any case) and its address's (ADDRESS_LIMIT). An attempt whose
 * budget is spent answers 429, even with the right password, with the seconds until its spent
 * budgets have room; a success costs no budget and gives the client a new device cookie.
 */
const WINDOW_S = 60
const LIMIT = 3
const ADDRESS_LIMIT = 5
const COOKIE_LIFETIME_S = 150
const SEED = 20260122

const databaseUrl = await freshDatabase(t)
const db = createPostgres(databaseUrl, silentLogger)
t.teardown(async () => { await db.close() })
await migrate(db)

// The users. Their hashes are made with a small scrypt cost (the format names its parameters and
// the service verifies any): the property checks thousands of passwords.
const USERS = ['vera', 'mallory']
const passwordOf = (user: string): string => `${user}-password`
const cheapHash = (password: string): string => {
  const salt = randomBytes(16)
  return ['scrypt', 1024, 8, 1, salt.toString('base64'), scryptSync(password, salt, 32, { N: 1024, r: 8, p: 1 }).toString('base64')].join('$')
}
for (const user of USERS) {
  await db.query('INSERT INTO users (id, email, fullname, password_hash, roles) VALUES ($1, $2, $1, $3, $4)', [user, `${user}@example.org`, cheapHash(passwordOf(user)), ['Member']])
}
const sessions = new Sessions(db, { perUser: LIMIT, perAddress: ADDRESS_LIMIT, windowSeconds: WINDOW_S }, new DeviceCookies(JWT_SECRET, COOKIE_LIFETIME_S))

type Target = 'vera' | 'mallory' | 'nobody'
const SPELLINGS: Record<Target, string[]> = {
  vera: ['vera', 'VERA', 'vera@example.org', 'Vera@Example.ORG'],
  mallory: ['mallory', 'Mallory', 'mallory@example.org', 'MALLORY@EXAMPLE.ORG'],
  nobody: ['nobody', 'NoBody', 'nobody@example.org']
}
type Forgery = 'none' | 'random' | 'other user' | 'tampered'
interface Attempt { kind: 'attempt', client: number, target: Target, spelling: number, right: boolean, address: number, forgery: Forgery }
interface Wait { kind: 'wait', seconds: number }
type Step = Attempt | Wait

// Clients 0 and 1 are Vera's browsers, mostly with her password; client 2 is an attacker's, mostly
// guessing, at any login, with forged cookies too (it knows Mallory's password: its own account).
const attempt = (clients: fc.Arbitrary<number>, targets: Target[], right: boolean[], forgeries: Forgery[]): fc.Arbitrary<Attempt> =>
  fc.record({ kind: fc.constant('attempt' as const), client: clients, target: fc.constantFrom(...targets), spelling: fc.nat(3), right: fc.constantFrom(...right), address: fc.integer({ min: 0, max: 2 }), forgery: fc.constantFrom(...forgeries) })
const step: fc.Arbitrary<Step> = fc.oneof(
  { weight: 2, arbitrary: attempt(fc.integer({ min: 0, max: 1 }), ['vera'], [true, true, true, false], ['none']) },
  { weight: 3, arbitrary: attempt(fc.constant(2), ['vera', 'vera', 'mallory', 'nobody'], [true, false, false, false], ['none', 'random', 'other user', 'tampered']) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('wait' as const), seconds: fc.constantFrom(1, 10, 30, 59, 61, 100) }) }
)

/** The oracle: budgets as lists of failure times, devices as what each client was given. */
class Oracle {
  now = 0
  /** How often the cases the property is about occurred. */
  readonly seen = { 'a known device let in while unknown clients were refused': 0, 'a forged cookie refused': 0, 'an expired device cookie ignored': 0 }
  private readonly failures = new Map<string, number[]>()
  // client -> user -> the device the client got at its last login as that user.
  private readonly devices = new Map<number, Map<string, { id: number, issuedAt: number }>>()
  private nextDevice = 0

  private recent (budget: string): number[] {
    return (this.failures.get(budget) ?? []).filter(at => at > this.now - WINDOW_S * 1000).sort((a, b) => b - a)
  }

  private spent (budget: string, limit: number): boolean {
    return this.recent(budget).length >= limit
  }

  expect (a: Attempt): { status: number, retryAfter?: number } {
    const device = a.target === 'nobody' || a.forgery !== 'none' ? undefined : this.devices.get(a.client)?.get(a.target)
    const known = device !== undefined && this.now < device.issuedAt + COOKIE_LIFETIME_S * 1000
    if (device !== undefined && !known) this.seen['an expired device cookie ignored']++
    const account = a.target === 'nobody' ? `unknown:${SPELLINGS.nobody[a.spelling % 3].toLowerCase()}` : `user:${a.target}`
    const budgets: Array<[string, number]> = known ? [[`device:${device.id}`, LIMIT]] : [[account, LIMIT], [`address:${a.address}`, ADDRESS_LIMIT]]
    let retryAfter = 0
    for (const [budget, limit] of budgets) {
      const recent = this.recent(budget)
      if (this.spent(budget, limit)) retryAfter = Math.max(retryAfter, Math.ceil((recent[limit - 1] + WINDOW_S * 1000 - this.now) / 1000))
    }
    if (retryAfter > 0) {
      if (a.forgery !== 'none') this.seen['a forged cookie refused']++
      return { status: 429, retryAfter }
    }
    if (a.target !== 'nobody' && a.right) {
      if (known && (this.spent(account, LIMIT) || this.spent(`address:${a.address}`, ADDRESS_LIMIT))) {
        this.seen['a known device let in while unknown clients were refused']++
      }
      const given = this.devices.get(a.client) ?? new Map()
      given.set(a.target, { id: this.nextDevice++, issuedAt: this.now })
      this.devices.set(a.client, given)
      return { status: 200 }
    }
    for (const [budget] of budgets) this.failures.set(budget, [...(this.failures.get(budget) ?? []), this.now])
    return { status: 401 }
  }
}

const ORIGIN = Date.UTC(2026, 0, 1)

t.test('every answer is the oracle\'s', async t => {
  let attempts = 0
  const seen: Record<string, number> = {}
  await fc.assert(fc.asyncProperty(fc.array(step, { minLength: 10, maxLength: 40 }), async steps => {
    await db.query('DELETE FROM login_failures')
    const oracle = new Oracle()
    // What each client holds: cookie name -> value, as a browser keeps them.
    const jars = new Map<number, Map<string, string>>([[0, new Map()], [1, new Map()], [2, new Map()]])
    // The cookie names the service gave, per user (an attacker sees its own; it may guess others).
    const names = new Map<string, string>()
    for (const s of steps) {
      if (s.kind === 'wait') {
        oracle.now += s.seconds * 1000
        continue
      }
      const jar = jars.get(s.client)!
      const name = names.get(s.target) ?? 'talks_device_AAAAAAAAAAAAAAAA'
      const otherUsersValue = [...jars.values()].flatMap(held => [...held]).find(([held]) => held !== name)?.[1]
      const ownValue = jar.get(name)
      // A forgery replaces what the client holds under the target's cookie name; one the
      // client cannot make (it has nothing to copy) leaves its cookies as they are.
      const forgeries: Record<Forgery, string | undefined> = {
        none: undefined,
        random: `${Math.floor((ORIGIN + oracle.now) / 1000) + 100}.${randomBytes(16).toString('base64url')}.${randomBytes(32).toString('base64url')}`,
        'other user': otherUsersValue,
        tampered: ownValue === undefined ? undefined : ownValue.slice(0, -1) + (ownValue.endsWith('A') ? 'B' : 'A')
      }
      const forged = forgeries[s.forgery]
      const sent = new Map(jar)
      if (forged !== undefined) sent.set(name, forged)
      const header = [...sent].map(([cookie, value]) => `${cookie}=${value}`).join('; ')
      const expected = oracle.expect({ ...s, forgery: forged === undefined ? 'none' : s.forgery })
      const login = SPELLINGS[s.target][s.spelling % SPELLINGS[s.target].length]
      const password = s.right ? passwordOf(s.target) : 'wrong-password'
      let status: number
      let retryAfter: number | undefined
      try {
        const { subject, deviceCookie } = await sessions.login({ login, password, address: `10.0.0.${s.address}`, cookieHeader: header }, new Date(ORIGIN + oracle.now))
        status = 200
        if (subject.id !== s.target) throw new Error(`${login} logged in as ${subject.id}`)
        jar.set(deviceCookie.name, deviceCookie.value)
        names.set(s.target, deviceCookie.name)
      } catch (err) {
        if (!(err instanceof ApiError)) throw err
        status = err.statusCode
        retryAfter = status === 429 ? Number(err.headers?.['retry-after']) : undefined
      }
      attempts++
      if (status !== expected.status || retryAfter !== expected.retryAfter) {
        throw new Error(`at ${oracle.now / 1000} s, ${JSON.stringify(s)} as ${login}: ${status} (Retry-After ${retryAfter}), the oracle says ${expected.status} (Retry-After ${expected.retryAfter})`)
      }
    }
    for (const [name, n] of Object.entries(oracle.seen)) seen[name] = (seen[name] ?? 0) + n
  }), { seed: SEED, numRuns: 50 })
  t.pass(`${attempts} attempts answered as the oracle says`)
  // The sequences reach what the property is about (not only first attempts on empty budgets).
  for (const [name, n] of Object.entries(seen)) t.ok(n > 0, `${name}: ${n} times`)
})
