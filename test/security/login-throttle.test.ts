import t, { type Test } from 'tap'
import { randomBytes } from 'node:crypto'
import { DeviceCookies } from '../../core/security/device-cookies.js'
import { build, JWT_SECRET, type TestApp } from '../helper.js'

/**
 * Login throttling that an attacker cannot turn against the user (issue 22, finding 11;
 * docs/api.md, "Security"; OWASP's device cookies): whatever budget an attacker spends (the
 * address everyone behind an untrusted proxy shares, the account by name or e-mail in any case),
 * the user's browser that logged in before logs in with the right password; the attacker is
 * throttled with 429 and Retry-After whatever it sends, and never gets more failures than the
 * budgets. The property over random sequences is login-throttle.property.test.ts.
 */
const LIMIT = 3
const ADDRESS_LIMIT = 6
const service = await build(t, { env: { LOGIN_MAX_FAILURES: String(LIMIT), LOGIN_MAX_FAILURES_PER_IP: String(ADDRESS_LIMIT) } })
const { call, tokenFor } = service

const BASE64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'
type Answer = Awaited<ReturnType<TestApp['inject']>>
/** POST @login as a client at `address` (every client of an untrusted proxy is 127.0.0.1) sending `cookie`. */
async function login (name: string, password: string, { address = '127.0.0.1', cookie, url = '/@login' }: { address?: string, cookie?: string, url?: string } = {}): Promise<Answer> {
  return await service.inject({
    method: 'POST',
    url,
    remoteAddress: address,
    headers: { accept: 'application/json', 'content-type': 'application/json', ...(cookie !== undefined ? { cookie } : {}) },
    payload: { login: name, password }
  })
}
/** The `Set-Cookie` of an answer: `name=value` and its attributes. */
function setCookie (res: Answer): { pair: string, name: string, value: string, attributes: string[] } {
  const header = res.headers['set-cookie']
  if (typeof header !== 'string') throw new Error(`one Set-Cookie expected, got ${JSON.stringify(header)}`)
  const [pair, ...attributes] = header.split(';').map(part => part.trim())
  const [name, value] = [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]
  return { pair, name, value, attributes }
}
/** A browser of `user` that logged in once: the device cookie it keeps. */
async function browserOf (user: string, address = '192.0.2.200'): Promise<string> {
  await tokenFor(user)
  const res = await login(user, `${user}-password`, { address })
  if (res.statusCode !== 200) throw new Error(`${user} could not log in: ${res.statusCode} ${res.body}`)
  return setCookie(res).pair
}
/**
 * Wrong passwords until the answer is 429: how many were 401 (the failures the budgets allowed).
 * `name` may change with every attempt (a spray of logins).
 */
async function spend (name: string | ((attempt: number) => string), options: Parameters<typeof login>[2] = {}, most = 50): Promise<number> {
  for (let failures = 0; failures < most; failures++) {
    const res = await login(typeof name === 'string' ? name : name(failures), `guess-${failures}`, options)
    if (res.statusCode === 429) return failures
    if (res.statusCode !== 401) throw new Error(`${res.statusCode} ${res.body}`)
  }
  return most
}
function throttled (t: Test, res: Answer, what: string): void {
  t.equal(res.statusCode, 429, what)
  t.equal(res.json().type, 'TooManyRequests', `${what}: TooManyRequests`)
  t.ok(Number(res.headers['retry-after']) > 0, `${what}: Retry-After ${res.headers['retry-after']}`)
}

t.test('a login sets a device cookie: per user, HttpOnly, SameSite=Strict, Path=/, for 180 days; Secure over https', async t => {
  await tokenFor('ada')
  const plain = setCookie(await login('ada', 'ada-password'))
  t.match(plain.name, /^talks_device_[A-Za-z0-9_-]{16}$/, 'its own name: not Plone\'s __ac or Volto\'s auth_token')
  t.same(plain.attributes, [`Max-Age=${180 * 24 * 3600}`, 'Path=/', 'HttpOnly', 'SameSite=Strict'], 'over http: not Secure')
  // Volto's proxy names the public origin in Zope's virtual hosting path, and passes cookies through.
  const viaVolto = setCookie(await login('ada', 'ada-password', { url: '/VirtualHostBase/https/volto.example.org:443/++api++/VirtualHostRoot/@login' }))
  t.same(viaVolto.attributes, [`Max-Age=${180 * 24 * 3600}`, 'Path=/', 'HttpOnly', 'SameSite=Strict', 'Secure'], 'over https: Secure')
  t.equal(viaVolto.name, plain.name, 'one name per user')
  t.not(viaVolto.value, plain.value, 'a new device at every login')
  await tokenFor('bob')
  t.not(setCookie(await login('bob', 'bob-password')).name, plain.name, 'another user\'s cookie does not replace it in a shared browser')
  for (const res of [await login('ada', 'wrong'), await login('nobody-here', 'wrong')]) t.equal(res.headers['set-cookie'], undefined, 'a failure sets none')
})

t.test('an attacker who spends the address everyone behind the proxy shares: the user\'s browser still logs in', async t => {
  // The proxy is not trusted (TRUST_PROXY unset): its address is every client's.
  const proxy = '10.9.9.9'
  const browser = await browserOf('carla', proxy)
  await tokenFor('dan')
  t.equal(await spend(attempt => `nobody-${attempt}`, { address: proxy }), ADDRESS_LIMIT, `the attacker gets ${ADDRESS_LIMIT} failures from the address, no more`)
  throttled(t, await login('carla', 'carla-password', { address: proxy }), 'unknown clients behind the proxy wait, even with the right password')
  throttled(t, await login('dan', 'dan-password', { address: proxy }), 'every user\'s unknown clients')
  throttled(t, await login('admin', 'wrong', { address: proxy }), 'the admin\'s too')
  const known = await login('carla', 'carla-password', { cookie: browser, address: proxy })
  t.equal(known.statusCode, 200, 'Carla\'s browser logs in')
  t.equal(await spend(attempt => `someone-${attempt}`, { address: proxy }), 0, 'the attacker is still throttled')
  t.equal((await login('carla', 'carla-password', { cookie: setCookie(known).pair, address: proxy })).statusCode, 200, 'and with the cookie it got now, again')
})

t.test('an attacker who spends the account by name or by e-mail, in any case, from any address: the user\'s browser still logs in', async t => {
  const browser = await browserOf('erin')
  const spellings = ['erin', 'ERIN', 'erin@example.org', 'Erin@Example.ORG']
  let failures = 0
  for (const [i, spelling] of spellings.entries()) failures += await spend(spelling, { address: `198.51.100.${i}` })
  t.equal(failures, LIMIT, `${LIMIT} failures in all, whatever the spelling and the address`)
  for (const [i, spelling] of spellings.entries()) throttled(t, await login(spelling, 'erin-password', { address: `203.0.113.${i}` }), `${spelling}: unknown clients wait, even with the right password`)
  for (const spelling of spellings) t.equal((await login(spelling, 'erin-password', { cookie: browser, address: '203.0.113.99' })).statusCode, 200, `${spelling} from Erin's browser logs in`)
})

t.test('a forged, tampered, expired, malformed or another user\'s device cookie is no device: the attacker stays throttled', async t => {
  const browser = await browserOf('fay')
  const { name, value } = setCookie(await login('fay', 'fay-password', { cookie: browser }))
  const own = `${name}=${value}`
  const mallorys = setCookie(await login('mallory', 'mallory-password', { cookie: await browserOf('mallory') }))
  t.equal(await spend('fay', { address: '198.51.100.50' }), LIMIT, 'an attacker spends Fay\'s account')
  // Issued by the service's own rules with its secret, an hour before it expired.
  const devices = new DeviceCookies(JWT_SECRET, 3600)
  const { rows: [fay] } = await service.app.db.query<{ id: string, token_key: string }>("SELECT id, token_key FROM users WHERE id = 'fay'")
  const expired = devices.issue(fay, new Date(Date.now() - 3601 * 1000))
  const flipped = (text: string, at: number): string => text.slice(0, at) + (text[at] === 'A' ? 'B' : 'A') + text.slice(at + 1)
  const [expires, nonce, mac] = value.split('.')
  const forgeries: Array<[string, string]> = [
    ['a random value', `${expires}.${randomBytes(16).toString('base64url')}.${randomBytes(32).toString('base64url')}`],
    ['its MAC changed', `${expires}.${nonce}.${flipped(mac, 5)}`],
    ['its nonce changed', `${expires}.${flipped(nonce, 3)}.${mac}`],
    ['its expiry moved', `${Number(expires) + 1}.${nonce}.${mac}`],
    // The MAC's 43rd character carries 4 bits and 2 unused ones: this spelling decodes to the same bytes.
    ['its MAC spelled otherwise', `${expires}.${nonce}.${mac.slice(0, -1)}${BASE64URL[BASE64URL.indexOf(mac[42]) ^ 1]}`],
    ['expired', expired.value],
    ['Mallory\'s own cookie under Fay\'s name', mallorys.value],
    ['Fay\'s bearer token', (await login('fay', 'fay-password', { cookie: own })).json().token],
    ['empty', ''], ['a dot', '.'], ['huge', 'x'.repeat(4000)], ['quoted', `"${value}"`], ['twice', `${value}${value}`], ['JSON', '{"__proto__":1}']
  ]
  t.equal(expired.name, name, 'the expired one has Fay\'s cookie name')
  for (const [what, forged] of forgeries) {
    throttled(t, await login('fay', 'fay-password', { cookie: `${name}=${forged}`, address: '203.0.113.60' }), `${what}: the right password waits`)
  }
  throttled(t, await login('fay', 'fay-password', { cookie: `${mallorys.name}=${mallorys.value}`, address: '203.0.113.60' }), 'Mallory\'s cookie under its own name')
  t.equal((await login('fay', 'fay-password', { cookie: `${name}=${forgeries[0][1]}; ${own}; ${name}=` })).statusCode, 200, 'a cookie of the same name (set by a parent domain) does not hide Fay\'s')
})

t.test('a device cookie is not a token, and ends with its user\'s password', async t => {
  const { value } = setCookie(await login('gil', 'gil-password', { cookie: await browserOf('gil') }))
  const asToken = await call('GET', '/@users/gil', undefined, value)
  t.equal(asToken.statusCode, 401, 'sent as a bearer token: 401')
  const browser = await browserOf('hal')
  t.equal((await call('PATCH', '/@users/hal', { password: 'hals-new-password' }, await tokenFor('admin'))).statusCode, 204, 'Hal\'s password changes')
  t.equal(await spend('hal', { address: '198.51.100.70' }), LIMIT, 'an attacker spends Hal\'s account')
  throttled(t, await login('hal', 'hals-new-password', { cookie: browser }), 'the cookie from before the password changed is no device')
})

t.test('a known device has a budget of its own', async t => {
  const laptop = await browserOf('ivy')
  const phone = await browserOf('ivy')
  t.equal(await spend('ivy', { cookie: laptop }), LIMIT, `the laptop gets ${LIMIT} failures`)
  throttled(t, await login('ivy', 'ivy-password', { cookie: laptop }), 'then the laptop waits, even with the right password')
  t.equal((await login('ivy', 'ivy-password', { cookie: phone })).statusCode, 200, 'the phone does not')
  t.equal((await login('ivy', 'ivy-password', { address: '198.51.100.80' })).statusCode, 200, 'nor an unknown client: the laptop spent only its own budget')
})

t.test('failures answer one 401, whatever the reason', async t => {
  const browser = await browserOf('jo')
  const answers = [await login('jo', 'wrong', { address: '198.51.100.90' }), await login('nobody-jo', 'wrong', { address: '198.51.100.91' }), await login('jo', 'wrong', { cookie: browser })]
  for (const [res, what] of answers.map((res, i) => [res, ['a wrong password', 'an unknown login', 'a wrong password from a known device'][i]] as const)) {
    t.equal(res.statusCode, 401, what)
    t.same(res.json(), { type: 'Unauthorized', message: 'Wrong login and/or password.' }, `${what}: the one message`)
  }
})

t.test('parallel failures never exceed a budget', async t => {
  await tokenFor('kim')
  const answers = await Promise.all(Array.from({ length: 30 }, async (_, i) => await login(i % 2 === 0 ? 'kim' : 'KIM@example.org', `guess-${i}`, { address: `198.51.100.${100 + i}` })))
  t.equal(answers.filter(res => res.statusCode === 401).length, LIMIT, `30 at once on one account from 30 addresses: ${LIMIT} failures`)
  t.equal(answers.filter(res => res.statusCode === 429).length, 30 - LIMIT, 'the rest wait')
  const onAddress = await Promise.all(Array.from({ length: 30 }, async (_, i) => await login(`nobody-${i}`, 'guess', { address: '198.51.100.222' })))
  t.equal(onAddress.filter(res => res.statusCode === 401).length, ADDRESS_LIMIT, `30 at once from one address: ${ADDRESS_LIMIT} failures`)
  const laptop = await browserOf('lou')
  const onDevice = await Promise.all(Array.from({ length: 30 }, async (_, i) => await login('lou', `guess-${i}`, { cookie: laptop })))
  t.equal(onDevice.filter(res => res.statusCode === 401).length, LIMIT, `30 at once from one device: ${LIMIT} failures`)
})
