import t from 'tap'
import type { LightMyRequestResponse } from 'fastify'
import { ADMIN_PASSWORD, build, talkBody, type TestApp } from '../helper.js'

/**
 * Addresses and negotiation (docs/api.md): when the answer is JSON, the
 * `++api++` segment, SITE_PATH, and `@id` as the client sees it (forwarded
 * headers only with TRUST_PROXY).
 */
const plain = await build(t)
const FORWARDED = { 'x-forwarded-proto': 'https', 'x-forwarded-host': 'cms.example.org' }

async function get (app: TestApp, url: string, headers: Record<string, string | undefined>): Promise<LightMyRequestResponse> {
  const defined = Object.fromEntries(Object.entries(headers).filter(([, v]) => v !== undefined)) as Record<string, string>
  return await app.inject({ method: 'GET', url, headers: defined })
}
const isJson = (res: LightMyRequestResponse): boolean => /^application\/json/.test(String(res.headers['content-type']))

t.test('JSON answers Accept: application/json, */*, any Accept that includes JSON, and no Accept at all', async t => {
  for (const accept of [undefined, 'application/json', '*/*', 'text/html, application/json;q=0.9', 'application/*', 'text/html,*/*;q=0.8']) {
    const res = await get(plain, '/talks', { accept })
    t.equal(res.statusCode, 200, `Accept: ${String(accept)}`)
    t.ok(isJson(res))
    t.equal(res.json()['@id'], 'http://localhost:80/talks')
  }
})

t.test('a client that accepts only something else gets 406 NotAcceptable, in JSON', async t => {
  for (const accept of ['text/html', 'text/html, application/xhtml+xml', 'image/png']) {
    for (const url of ['/talks', '/@search', '/talks/no-such-talk']) {
      const res = await get(plain, url, { accept })
      t.equal(res.statusCode, 406, `${url} with Accept: ${accept}`)
      t.ok(isJson(res))
      t.equal(res.json().type, 'NotAcceptable')
    }
  }
})

t.test('under the ++api++ segment the answer is always JSON, and @ids leave the segment out', async t => {
  const folder = await get(plain, '/++api++/talks', { accept: 'text/html' })
  t.equal(folder.statusCode, 200)
  t.ok(isJson(folder))
  t.equal(folder.json()['@id'], 'http://localhost:80/talks')
  const search = await get(plain, '/++api++/@search?portal_type=talk', { accept: 'text/html' })
  t.equal(search.statusCode, 200)
  t.equal(search.json()['@id'], 'http://localhost:80/@search?portal_type=talk')
  const missing = await get(plain, '/++api++/talks/no-such-talk', { accept: 'text/html' })
  t.equal(missing.statusCode, 404, 'errors too are JSON')
  t.equal(missing.json().type, 'NotFound')
})

t.test('@id is the absolute URL the client used: its Host', async t => {
  const res = await get(plain, '/talks', { accept: 'application/json', host: 'talks.example.org:8443' })
  t.equal(res.json()['@id'], 'http://talks.example.org:8443/talks')
})

t.test('without TRUST_PROXY, X-Forwarded-Proto and X-Forwarded-Host are ignored', async t => {
  const res = await get(plain, '/talks', { accept: 'application/json', ...FORWARDED })
  t.equal(res.json()['@id'], 'http://localhost:80/talks')
})

t.test('a site at SITE_PATH=/Plone behind a proxy (TRUST_PROXY)', async t => {
  const site = await build(t, { env: { SITE_PATH: '/Plone', TRUST_PROXY: 'true' } })
  const login = await site.call('POST', '/Plone/@login', { login: 'admin', password: ADMIN_PASSWORD })
  t.equal(login.statusCode, 200, 'services live below the site path too')
  const admin = login.json().token as string

  t.test('its content is addressed below /Plone, and every @id includes /Plone', async t => {
    const root = await site.call('GET', '/Plone')
    t.equal(root.statusCode, 200)
    t.equal(root.json()['@id'], 'http://localhost:80/Plone')
    const folder = await site.call('GET', '/Plone/talks')
    t.equal(folder.statusCode, 200)
    t.match(folder.json(), { '@id': 'http://localhost:80/Plone/talks', parent: { '@id': 'http://localhost:80/Plone' } })
    const viaApi = await site.call('GET', '/Plone/++api++/talks', undefined, undefined, { accept: 'text/html' })
    t.equal(viaApi.json()['@id'], 'http://localhost:80/Plone/talks')
    const created = await site.call('POST', '/Plone/talks', talkBody({ title: 'Under Plone' }), admin)
    t.equal(created.headers.location, 'http://localhost:80/Plone/talks/under-plone')
    t.equal((await site.call('GET', '/Plone/@users/admin', undefined, admin)).json()['@id'], 'http://localhost:80/Plone/@users/admin')
  })

  t.test('paths outside /Plone are 404 NotFound', async t => {
    for (const url of ['/talks', '/', '/@login', '/Plonetalks', '/Plone2/talks']) {
      const res = await site.call('GET', url)
      t.equal(res.statusCode, 404, url)
      t.same(res.json(), { type: 'NotFound', message: `Resource not found: http://localhost:80${url}` })
    }
    const inside = await site.call('GET', '/Plone/talks/no-such-talk')
    t.same(inside.json(), { type: 'NotFound', message: 'Resource not found: http://localhost:80/Plone/talks/no-such-talk', context: 'http://localhost:80/Plone/talks' })
  })

  t.test('X-Forwarded-Proto and X-Forwarded-Host make the @id', async t => {
    const created = await site.call('POST', '/Plone/talks', talkBody({ title: 'Behind the proxy' }), admin, FORWARDED)
    t.equal(created.headers.location, 'https://cms.example.org/Plone/talks/behind-the-proxy')
    t.equal(created.json().parent['@id'], 'https://cms.example.org/Plone/talks')
    const folder = await site.call('GET', '/Plone/talks', undefined, admin, FORWARDED)
    t.equal(folder.json()['@id'], 'https://cms.example.org/Plone/talks')
    t.ok(folder.json().items.some((i: { '@id': string }) => i['@id'] === 'https://cms.example.org/Plone/talks/behind-the-proxy'), 'listed items too')
  })
})
