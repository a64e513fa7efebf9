import t, { type Test } from 'tap'
import { cp, mkdtemp, readdir, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { basename, join } from 'node:path'
import { createPostgres, type Db } from '../../core/db/db.js'
import { migrate } from '../../core/db/migrate.js'
import { migrationsDir } from '../../core/config/paths.js'
import { build, freshDatabase, silentLogger } from '../helper.js'

/**
 * A token is bound to the user record it was issued for (issue 11, defect 6;
 * docs/api.md): deleting the user (whose id nobody can take again) or changing
 * the password ends its tokens at once; logout and renew behave as before;
 * revocation names sessions, also across the upgrade that made it so.
 */
const service = await build(t)
const { call } = service
const admin = await service.tokenFor('admin')

async function login (name: string, password: string): Promise<string> {
  const res = await call('POST', '/@login', { login: name, password })
  if (res.statusCode !== 200) throw new Error(`login of ${name} failed: ${res.statusCode} ${res.body}`)
  return (res.json() as { token: string }).token
}
async function createUser (username: string, roles = ['Member']): Promise<void> {
  const res = await call('POST', '/@users', { username, email: `${username}@example.org`, password: `${username}-password`, roles }, admin)
  if (res.statusCode !== 201) throw new Error(`creating ${username} failed: ${res.statusCode} ${res.body}`)
}
const statusWith = async (token: string, url: string): Promise<number> => (await call('GET', url, undefined, token)).statusCode

t.test('the token of a deleted user stays refused; nobody can take its name to revive it', async t => {
  await createUser('gone')
  const old = await login('gone', 'gone-password')
  t.equal(await statusWith(old, '/@users/gone'), 200, 'the token works while its user lives')
  t.equal((await call('DELETE', '/@users/gone', undefined, admin)).statusCode, 204)
  const again = await call('POST', '/@users', { username: 'gone', email: 'gone2@example.org', password: 'gone-password', roles: ['Manager'] }, admin)
  t.equal(again.statusCode, 409, 'the id is retired (test/security/user-ids.test.ts)')

  for (const url of ['/@users', '/@users/gone', '/talks']) {
    const res = await call('GET', url, undefined, old)
    t.equal(res.statusCode, 401, `GET ${url} with the old token`)
    t.equal(res.json().type, 'Unauthorized')
  }
})

t.test('a user changing their own password ends all their tokens; they log in again', async t => {
  await createUser('pia')
  const [laptop, phone] = [await login('pia', 'pia-password'), await login('pia', 'pia-password')]
  const changed = await call('PATCH', '/@users/pia', { password: 'pias-new-password' }, laptop)
  t.equal(changed.statusCode, 204)
  t.equal(changed.body, '', 'no new token in the answer: the client logs in again')
  for (const [name, token] of [['the token that made the change', laptop], ['another session', phone]]) {
    const res = await call('GET', '/@users/pia', undefined, token)
    t.equal(res.statusCode, 401, name)
    t.equal(res.json().type, 'Unauthorized')
  }
  t.equal((await call('POST', '/@login', { login: 'pia', password: 'pia-password' })).statusCode, 401, 'the old password is gone')
  t.equal(await statusWith(await login('pia', 'pias-new-password'), '/@users/pia'), 200, 'a login with the new password works')
})

t.test('a Manager changing a user\'s password ends that user\'s tokens, not the Manager\'s', async t => {
  await createUser('max')
  const maxs = await login('max', 'max-password')
  t.equal((await call('PATCH', '/@users/max', { fullname: 'Max M.', email: 'max.m@example.org' }, admin)).statusCode, 204)
  t.equal(await statusWith(maxs, '/@users/max'), 200, 'a change that leaves the password alone keeps the sessions')

  t.equal((await call('PATCH', '/@users/max', { password: 'set-by-the-manager' }, admin)).statusCode, 204)
  t.equal(await statusWith(maxs, '/@users/max'), 401, 'the user\'s token ends at once')
  t.equal(await statusWith(admin, '/@users/max'), 200, 'the Manager\'s token goes on')
  t.equal(await statusWith(await login('max', 'set-by-the-manager'), '/@users/max'), 200)
})

t.test('logout and renew behave as before, and a renewed token is bound too', async t => {
  await createUser('ren')
  const first = await login('ren', 'ren-password')
  const other = await login('ren', 'ren-password')
  const renewed = await call('POST', '/@login-renew', undefined, first)
  t.equal(renewed.statusCode, 200)
  const fresh = (renewed.json() as { token: string }).token
  t.equal(await statusWith(fresh, '/@users/ren'), 200, 'the renewed token works')
  t.equal(await statusWith(first, '/@users/ren'), 401, 'the renewed one is revoked')

  t.equal((await call('POST', '/@logout', undefined, other)).statusCode, 204)
  t.equal(await statusWith(other, '/@users/ren'), 401, 'the logged-out token is refused')
  t.equal(await statusWith(fresh, '/@users/ren'), 200, 'the other session goes on')

  t.equal((await call('PATCH', '/@users/ren', { password: 'rens-new-password' }, admin)).statusCode, 204)
  t.equal(await statusWith(fresh, '/@users/ren'), 401, 'a password change ends the renewed token too')
  t.equal((await call('POST', '/@login-renew', undefined, fresh)).statusCode, 401, 'and it cannot be renewed')
})

t.test('a token without the binding (issued before it existed) is refused with 401', async t => {
  // What the previous version signed: the same secret and claims, no binding.
  const unbound = service.app.jwt.sign({ sub: 'admin', fullname: 'Administrator', jti: 'before-the-binding' })
  const res = await call('GET', '/@users', undefined, unbound)
  t.equal(res.statusCode, 401)
  t.equal(res.json().type, 'Unauthorized')
  const { rows } = await service.app.db.query<{ token_key: string }>("SELECT token_key FROM users WHERE id = 'admin'")
  const wrongKey = service.app.jwt.sign({ sub: 'admin', fullname: 'Administrator', jti: 'wrong-key', token_key: `${rows[0].token_key}x` })
  t.equal(await statusWith(wrongKey, '/@users'), 401, 'nor is one bound to another record')
  t.equal(await statusWith(admin, '/@users'), 200, 'the admin\'s real token works')
})

/** A database migrated up to (not including) the migration whose name starts with `prefix`, and that migration's name. */
async function migratedBefore (t: Test, prefix: string): Promise<{ db: Db, name: string }> {
  const databaseUrl = await freshDatabase(t)
  const db = createPostgres(databaseUrl, silentLogger)
  t.teardown(async () => { await db.close() })
  const before = await mkdtemp(join(tmpdir(), 'migrations-'))
  t.teardown(async () => { await rm(before, { recursive: true, force: true }) })
  const names = await readdir(migrationsDir)
  const name = names.find(n => n.startsWith(prefix))
  if (name === undefined) throw new Error(`no migration ${prefix}`)
  await cp(migrationsDir, before, { recursive: true, filter: source => basename(source) < name || !source.endsWith('.sql') })
  await migrate(db, before)
  return { db, name }
}

t.test('the migration gives each user that exists already a key of its own', async t => {
  const { db, name: binding } = await migratedBefore(t, '006_')
  await db.query('INSERT INTO users (id, email, password_hash) VALUES (\'old1\', \'old1@example.org\', \'x\'), (\'old2\', \'old2@example.org\', \'x\')')

  t.equal((await migrate(db))[0], binding, 'applies the binding migration')
  const { rows } = await db.query<{ token_key: string }>('SELECT token_key FROM users')
  t.equal(rows.length, 2)
  t.ok(rows.every(r => typeof r.token_key === 'string' && r.token_key.length >= 32), 'every user has a long key')
  t.not(rows[0].token_key, rows[1].token_key, 'no two users share one')
})

t.test('revocation by session: tokens revoked before it (known by their text) end every session once, if any is unexpired', async t => {
  for (const [revoked, endsSessions] of [['now() + interval \'1 hour\'', true], ['now() - interval \'1 hour\'', false], [null, false]] as const) {
    const { db, name } = await migratedBefore(t, '012_')
    await db.query('INSERT INTO users (id, email, password_hash) VALUES (\'u1\', \'u1@example.org\', \'x\'), (\'u2\', \'u2@example.org\', \'x\')')
    if (revoked !== null) await db.query(`INSERT INTO revoked_tokens (token_hash, expires_at) VALUES ('a-hash', ${revoked})`)
    const keys = async (): Promise<string[]> => (await db.query<{ token_key: string }>('SELECT token_key FROM users ORDER BY id')).rows.map(r => r.token_key)
    const before = await keys()
    t.equal((await migrate(db))[0], name, 'applies the sessions migration (and any after it)')
    const after = await keys()
    const what = revoked === null ? 'nothing revoked' : `a revoked token expiring at ${revoked}`
    if (endsSessions) t.ok(after.every((key, i) => key !== before[i]), `${what}: every user has a new key`)
    else t.same(after, before, `${what}: sessions go on`)
    t.equal((await db.query("SELECT to_regclass('revoked_tokens') AS gone")).rows[0].gone, null, 'the table of token hashes is gone')
  }
})
