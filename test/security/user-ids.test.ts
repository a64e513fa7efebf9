import t from 'tap'
import fc from 'fast-check'
import pg from 'pg'
import { build, talkBody } from '../helper.js'

/**
 * A user id, once used, is never given to another user (issue 22, finding 12;
 * docs/api.md, Security): ownership and local roles name it. Deleting a user
 * retires its id, in any case; creating a user with a retired id is 409
 * Conflict saying why, also when the create races the delete; the deleted
 * user's tokens stay refused.
 */
const service = await build(t)
const { call } = service
const admin = await service.tokenFor('admin')

const newUser = (username: string): Record<string, unknown> =>
  ({ username, email: `${username.toLowerCase()}-${Math.random().toString(36).slice(2, 8)}@example.org`, password: 'a long password', roles: ['Contributor'] })
async function create (username: string): Promise<void> {
  const res = await call('POST', '/@users', newUser(username), admin)
  if (res.statusCode !== 201) throw new Error(`creating ${username}: ${res.statusCode} ${res.body}`)
}
const inAnyCase = (name: string): fc.Arbitrary<string> =>
  fc.array(fc.boolean(), { minLength: name.length, maxLength: name.length }).map(upper => [...name].map((c, i) => upper[i] ? c.toUpperCase() : c).join(''))
const isRetiredAnswer = (res: { statusCode: number, json: () => { type: string, message: string } }): boolean =>
  res.statusCode === 409 && res.json().type === 'Conflict' && /deleted user.*never reused/.test(res.json().message)

t.test('a deleted user\'s id is never given again, in any case; its content and tokens go to nobody', async t => {
  await create('olga')
  const olgas = (await call('POST', '/@login', { login: 'olga', password: 'a long password' })).json().token as string
  const talk = await call('POST', '/talks', talkBody({ title: 'Olga\'s talk' }), olgas)
  t.equal(talk.statusCode, 201)
  t.equal((await call('DELETE', '/@users/olga', undefined, admin)).statusCode, 204)

  await fc.assert(fc.asyncProperty(inAnyCase('olga'), async name => {
    const res = await call('POST', '/@users', newUser(name), admin)
    if (!isRetiredAnswer(res)) throw new Error(`creating ${name}: ${res.statusCode} ${res.body}`)
  }), { numRuns: 12 })
  const refused = await call('POST', '/@users', newUser('olga'), admin)
  t.same(refused.json(), { type: 'Conflict', message: 'The user name \'olga\' belonged to a deleted user: user ids are never reused, so that nobody inherits another user\'s content or roles.' })
  t.equal((await call('GET', '/@users/olga', undefined, admin)).statusCode, 404, 'nobody holds the id')
  t.equal((await call('GET', '/@users/olga', undefined, olgas)).statusCode, 401, 'the deleted user\'s token stays refused')
  t.equal((await call('POST', '/@login', { login: 'olga', password: 'a long password' })).statusCode, 401, 'nobody logs in as olga')
  const { rows } = await service.app.db.query<{ owner: string }>('SELECT owner FROM content WHERE id = $1', [talk.json().id])
  t.equal(rows[0].owner, 'olga', 'the talk still names its (deleted) owner, whom nobody can become')

  await create('olga2')
  t.equal((await call('GET', '/@users/olga2', undefined, admin)).statusCode, 200, 'other ids are free as before')
})

/** A connection of the test's own, to hold locks that line the requests up. */
const holder = new pg.Client({ connectionString: service.databaseUrl })
await holder.connect()
t.teardown(async () => { await holder.end() })
async function untilWaiting (count: number, what: string): Promise<void> {
  for (;;) {
    const { rows: [{ n }] } = await holder.query<{ n: number }>(`SELECT count(*)::int AS n FROM pg_locks WHERE NOT granted AND ${what}`)
    if (n >= count) return
    await new Promise(resolve => setImmediate(resolve))
  }
}

/**
 * Three orders of a delete and four creates of its id (in several cases):
 * as they come; the creates checking while the delete waits to commit (the
 * user is still there); the creates checking right after the delete
 * committed, having started before it (they wait on the login lock).
 */
const orders = ['as they come', 'creates check before the delete commits', 'creates check after the delete commits'] as const

t.test('a create racing the delete of the same id never gets it', async t => {
  for (const [round, order] of [...orders, ...orders].entries()) {
    const name = `racer${round}`
    await create(name)
    const token = (await call('POST', '/@login', { login: name, password: 'a long password' })).json().token as string
    const names = [name, name.toUpperCase(), name, `R${name.slice(1)}`]
    const creating = async (): Promise<Array<{ statusCode: number, json: () => { type: string, message: string } }>> =>
      await Promise.all(names.map(async n => await call('POST', '/@users', newUser(n), admin)))
    let deleted, creates
    if (order === 'as they come') {
      [deleted, creates] = await Promise.all([call('DELETE', `/@users/${name}`, undefined, admin), creating()])
    } else if (order === 'creates check before the delete commits') {
      await holder.query('BEGIN')
      await holder.query('SELECT 1 FROM users WHERE id = $1 FOR UPDATE', [name])
      const deleting = call('DELETE', `/@users/${name}`, undefined, admin)
      await untilWaiting(1, "locktype = 'transactionid'")
      creates = await creating()
      await holder.query('COMMIT')
      deleted = await deleting
    } else {
      await holder.query('BEGIN')
      await holder.query('SELECT pg_advisory_xact_lock(7340004)') // the lock of login writes (core/security/users.ts)
      const waiting = creating()
      await untilWaiting(names.length, "locktype = 'advisory'")
      deleted = await call('DELETE', `/@users/${name}`, undefined, admin)
      await holder.query('COMMIT')
      creates = await waiting
    }
    t.equal(deleted.statusCode, 204, `${order}: deleted`)
    t.same(creates.map(c => c.statusCode), [409, 409, 409, 409], `${order}: no create got the id`)
    t.ok(creates.every(c => c.json().type === 'Conflict'))
    t.equal((await call('GET', `/@users/${name}`, undefined, admin)).statusCode, 404, `${order}: nobody holds ${name}`)
    t.ok(isRetiredAnswer(await call('POST', '/@users', newUser(name), admin)), `${order}: and later creates are told why`)
    t.equal((await call('GET', '/talks', undefined, token)).statusCode, 401, `${order}: the deleted user's token is refused`)
  }
})
