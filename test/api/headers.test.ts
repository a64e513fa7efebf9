import t, { type Test } from 'tap'
import { createHmac } from 'node:crypto'
import type { LightMyRequestResponse } from 'fastify'
import { JWT_SECRET, build, talkBody } from '../helper.js'
import { png, upload } from '../image-samples.js'

/**
 * Security and caching headers on every kind of answer (issue 11, defect 11):
 * helmet's headers that make sense for a JSON API, `Vary: Authorization`
 * everywhere (the auth hook judges every request's token, so every answer
 * depends on that header), and no answer to an authenticated request, nor to
 * a request that carried credentials or wrote something, that a cache may keep.
 */
const BODY_LIMIT = 4096
const { app, call, inject, tokenFor } = await build(t, { env: { BODY_LIMIT: String(BODY_LIMIT) } })
const admin = await tokenFor('admin')
const ann = await tokenFor('ann')

// A published talk with an image: anyone may read it and download its image.
const created = await call('POST', '/talks', talkBody({
  title: 'Headers everywhere',
  image: upload(png(1, 1), 'dot.png')
}), ann)
const talk = new URL(String(created.headers.location)).pathname
await call('POST', `${talk}/@workflow/publish`, {}, admin)

const segment = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url')
const expiredToken = ((): string => {
  const exp = Math.floor(Date.now() / 1000) - 1
  const unsigned = `${segment({ alg: 'HS256', typ: 'JWT' })}.${segment({ sub: 'admin', fullname: null, iat: exp - 3600, exp })}`
  return `${unsigned}.${createHmac('sha256', JWT_SECRET).update(unsigned).digest('base64url')}`
})()

interface Sample { name: string, status: number, send: () => Promise<LightMyRequestResponse> }
const get = (url: string, token?: string, headers?: Record<string, string>) => async () => await call('GET', url, undefined, token, headers)

/** Answers to anonymous requests, one of each kind. */
const anonymous: Sample[] = [
  { name: 'the site root', status: 200, send: get('/') },
  { name: 'a listing (folder)', status: 200, send: get('/talks') },
  { name: 'a talk', status: 200, send: get(talk) },
  { name: '@search', status: 200, send: get('/@search?portal_type=talk') },
  { name: 'an image download', status: 200, send: get(`${talk}/@@download/image`) },
  { name: '@openapi', status: 200, send: get('/@openapi') },
  { name: '@health', status: 200, send: get('/@health') },
  { name: '404 NotFound (no such content)', status: 404, send: get('/talks/no-such-talk') },
  { name: '404 NotFound (no such route)', status: 404, send: get('/@no-such-service') },
  { name: '404 NotFound (no such image)', status: 404, send: get(`${talk}/@@download/nothing`) },
  { name: '404 NotFound (a malformed URL)', status: 404, send: get('/talks/x%ff') },
  { name: '404 NotFound (NUL in the path)', status: 404, send: get('/talks/x%00') },
  { name: '406 NotAcceptable', status: 406, send: get('/talks', undefined, { accept: 'text/html' }) },
  { name: '400 a query parameter of the wrong type', status: 400, send: get('/@search?b_size=many') }
]

/** Answers that a cache must never keep: authenticated requests, requests with credentials, writes. */
const personal: Sample[] = [
  { name: 'the site root, authenticated', status: 200, send: get('/', ann) },
  { name: 'a listing, authenticated', status: 200, send: get('/talks', ann) },
  { name: 'a talk, authenticated', status: 200, send: get(talk, ann) },
  { name: '@search, authenticated', status: 200, send: get('/@search?portal_type=talk', ann) },
  { name: '@types, authenticated', status: 200, send: get('/@types', ann) },
  { name: '@users, as Manager', status: 200, send: get('/@users', admin) },
  { name: 'an image download, authenticated', status: 200, send: get(`${talk}/@@download/image`, ann) },
  { name: '@openapi, authenticated', status: 200, send: get('/@openapi', ann) },
  { name: '@health, authenticated', status: 200, send: get('/@health', ann) },
  { name: '404 NotFound, authenticated', status: 404, send: get('/talks/no-such-talk', ann) },
  { name: '403 Forbidden', status: 403, send: get('/@users', ann) },
  { name: '400 ExpiredSignatureError (before any route runs)', status: 400, send: get('/talks', expiredToken) },
  { name: '401 an invalid token (before any route runs)', status: 401, send: get('/talks', 'not-a-token') },
  { name: '@login (its answer is a credential)', status: 200, send: async () => await call('POST', '/@login', { login: 'ann', password: 'ann-password' }) },
  { name: '401 @login with a wrong password', status: 401, send: async () => await call('POST', '/@login', { login: 'ann', password: 'wrong' }) },
  { name: '201 a created talk', status: 201, send: async () => await call('POST', '/talks', talkBody({ title: 'Another' }), ann) },
  { name: '204 a changed talk', status: 204, send: async () => await call('PATCH', talk, { description: 'Changed' }, ann) },
  { name: '400 a body that is not JSON', status: 400, send: async () => await inject({ method: 'POST', url: '/talks', payload: '{"title": ', headers: { authorization: `Bearer ${ann}`, 'content-type': 'application/json' } }) },
  { name: '401 an anonymous write', status: 401, send: async () => await call('POST', '/talks', talkBody()) },
  { name: '413 a body over BODY_LIMIT', status: 413, send: async () => await call('POST', '/talks', talkBody({ description: 'x'.repeat(BODY_LIMIT) }), ann) },
  { name: '415 a body that is not JSON', status: 415, send: async () => await inject({ method: 'POST', url: '/talks', payload: 'title', headers: { authorization: `Bearer ${ann}`, 'content-type': 'text/plain' } }) }
]

function hasSecurityHeaders (t: Test, res: LightMyRequestResponse): void {
  t.equal(res.headers['x-content-type-options'], 'nosniff')
  t.same(String(res.headers['content-security-policy']).split(';').map(d => d.trim()), ["default-src 'none'", "frame-ancestors 'none'"])
  t.equal(res.headers['x-frame-options'], 'DENY')
  // Volto may show the images from another origin (<img> is a no-cors request): same-origin would block them.
  t.equal(res.headers['cross-origin-resource-policy'], 'cross-origin')
  t.ok(String(res.headers.vary).split(',').map(v => v.trim().toLowerCase()).includes('authorization'), `Vary names Authorization (${String(res.headers.vary)})`)
  // Headers for HTML documents, or that are the TLS terminator's to set, are left out.
  for (const header of ['strict-transport-security', 'cross-origin-opener-policy', 'cross-origin-embedder-policy', 'origin-agent-cluster',
    'referrer-policy', 'x-dns-prefetch-control', 'x-download-options', 'x-permitted-cross-domain-policies', 'x-xss-protection']) {
    t.notOk(header in res.headers, `no ${header}`)
  }
}

/** A sample answers with its expected status and every security header. */
async function answersWithSecurityHeaders (t: Test, sample: Sample): Promise<LightMyRequestResponse> {
  const res = await sample.send()
  t.equal(res.statusCode, sample.status, `${sample.name}: ${res.statusCode === sample.status ? 'the expected status' : res.body.slice(0, 200)}`)
  hasSecurityHeaders(t, res)
  return res
}

t.test('every answer to an anonymous request carries the security headers and Vary: Authorization', async t => {
  for (const sample of anonymous) {
    t.test(sample.name, async t => {
      await answersWithSecurityHeaders(t, sample)
    })
  }
})

t.test('an anonymous GET may be cached (shared caches keep it apart by Vary); @health still says no-store', async t => {
  t.equal((await get('/talks')()).headers['cache-control'], undefined)
  t.equal((await get(`${talk}/@@download/image`)()).headers['cache-control'], undefined)
  t.equal((await get('/@health')()).headers['cache-control'], 'no-store')
})

t.test('no answer to an authenticated request, to a request with credentials or to a write may be stored', async t => {
  for (const sample of personal) {
    t.test(sample.name, async t => {
      const res = await answersWithSecurityHeaders(t, sample)
      t.equal(res.headers['cache-control'], 'private, no-store')
    })
  }
})

t.test('a 500 carries the headers too', async t => {
  await app.db.query('ALTER TABLE catalog RENAME TO catalog_gone')
  let res: LightMyRequestResponse
  try {
    res = await call('GET', '/talks', undefined, ann)
  } finally {
    await app.db.query('ALTER TABLE catalog_gone RENAME TO catalog')
  }
  t.equal(res.statusCode, 500)
  hasSecurityHeaders(t, res)
  t.equal(res.headers['cache-control'], 'private, no-store')
})
