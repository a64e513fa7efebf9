import t from 'tap'
import { createHmac, randomUUID } from 'node:crypto'
import { ConfigError, loadConfig } from '../../core/config/config.js'
import { ADMIN_PASSWORD, JWT_SECRET, build, freshDatabase, talkBody, type TestApp } from '../helper.js'

/**
 * Authentication (docs/api.md): @login, the token, @login-renew, @logout, the
 * JWT secret, and login throttling; with the error rows of docs/api.md that
 * concern credentials (400 ExpiredSignatureError, 401, 429).
 *
 * Tokens are also made here by hand (HS256 over base64url JSON, RFC 7519) so
 * that the tests do not trust the JWT library they test.
 */
const segment = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url')
const signature = (unsigned: string, secret: string): string => createHmac('sha256', secret).update(unsigned).digest('base64url')
function handMade (claims: Record<string, unknown>, { secret = JWT_SECRET, header = { alg: 'HS256', typ: 'JWT' } as Record<string, unknown> } = {}): string {
  const unsigned = `${segment(header)}.${segment(claims)}`
  return `${unsigned}.${signature(unsigned, secret)}`
}
const partOf = (token: string, index: 0 | 1): Record<string, unknown> => JSON.parse(Buffer.from(token.split('.')[index], 'base64url').toString())
const nowInSeconds = (): number => Math.floor(Date.now() / 1000)

// Low limits, so that throttling shows after a few failures. Each test that
// fails logins does so from its own client address.
const service = await build(t, { env: { LOGIN_MAX_FAILURES: '2', LOGIN_MAX_FAILURES_PER_IP: '3' } })
const { call, tokenFor } = service
// A token carries the key of its user's record (test/security/tokens.test.ts).
const { rows: [{ token_key: adminKey }] } = await service.app.db.query<{ token_key: string }>("SELECT token_key FROM users WHERE id = 'admin'")
const adminClaims = (exp: number): Record<string, unknown> => ({ sub: 'admin', fullname: 'Administrator', token_key: adminKey, iat: exp - 3600, exp, jti: randomUUID() })

async function login (app: TestApp, name: string, password: string, address = '127.0.0.1'): ReturnType<TestApp['inject']> {
  return await app.inject({
    method: 'POST', url: '/@login', remoteAddress: address, headers: { accept: 'application/json', 'content-type': 'application/json' }, payload: { login: name, password }
  })
}
const tokenOf = (res: { json: () => unknown }): string => (res.json() as { token: string }).token

t.test('@login', async t => {
  t.test('answers 200 {token} for the user name or the e-mail address, in any case', async t => {
    await tokenFor('ann')
    for (const name of ['ANN', 'Ann@Example.ORG']) {
      const res = await login(service, name, 'ann-password')
      t.equal(res.statusCode, 200, name)
      t.same(Object.keys(res.json()), ['token'])
      t.equal(partOf(tokenOf(res), 1).sub, 'ann', `${name} logs in as the user ann`)
    }
  })

  t.test('a missing or empty field is 400 BadRequest naming the field', async t => {
    const cases: Array<[unknown, string]> = [
      [{ login: 'ann' }, 'password'], [{ password: 'ann-password' }, 'login'], [{ login: '', password: 'ann-password' }, 'login']
    ]
    for (const [body, field] of cases) {
      const res = await call('POST', '/@login', body)
      t.equal(res.statusCode, 400, JSON.stringify(body))
      t.equal(res.json().type, 'BadRequest')
      t.same(res.json().errors.map((e: { field: string }) => e.field), [field])
    }
    const noBody = await call('POST', '/@login')
    t.equal(noBody.statusCode, 400)
    t.equal(noBody.json().message, 'Invalid input. The request body must be a JSON object.')
  })

  t.test('a wrong password and an unknown login get the same 401 Unauthorized', async t => {
    await tokenFor('wes')
    const wrongPassword = await login(service, 'wes', 'not-his-password', '10.0.9.1')
    const unknownLogin = await login(service, 'nobody-at-all', 'wes-password', '10.0.9.2')
    for (const res of [wrongPassword, unknownLogin]) {
      t.equal(res.statusCode, 401)
      t.same(res.json(), { type: 'Unauthorized', message: 'Wrong login and/or password.' })
      t.equal(res.headers['www-authenticate'], 'Bearer realm="api"')
    }
  })
})

t.test('passwords are kept as salted scrypt hashes, never in plain text', async t => {
  const admin = await tokenFor('admin')
  for (const username of ['pat', 'quinn']) {
    const created = await call('POST', '/@users', { username, email: `${username}@example.org`, password: 'the same password' }, admin)
    t.equal(created.statusCode, 201)
  }
  const { rows } = await service.app.db.query<{ id: string, password_hash: string }>(
    "SELECT id, password_hash FROM users WHERE id IN ('admin', 'pat', 'quinn') ORDER BY id")
  t.equal(rows.length, 3)
  for (const { id, password_hash: hash } of rows) {
    t.match(hash, /^scrypt\$32768\$8\$1\$[A-Za-z0-9+/]{22}==\$[A-Za-z0-9+/]{43}=$/, `${id}: scrypt with N=2^15, r=8, p=1, a 16-byte salt`)
    t.notMatch(hash, /the same password|admin-secret/)
  }
  t.not(rows[1].password_hash, rows[2].password_hash, 'the same password hashes differently for two users (salted)')
  t.equal((await login(service, 'pat', 'the same password')).statusCode, 200)
})

t.test('a token is HS256 with sub, fullname, iat and exp = iat + JWT_TTL (12 h by default)', async t => {
  const before = nowInSeconds()
  const token = tokenOf(await login(service, 'admin', ADMIN_PASSWORD))
  const [header, claims] = [partOf(token, 0), partOf(token, 1)]
  t.same(header, { alg: 'HS256', typ: 'JWT' })
  t.match(claims, { sub: 'admin', fullname: 'Administrator' })
  t.ok(Number(claims.iat) >= before && Number(claims.iat) <= nowInSeconds(), 'iat is the time of issue')
  t.equal(Number(claims.exp) - Number(claims.iat), 43200)
  const [head, payload, signed] = token.split('.')
  t.equal(signed, signature(`${head}.${payload}`, JWT_SECRET), 'signed with JWT_SECRET')
})

t.test('an expired token fails ANY request with 400 ExpiredSignatureError', async t => {
  const expired = handMade(adminClaims(nowInSeconds() - 1))
  const requests: Array<[string, string, unknown?]> = [
    ['GET', '/'], ['GET', '/talks'], ['GET', '/talks/no-such-talk'], ['POST', '/talks', talkBody()],
    ['GET', '/@search?SearchableText=plone'], ['POST', '/@login-renew'], ['POST', '/@logout'], ['GET', '/@users'],
    ['POST', '/@login', { login: 'admin', password: ADMIN_PASSWORD }], ['GET', '/@no-such-service']
  ]
  for (const [method, url, body] of requests) {
    const res = await call(method as 'GET', url, body, expired)
    t.equal(res.statusCode, 400, `${method} ${url}`)
    t.same(res.json(), { type: 'ExpiredSignatureError', message: 'Signature has expired. Log in again to get a new token.' })
  }
  const stillValid = await call('GET', '/@users/admin', undefined, handMade(adminClaims(nowInSeconds() + 60)))
  t.equal(stillValid.statusCode, 200, 'a token that expires in a minute is still good')

  const expiredAndForged = handMade(adminClaims(nowInSeconds() - 1), { secret: 'another-secret-that-is-long-enough!!' })
  t.equal((await call('GET', '/talks', undefined, expiredAndForged)).statusCode, 401, 'the expiry of a token we did not sign is not believed: 401')
})

t.test('an invalid token is refused with 401 Unauthorized, even where anonymous access would do', async t => {
  const genuine = await tokenFor('ivy')
  const [head, , signed] = genuine.split('.')
  const invalid: Record<string, string> = {
    'a tampered payload': `${head}.${segment(adminClaims(nowInSeconds() + 3600))}.${signed}`,
    'alg: none': `${segment({ alg: 'none', typ: 'JWT' })}.${segment(adminClaims(nowInSeconds() + 3600))}.`,
    'alg: none signed anyway': handMade(adminClaims(nowInSeconds() + 3600), { header: { alg: 'none', typ: 'JWT' } }),
    'another secret': handMade(adminClaims(nowInSeconds() + 3600), { secret: 'another-secret-that-is-long-enough!!' }),
    'not a JWT': 'not-a-token',
    'three garbage parts': 'a.b.c',
    'an unknown user': handMade({ sub: 'ghost', fullname: 'Ghost', iat: nowInSeconds(), exp: nowInSeconds() + 3600 })
  }
  for (const [name, token] of Object.entries(invalid)) {
    for (const [method, url, body] of [['GET', '/talks'], ['POST', '/talks', talkBody()]] as const) {
      const res = await call(method, url, body, token)
      t.equal(res.statusCode, 401, `${name}: ${method} ${url}`)
      t.equal(res.json().type, 'Unauthorized')
      t.equal(res.headers['www-authenticate'], 'Bearer realm="api"')
    }
  }
  const noToken = await service.inject({ method: 'GET', url: '/talks', headers: { authorization: 'Bearer' } })
  t.equal(noToken.statusCode, 401, 'the Bearer scheme without a token')

  const basic = `Basic ${Buffer.from(`admin:${ADMIN_PASSWORD}`).toString('base64')}`
  const publicPage = await service.inject({ method: 'GET', url: '/talks', headers: { authorization: basic } })
  t.equal(publicPage.statusCode, 200, 'other schemes are not ours to judge: the request is anonymous')
  const write = await call('POST', '/talks', talkBody(), undefined, { authorization: basic })
  t.equal(write.statusCode, 401, '… and an anonymous write is 401')
})

t.test('@login-renew answers a fresh token and revokes the one it was called with', async t => {
  await tokenFor('rene')
  const old = tokenOf(await login(service, 'rene', 'rene-password'))
  const renewed = await call('POST', '/@login-renew', undefined, old) // within the same second as the login
  t.equal(renewed.statusCode, 200)
  const fresh = tokenOf(renewed)
  t.not(fresh, old)
  t.match(partOf(fresh, 1), { sub: 'rene', fullname: 'User rene' })
  t.ok(Number(partOf(fresh, 1).exp) >= Number(partOf(old, 1).exp))
  t.equal((await call('GET', '/@users/rene', undefined, fresh)).statusCode, 200, 'the fresh token works')
  const refused = await call('GET', '/@users/rene', undefined, old)
  t.equal(refused.statusCode, 401, 'the old token is refused')
  t.equal(refused.json().type, 'Unauthorized')

  const anonymous = await call('POST', '/@login-renew')
  t.equal(anonymous.statusCode, 401, 'anonymous callers have nothing to renew')
})

t.test('@logout answers 204 and that token is refused afterwards', async t => {
  await tokenFor('lou')
  const [laptop, phone] = [tokenOf(await login(service, 'lou', 'lou-password')), tokenOf(await login(service, 'lou', 'lou-password'))]
  const out = await call('POST', '/@logout', undefined, laptop)
  t.equal(out.statusCode, 204)
  t.equal(out.body, '')
  for (const [method, url] of [['GET', '/talks'], ['GET', '/@users/lou'], ['POST', '/@logout']] as const) {
    const res = await call(method, url, undefined, laptop)
    t.equal(res.statusCode, 401, `${method} ${url} with the revoked token`)
    t.equal(res.json().type, 'Unauthorized')
  }
  t.equal((await call('GET', '/@users/lou', undefined, phone)).statusCode, 200, 'the other session of the user goes on')
  t.equal((await call('POST', '/@logout')).statusCode, 401, 'anonymous callers have no token to revoke')
})

t.test('without JWT_SECRET the secret is generated once and kept in the database', async t => {
  const databaseUrl = await freshDatabase(t)
  const env = { JWT_SECRET: '', JWT_TTL: '120', DATABASE_URL: databaseUrl }
  const first = await build(t, { env })
  const second = await build(t, { env }) // a restart, or a second process on the same database
  const fromFirst = tokenOf(await login(first, 'admin', ADMIN_PASSWORD))
  const fromSecond = tokenOf(await login(second, 'admin', ADMIN_PASSWORD))
  t.equal((await second.call('GET', '/@users/admin', undefined, fromFirst)).statusCode, 200, 'the second accepts the first one\'s token')
  t.equal((await first.call('GET', '/@users/admin', undefined, fromSecond)).statusCode, 200, 'and the other way round')
  t.equal(Number(partOf(fromFirst, 1).exp) - Number(partOf(fromFirst, 1).iat), 120, 'JWT_TTL sets the lifetime')

  const { rows } = await first.app.db.query<{ value: string }>("SELECT value FROM settings WHERE key = 'jwt_secret'")
  const secret = rows[0].value
  t.ok(secret.length >= 64, 'a long random secret')
  const [head, payload, signed] = fromFirst.split('.')
  t.equal(signed, signature(`${head}.${payload}`, secret), 'tokens are signed with it')
  t.equal((await call('GET', '/talks', undefined, fromFirst)).statusCode, 401, 'a service with another secret refuses the token')
})

t.test('JWT_SECRET, when set, has at least 32 characters (RFC 7518: 256 bits for HS256)', async t => {
  t.throws(() => loadConfig({ JWT_SECRET: 'x'.repeat(31) }), new ConfigError('Invalid configuration: JWT_SECRET: must match pattern "^(|.{32,})$" (HS256 secret of at least 32 characters; empty = generated once and kept in the database)'))
  t.equal(loadConfig({ JWT_SECRET: 'x'.repeat(32) }).JWT_SECRET, 'x'.repeat(32))
})

t.test('failed logins are throttled per login name, from any address: 429 with Retry-After', async t => {
  await tokenFor('tess')
  const firstFailure = Date.now()
  t.equal((await login(service, 'tess', 'wrong', '10.0.1.1')).statusCode, 401)
  t.equal((await login(service, 'tess', 'tess-password', '10.0.1.2')).statusCode, 200, 'one failure is below the limit of 2; a success costs nothing')
  // A success gives no failure back (failures leave with the window): an attacker would
  // otherwise get a fresh budget at each of the user's logins.
  t.equal((await login(service, 'TESS', 'wrong', '10.0.1.4')).statusCode, 401, 'the login name counts in any case')
  const throttled = await login(service, 'tess', 'tess-password', '10.0.1.5')
  t.equal(throttled.statusCode, 429, 'two failures reach the limit: even the right password must wait')
  t.equal(throttled.json().type, 'TooManyRequests')
  const wait = Number(throttled.headers['retry-after'])
  const elapsed = Math.ceil((Date.now() - firstFailure) / 1000)
  t.ok(wait >= 900 - elapsed && wait <= 900, `Retry-After ${wait} s: until the first failure leaves the 900 s window`)
  t.equal(throttled.json().message, `Too many failed logins. Try again in ${wait} seconds.`)
  t.equal((await login(service, 'ann', 'ann-password', '10.0.1.5')).statusCode, 200, 'other logins from that address go on')
})

t.test('failed logins are throttled per client address, whatever the login name', async t => {
  await tokenFor('ann')
  for (const name of ['nobody-1', 'nobody-2', 'nobody-3']) {
    t.equal((await login(service, name, 'guess', '10.0.2.1')).statusCode, 401, name)
  }
  const throttled = await login(service, 'ann', 'ann-password', '10.0.2.1')
  t.equal(throttled.statusCode, 429, 'three failures from one address reach its limit of 3')
  t.ok(Number(throttled.headers['retry-after']) > 0)
  t.equal((await login(service, 'ann', 'ann-password', '10.0.2.2')).statusCode, 200, 'another address is not throttled')
})
