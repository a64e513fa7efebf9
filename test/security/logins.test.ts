import t from 'tap'
import { build, type TestApp } from '../helper.js'

/**
 * Login strings (issue 11, defects 7 and 8; docs/api.md): user names and e-mail
 * addresses share one namespace, in any letter case, so that a login string
 * names one user; and failed logins are counted per user, whichever of its
 * login strings is used.
 */
const service = await build(t, { env: { LOGIN_MAX_FAILURES: '2', LOGIN_MAX_FAILURES_PER_IP: '100' } })
const { call } = service
const admin = await service.tokenFor('admin')

async function login (name: string, password: string, address = '127.0.0.1'): ReturnType<TestApp['inject']> {
  return await service.inject({
    method: 'POST', url: '/@login', remoteAddress: address, headers: { accept: 'application/json', 'content-type': 'application/json' }, payload: { login: name, password }
  })
}
const subjectOf = (res: { json: () => unknown }): unknown =>
  JSON.parse(Buffer.from((res.json() as { token: string }).token.split('.')[1], 'base64url').toString()).sub
const create = async (username: string, email: string): ReturnType<TestApp['call']> =>
  await call('POST', '/@users', { username, email, password: `${username}-password` }, admin)

t.test('one namespace: a new user name or e-mail may not be any other user\'s user name or e-mail, in any case', async t => {
  t.equal((await create('kim', 'kim@example.org')).statusCode, 201)
  t.equal((await create('dana@example.net', 'dana.mail@example.org')).statusCode, 201, 'a user name may look like an address')

  const taken: Array<[string, string, string]> = [
    ['a user name that is another user\'s e-mail', 'kim@example.org', 'kim2@example.org'],
    ['… in another case', 'KIM@Example.ORG', 'kim3@example.org'],
    ['an e-mail that is another user\'s user name', 'dana2', 'dana@example.net'],
    ['… in another case', 'dana3', 'DANA@EXAMPLE.NET']
  ]
  for (const [name, username, email] of taken) {
    const res = await create(username, email)
    t.equal(res.statusCode, 409, name)
    t.equal(res.json().type, 'Conflict')
    t.same(Object.keys(res.json()).sort(), ['message', 'type'], 'the contract\'s error shape')
  }
  t.same((await call('GET', '/@users', undefined, admin)).json().items.map((u: { id: string }) => u.id), ['admin', 'dana@example.net', 'kim'], 'none was created')

  const byAddress = await login('kim@example.org', 'kim-password')
  t.equal(byAddress.statusCode, 200, 'the address still logs kim in')
  t.equal(subjectOf(byAddress), 'kim')
  t.equal(subjectOf(await login('DANA@example.net', 'dana@example.net-password')), 'dana@example.net')
})

t.test('one namespace: changing an e-mail to another user\'s user name or e-mail is 409; one\'s own strings are not taken', async t => {
  t.equal((await create('lee', 'lee@example.org')).statusCode, 201)
  t.equal((await create('eve@example.net', 'eve.mail@example.org')).statusCode, 201)
  const taken: Array<[string, string, string]> = [
    ['another user\'s user name', 'lee', 'eve@example.net'],
    ['… in another case', 'lee', 'Eve@Example.NET'],
    ['another user\'s e-mail in another case', 'eve@example.net', 'LEE@example.org']
  ]
  for (const [name, id, email] of taken) {
    const res = await call('PATCH', `/@users/${id}`, { email }, admin)
    t.equal(res.statusCode, 409, name)
    t.equal(res.json().type, 'Conflict')
  }
  t.match((await call('GET', '/@users/lee', undefined, admin)).json(), { email: 'lee@example.org' }, 'nothing changed')
  t.equal((await call('PATCH', '/@users/eve@example.net', { email: 'EVE@example.net' }, admin)).statusCode, 204, 'a user\'s e-mail may be its own user name')
  t.equal(subjectOf(await login('eve@example.net', 'eve@example.net-password')), 'eve@example.net')
})

t.test('two concurrent creates whose names cross: one 201, one 409', async t => {
  // Without serialisation about half the rounds let both through; twenty make a miss unlikely.
  for (let round = 0; round < 20; round++) {
    const [a, b] = [`cross-a${round}@example.org`, `cross-b${round}@example.org`]
    const answers = await Promise.all([create(a, b), create(b, a)])
    t.same(answers.map(res => res.statusCode).sort(), [201, 409], `round ${round}`)
    const { rows } = await service.app.db.query<{ n: number }>('SELECT count(*) AS n FROM users WHERE lower(id) IN ($1, $2) OR lower(email) IN ($1, $2)', [a, b])
    t.equal(rows[0].n, 1, 'one user holds both strings')
  }
})

t.test('a lockout by user name holds for the e-mail address, even with the right password', async t => {
  await service.tokenFor('una')
  t.equal((await login('una', 'wrong', '10.1.0.1')).statusCode, 401)
  t.equal((await login('UNA', 'wrong', '10.1.0.2')).statusCode, 401)
  const throttled = await login('una@example.org', 'una-password', '10.1.0.3')
  t.equal(throttled.statusCode, 429)
  t.equal(throttled.json().type, 'TooManyRequests')
  t.ok(Number(throttled.headers['retry-after']) > 0)
  t.equal((await login('Una@Example.org', 'una-password', '10.1.0.4')).statusCode, 429, 'in any case')
})

t.test('a lockout by e-mail address holds for the user name, even with the right password', async t => {
  await service.tokenFor('vic')
  t.equal((await login('vic@example.org', 'wrong', '10.2.0.1')).statusCode, 401)
  t.equal((await login('VIC@example.org', 'wrong', '10.2.0.2')).statusCode, 401)
  t.equal((await login('vic', 'vic-password', '10.2.0.3')).statusCode, 429)
})

t.test('failures by user name and by e-mail add up to one count', async t => {
  await service.tokenFor('wim')
  t.equal((await login('wim', 'wrong', '10.3.0.1')).statusCode, 401)
  t.equal((await login('wim@example.org', 'wrong', '10.3.0.2')).statusCode, 401)
  t.equal((await login('wim', 'wim-password', '10.3.0.3')).statusCode, 429, 'one failure each reaches the limit of 2')
  t.equal((await login('kim', 'kim-password', '10.3.0.3')).statusCode, 200, 'other users are not locked')
})

t.test('unknown login strings are throttled per string, in any case', async t => {
  t.equal((await login('nobody@example.org', 'guess', '10.4.0.1')).statusCode, 401)
  t.equal((await login('NOBODY@example.org', 'guess', '10.4.0.2')).statusCode, 401)
  const throttled = await login('nobody@example.org', 'guess', '10.4.0.3')
  t.equal(throttled.statusCode, 429)
  t.equal(throttled.json().type, 'TooManyRequests')
})
