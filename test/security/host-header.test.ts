import fc from 'fast-check'
import { connect, type AddressInfo } from 'node:net'
import t from 'tap'
import { ConfigError, loadConfig } from '../../core/config/config.js'
import { build, type TestApp } from '../helper.js'

/**
 * The host a URL is built from (issue 22, finding 8): a request with two Host
 * headers, or a Host (or, behind a trusted proxy, an X-Forwarded-Host) that
 * is not one valid RFC 3986 host[:port], is a 400 in the contract's shape,
 * and no `@id` is ever built from such a host. With PUBLIC_URL set, every URL
 * is built from it, whatever the request says (a virtual-hosting path apart,
 * as docs/api.md says). The oracle is RFC 3986's grammar, written here.
 */

/** RFC 3986 §2.3 unreserved and §2.2 sub-delims: what a reg-name is made of (percent-encodings aside, see docs/api.md). */
const REG_NAME_CHARS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~!$&\'()*+,;='
/** Characters no host[:port] holds outside an IPv6 literal: every printable ASCII one that is not above, blanks, controls, non-ASCII. */
const FORBIDDEN = [...Array.from({ length: 95 }, (_, i) => String.fromCharCode(32 + i)).filter(c => !REG_NAME_CHARS.includes(c) && c !== ':'), '\t', '\u007f', 'é', 'ü', '\u00a0', '😀', '\u200b']

const regName = fc.string({ unit: fc.constantFrom(...REG_NAME_CHARS), minLength: 1, maxLength: 40 })
const port = fc.integer({ min: 0, max: 65535 }).map(n => `:${n}`)
const validHost = fc.tuple(fc.oneof(regName, fc.ipV4(), fc.ipV6().map(a => `[${a}]`)), fc.option(port, { nil: '' })).map(([host, p]) => host + p)
/** A host with at least one forbidden character somewhere, or a port that is not one. */
const malformedHost = fc.oneof(
  fc.tuple(fc.string({ unit: fc.constantFrom(...REG_NAME_CHARS), maxLength: 20 }), fc.constantFrom(...FORBIDDEN), fc.string({ unit: fc.constantFrom(...REG_NAME_CHARS, ...FORBIDDEN), maxLength: 20 }))
    .map(([a, bad, b]) => a + bad + b),
  fc.tuple(regName, fc.oneof(fc.integer({ min: 65536, max: 10 ** 9 }).map(String), fc.constant(''), fc.string({ unit: fc.constantFrom(...FORBIDDEN, 'a', ':'), minLength: 1, maxLength: 6 }))).map(([h, p]) => `${h}:${p}`),
  fc.constantFrom('evil.example/@users?x=', 'user@evil.example', 'a b', '[::1', '[::1]x', '[fe80::1%25eth0]', '[v1.x]', 'exa%20mple.org', 'a:1:2', '::1')
)
/** X-Forwarded-Host is a list (each proxy appends one): a host in it holds no comma. */
const forwardableHost = validHost.filter(h => !h.includes(','))

/** The answer's JSON and whether it is a 400 in the contract's shape that builds no URL. */
function refusedWithoutUrl (status: number, body: string): boolean {
  const json = JSON.parse(body) as Record<string, unknown>
  return status === 400 && json.type === 'BadRequest' && typeof json.message === 'string' && !('@id' in json) && !body.includes('://')
}

async function site (app: TestApp, headers: Record<string, string>, path = '/@site'): Promise<{ status: number, body: string }> {
  const res = await app.inject({ method: 'GET', url: path, headers })
  return { status: res.statusCode, body: res.body }
}

const plain = await build(t)

t.test('Host: valid hosts are written into @id as they came; malformed ones are refused and written nowhere', async () => {
  await fc.assert(fc.asyncProperty(validHost, async host => {
    const { status, body } = await site(plain, { host })
    return status === 200 && JSON.parse(body)['@id'] === `http://${host}/@site`
  }), { numRuns: 300 })
  await fc.assert(fc.asyncProperty(malformedHost, async host => {
    const { status, body } = await site(plain, { host })
    return refusedWithoutUrl(status, body)
  }), { numRuns: 500 })
})

/** Sends raw HTTP/1.x to the service listening on a port (what inject cannot express: repeated headers, none at all). */
async function raw (port: number, request: string): Promise<{ status: number, body: string }> {
  return await new Promise((resolve, reject) => {
    // Written, not ended: a client that half-closes may be hung up on before its answer; the server closes (Connection: close, HTTP/1.0).
    const socket = connect(port, '127.0.0.1', () => { socket.write(request) })
    let text = ''
    socket.on('data', chunk => { text += chunk.toString('utf8') })
    socket.on('error', reject)
    socket.on('close', () => {
      const [head, ...rest] = text.split('\r\n\r\n')
      resolve({ status: Number(head.split(' ')[1]), body: rest.join('\r\n\r\n') })
    })
  })
}

t.test('over a socket: two Host headers are a 400; no Host at all (HTTP/1.0) is the address the request came in on', async t => {
  await plain.app.listen({ port: 0, host: '127.0.0.1' })
  const { port: listening } = plain.app.server.address() as AddressInfo
  for (const [first, second] of [['good.example', 'evil.example'], ['evil.example', 'good.example'], ['same.example', 'same.example']]) {
    const res = await raw(listening, `GET /@site HTTP/1.1\r\nHost: ${first}\r\nhost: ${second}\r\nAccept: application/json\r\nConnection: close\r\n\r\n`)
    t.ok(refusedWithoutUrl(res.status, res.body), `Host: ${first} and ${second}: ${res.status} ${res.body}`)
  }
  for (const host of ['evil.example/@users?x=', 'user@evil.example', 'a b', '']) {
    const res = await raw(listening, `GET /@site HTTP/1.1\r\nHost: ${host}\r\nAccept: application/json\r\nConnection: close\r\n\r\n`)
    t.ok(refusedWithoutUrl(res.status, res.body), `Host: ${host}: ${res.status} ${res.body}`)
  }
  const one = await raw(listening, 'GET /@site HTTP/1.1\r\nHost: good.example:8080\r\nAccept: application/json\r\nConnection: close\r\n\r\n')
  t.equal(JSON.parse(one.body)['@id'], 'http://good.example:8080/@site', 'one valid Host is the address')
  const none = await raw(listening, 'GET /@site HTTP/1.0\r\nAccept: application/json\r\n\r\n')
  t.equal(none.status, 200, none.body)
  t.equal(JSON.parse(none.body)['@id'], `http://127.0.0.1:${listening}/@site`, 'HTTP/1.0 without Host: the address it came in on')
})

t.test('TRUST_PROXY: X-Forwarded-Host and -Proto address the answer only when they are valid', async t => {
  const proxied = await build(t, { env: { TRUST_PROXY: 'true' } })
  await fc.assert(fc.asyncProperty(forwardableHost, fc.constantFrom('http', 'https'), async (host, proto) => {
    const { status, body } = await site(proxied, { host: 'backend:8080', 'x-forwarded-host': host, 'x-forwarded-proto': proto })
    return status === 200 && JSON.parse(body)['@id'] === `${proto}://${host}/@site`
  }), { numRuns: 200 })
  // Fastify reads the last of a comma-separated list, trimmed (a proxy appends its own): such a value may end in a valid host.
  await fc.assert(fc.asyncProperty(malformedHost.filter(h => h !== '' && !h.includes(',') && h.trim() === h), async host => {
    const { status, body } = await site(proxied, { host: 'backend:8080', 'x-forwarded-host': host })
    return refusedWithoutUrl(status, body)
  }), { numRuns: 300 })
  t.equal(JSON.parse((await site(proxied, { host: 'backend', 'x-forwarded-host': 'first.example, last.example' })).body)['@id'], 'http://last.example/@site', 'the last proxy\'s word')
  for (const proto of ['javascript', 'ftp', 'https://evil.example', '']) {
    const { status, body } = await site(proxied, { host: 'backend', 'x-forwarded-host': 'cms.example', 'x-forwarded-proto': proto })
    t.ok(proto === '' ? status === 200 : refusedWithoutUrl(status, body), `X-Forwarded-Proto: ${proto}: ${status} ${body}`)
  }
  const ignored = await site(plain, { host: 'backend', 'x-forwarded-host': 'evil host', 'x-forwarded-proto': 'javascript' })
  t.equal(JSON.parse(ignored.body)['@id'], 'http://backend/@site', 'without TRUST_PROXY the forwarded headers are not read at all')
})

t.test('PUBLIC_URL: every URL is built from it, whatever Host and X-Forwarded-* say; a virtual-hosting path still names its own', async t => {
  const fixed = await build(t, { env: { PUBLIC_URL: 'https://cms.example.org/', TRUST_PROXY: 'true' } })
  const manager = await fixed.tokenFor('admin')
  await fc.assert(fc.asyncProperty(forwardableHost, async host => {
    const { status, body } = await site(fixed, { host, 'x-forwarded-host': host, 'x-forwarded-proto': 'http' })
    return status === 200 && JSON.parse(body)['@id'] === 'https://cms.example.org/@site'
  }), { numRuns: 100 })
  const created = await fixed.call('POST', '/talks', { '@type': 'talk', title: 'Addressed', type_of_talk: 'Talk', audience: ['Beginner'] }, manager, { host: 'other.example' })
  t.equal(created.headers.location, 'https://cms.example.org/talks/addressed', 'Location too')
  t.equal(created.json().parent['@id'], 'https://cms.example.org/talks')
  const missing = await fixed.call('GET', '/talks/nothing', undefined, undefined, { host: 'other.example' })
  t.equal(missing.json().message, 'Resource not found: https://cms.example.org/talks/nothing', 'and error messages')
  const hosted = await fixed.call('GET', '/VirtualHostBase/http/volto.example:3000/++api++/VirtualHostRoot/_vh_site/talks', undefined, manager)
  t.equal(hosted.json()['@id'], 'http://volto.example:3000/site/talks', 'a virtual-hosting path names its own origin and prefix')
  const malformed = await site(fixed, { host: 'a b' })
  t.ok(refusedWithoutUrl(malformed.status, malformed.body), 'a malformed Host is refused even though PUBLIC_URL would address the answer')
})

t.test('PUBLIC_URL must be http(s)://host[:port] and nothing more', async t => {
  for (const url of ['https://cms.example.org', 'http://[::1]:8080/', 'HTTPS://CMS.example.org:443']) t.equal(loadConfig({ PUBLIC_URL: url }).PUBLIC_URL, url)
  for (const url of ['cms.example.org', 'ftp://cms.example.org', 'https://a b', 'https://cms.example.org/api', 'https://user@cms.example.org', 'https://cms.example.org:99999', 'https://cms.example.org?x', 'https://']) {
    t.throws(() => loadConfig({ PUBLIC_URL: url }), { constructor: ConfigError, message: /PUBLIC_URL/ }, url)
  }
})
