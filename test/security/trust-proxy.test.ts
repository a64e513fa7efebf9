import t from 'tap'
import { ConfigError, loadConfig } from '../../core/config/config.js'
import { proxyTrust } from '../../core/config/proxy-trust.js'
import { build, type TestApp } from '../helper.js'

/**
 * TRUST_PROXY (docs/operations.md, docs/configuration.md): which peers may name the client's
 * address (X-Forwarded-For), scheme and host, in Fastify's forms. The address is what login
 * throttling counts per client (login-throttle.test.ts), so each form is checked by what it
 * makes two requests share: with a budget of one failure per address, a request that follows
 * a failure from the same client address is refused (429), from another it is not (401).
 */
t.test('the forms TRUST_PROXY takes', async t => {
  t.equal(loadConfig({}).TRUST_PROXY, 'false', 'unset: no proxy is trusted')
  t.equal(proxyTrust('false'), false, 'false: none')
  t.equal(proxyTrust('TRUE'), true, 'true, in any case: every hop')
  t.equal(proxyTrust('0'), false, 'a hop count of 0 trusts nothing')
  const twoHops = proxyTrust('2') as (address: string, hop: number) => boolean
  t.same([twoHops('203.0.113.1', 0), twoHops('203.0.113.1', 1), twoHops('203.0.113.1', 2)], [true, true, false], 'a hop count trusts the peer and the hops before it, up to the count')
  t.same(proxyTrust(' 10.0.0.1 , 10.1.0.0/16,::1, fd00::/8,loopback,linklocal,uniquelocal '),
    ['10.0.0.1', '10.1.0.0/16', '::1', 'fd00::/8', 'loopback', 'linklocal', 'uniquelocal'], 'addresses, CIDR ranges and proxy-addr\'s named ranges')
  for (const setting of ['yes', '-1', '1.5', '10.0.0.256', '10.0.0.0/33', '::1/129', '10.0.0.1/8/1', '10.0.0.0/', 'proxy.example.org', '10.0.0.1,', ',', '1000']) {
    t.throws(() => loadConfig({ TRUST_PROXY: setting }), new ConfigError('Invalid configuration: TRUST_PROXY: must be false, true, a hop count, or a comma-separated list of IP addresses, CIDR ranges, loopback, linklocal, uniquelocal' +
      ' (Proxies whose X-Forwarded-For/Proto/Host are honoured: false, true, a hop count, or proxy addresses and CIDR ranges, comma-separated)'), `${JSON.stringify(setting)} is refused at start, naming the setting`)
  }
})

interface From { peer: string, forwardedFor?: string, forwardedProto?: string }
/** A failed login from a client as the service sees it; the answer. */
async function failFrom (service: TestApp, from: From, login: string): Promise<number> {
  const res = await service.inject({
    method: 'POST',
    url: '/@login',
    remoteAddress: from.peer,
    headers: {
      accept: 'application/json',
      'content-type': 'application/json',
      ...(from.forwardedFor !== undefined ? { 'x-forwarded-for': from.forwardedFor } : {}),
      ...(from.forwardedProto !== undefined ? { 'x-forwarded-proto': from.forwardedProto } : {})
    },
    payload: { login, password: 'wrong' }
  })
  return res.statusCode
}
/** Whether the service counts `a` and `b` as one client address. */
async function oneAddress (service: TestApp, a: From, b: From): Promise<boolean> {
  const logins = `someone-${Math.random().toString(36).slice(2)}`
  if (await failFrom(service, a, `${logins}-a`) !== 401) throw new Error(`the first request was throttled: ${JSON.stringify(a)}`)
  return await failFrom(service, b, `${logins}-b`) === 429
}
const serviceTrusting = async (setting: string): Promise<TestApp> =>
  await build(t, { env: { TRUST_PROXY: setting, LOGIN_MAX_FAILURES_PER_IP: '1', LOGIN_MAX_FAILURES: '100' } })

t.test('each form decides who names the client\'s address', async t => {
  t.test('unset: X-Forwarded-For is nobody\'s word, and everyone behind a proxy is the proxy', async t => {
    const service = await serviceTrusting('false')
    t.ok(await oneAddress(service, { peer: '10.0.0.1', forwardedFor: '203.0.113.1' }, { peer: '10.0.0.1', forwardedFor: '203.0.113.2' }), 'two clients of one proxy are one address')
    t.notOk(await oneAddress(service, { peer: '10.0.0.2' }, { peer: '10.0.0.3', forwardedFor: '10.0.0.2' }), 'a client cannot claim another\'s address')
  })

  t.test('a list of proxies: their peers name the client; nobody else does', async t => {
    const service = await serviceTrusting('10.0.0.1, 10.0.1.0/24')
    t.notOk(await oneAddress(service, { peer: '10.0.0.1', forwardedFor: '203.0.113.2' }, { peer: '10.0.0.1', forwardedFor: '203.0.113.3' }), 'two clients of a listed proxy are two addresses')
    t.ok(await oneAddress(service, { peer: '10.0.0.1', forwardedFor: '203.0.113.1' }, { peer: '10.0.1.7', forwardedFor: '203.0.113.1' }), 'one client through two listed proxies is one address')
    t.ok(await oneAddress(service, { peer: '10.0.0.1', forwardedFor: '198.51.100.9, 203.0.113.4' }, { peer: '10.0.0.1', forwardedFor: '203.0.113.4' }),
      'what the client wrote before the proxy\'s entry is ignored: the client is what the listed proxy saw')
    t.ok(await oneAddress(service, { peer: '198.51.100.1', forwardedFor: '203.0.113.5' }, { peer: '198.51.100.1', forwardedFor: '203.0.113.6' }), 'a peer that is not listed is the client, whatever it forwards')
    t.notOk(await oneAddress(service, { peer: '198.51.100.2', forwardedFor: '203.0.113.7' }, { peer: '10.0.0.1', forwardedFor: '203.0.113.7' }), 'it cannot spend a client\'s budget')
  })

  t.test('a hop count: the client is that many hops back, whatever it wrote before', async t => {
    const service = await serviceTrusting('1')
    t.ok(await oneAddress(service, { peer: '10.5.5.5', forwardedFor: '198.51.100.3, 203.0.113.8' }, { peer: '10.6.6.6', forwardedFor: '203.0.113.8' }), 'the entry the one proxy added names the client')
    t.notOk(await oneAddress(service, { peer: '10.5.5.5', forwardedFor: '203.0.113.9' }, { peer: '10.5.5.5', forwardedFor: '203.0.113.10' }), 'two clients of the proxy are two addresses')
  })

  t.test('true: every hop is trusted, so the client is the first address forwarded', async t => {
    const service = await serviceTrusting('true')
    t.ok(await oneAddress(service, { peer: '10.5.5.5', forwardedFor: '203.0.113.11, 10.0.0.9' }, { peer: '10.6.6.6', forwardedFor: '203.0.113.11' }), 'the leftmost entry')
  })
})

t.test('X-Forwarded-Proto makes the device cookie Secure only from a trusted proxy', async t => {
  const service = await build(t, { env: { TRUST_PROXY: '10.0.0.1' } })
  await service.tokenFor('sue')
  const cookieFrom = async (peer: string): Promise<string> => {
    const res = await service.inject({ method: 'POST', url: '/@login', remoteAddress: peer, headers: { 'content-type': 'application/json', 'x-forwarded-proto': 'https' }, payload: { login: 'sue', password: 'sue-password' } })
    return String(res.headers['set-cookie'])
  }
  t.match(await cookieFrom('10.0.0.1'), /; Secure$/, 'through the proxy, the client used https')
  t.notMatch(await cookieFrom('198.51.100.4'), /Secure/, 'a direct client\'s header is not believed')
})
