import t from 'tap'
import { build, talkBody } from '../helper.js'

/**
 * How Volto reaches the API: Zope's virtual hosting paths (its proxy's
 * default), `++api++`, and CORS for a browser on another origin.
 */
t.test('Zope virtual hosting', async t => {
  const { call, tokenFor } = await build(t)
  const owner = await tokenFor('olga')
  const created = await call('POST', '/talks', talkBody({ title: 'Hosted talk' }), owner)
  const talk = new URL(created.json()['@id']).pathname

  await t.test('Volto\'s proxy path: ++api++ before VirtualHostRoot; every @id from the given origin', async t => {
    const res = await call('GET', `/VirtualHostBase/http/localhost:3000/++api++/VirtualHostRoot${talk}?expand=breadcrumbs`, undefined, owner)
    t.equal(res.statusCode, 200, res.body)
    const body = res.json()
    t.equal(body['@id'], `http://localhost:3000${talk}`)
    t.equal(body.parent['@id'], 'http://localhost:3000/talks')
    t.same(body['@components'].breadcrumbs.items.map((i: { '@id': string }) => i['@id']), ['http://localhost:3000/talks', `http://localhost:3000${talk}`])
    const search = await call('GET', '/VirtualHostBase/https/volto.example.org:443/++api++/VirtualHostRoot/@search?portal_type=talk', undefined, owner)
    t.equal(search.json()['@id'], 'https://volto.example.org/@search?portal_type=talk', 'the default port is left out')
    t.equal(search.json().items[0]['@id'], `https://volto.example.org${talk}`)
  })

  await t.test('services, writes and _vh_ prefixes', async t => {
    const vh = '/VirtualHostBase/http/example.org:8000/++api++/VirtualHostRoot/_vh_cms'
    const res = await call('POST', `${vh}/talks`, talkBody({ title: 'Posted through the proxy' }), owner)
    t.equal(res.statusCode, 201, res.body)
    t.match(res.headers.location, /^http:\/\/example\.org:8000\/cms\/talks\/posted-through-the-proxy$/)
    const workflow = await call('GET', `${vh}${talk}/@workflow`, undefined, owner)
    t.equal(workflow.json()['@id'], `http://example.org:8000/cms${talk}/@workflow`)
    const missing = await call('GET', `${vh}/talks/nothing-here`, undefined, owner)
    t.equal(missing.statusCode, 404)
    t.equal(missing.json().message, 'Resource not found: http://example.org:8000/cms/talks/nothing-here')
  })

  await t.test('refused: what cannot name this site or an origin', async t => {
    for (const path of [
      '/VirtualHostBase/ftp/example.org:21/++api++/VirtualHostRoot/talks',
      '/VirtualHostBase/http/exa mple.org/++api++/VirtualHostRoot/talks',
      '/VirtualHostBase/http/evil.org@x/++api++/VirtualHostRoot/talks',
      '/VirtualHostBase/http/example.org:80/Plone/++api++/VirtualHostRoot/talks',
      '/VirtualHostBase'
    ]) {
      const res = await call('GET', path)
      t.equal(res.statusCode, 404, path)
      t.equal(res.json().type, 'NotFound')
    }
  })

  await t.test('the origin in the path decides nothing but URLs: access is the token\'s', async t => {
    const anonymous = await call('GET', `/VirtualHostBase/http/localhost:3000/++api++/VirtualHostRoot${talk}`)
    t.equal(anonymous.statusCode, 401, 'a private talk stays private')
  })
})

t.test('a site below SITE_PATH', async t => {
  const { call } = await build(t, { env: { SITE_PATH: '/Plone' } })
  const res = await call('GET', '/VirtualHostBase/http/localhost:3000/Plone/++api++/VirtualHostRoot/talks')
  t.equal(res.statusCode, 200, res.body)
  t.equal(res.json()['@id'], 'http://localhost:3000/talks')
  const above = await call('GET', '/VirtualHostBase/http/localhost:3000/VirtualHostRoot/Plone/++api++/talks')
  t.equal(above.statusCode, 200, 'the physical part may end above the site')
  t.equal(above.json()['@id'], 'http://localhost:3000/Plone/talks')
  t.equal((await call('GET', '/++api++/talks')).statusCode, 404, 'outside SITE_PATH')
  t.equal((await call('GET', '/Plone/++api++/talks')).json()['@id'], 'http://localhost:80/Plone/talks')
})

t.test('CORS for the configured origins', async t => {
  const { inject } = await build(t, { env: { CORS_ALLOW_ORIGIN: 'http://localhost:3000, https://volto.example.org/' } })
  const preflight = await inject({
    method: 'OPTIONS',
    url: '/talks/a-talk/@workflow/publish',
    headers: { origin: 'http://localhost:3000', 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization,content-type' }
  })
  t.equal(preflight.statusCode, 204)
  t.equal(preflight.headers['access-control-allow-origin'], 'http://localhost:3000')
  t.equal(preflight.headers['access-control-allow-credentials'], 'true')
  t.match(String(preflight.headers['access-control-allow-headers']), /Authorization/)
  t.match(String(preflight.headers['access-control-allow-methods']), /PATCH/)
  const get = await inject({ method: 'GET', url: '/talks', headers: { origin: 'https://volto.example.org', accept: 'application/json' } })
  t.equal(get.statusCode, 200)
  t.equal(get.headers['access-control-allow-origin'], 'https://volto.example.org')
  t.match(String(get.headers['access-control-expose-headers']), /Location/)
  const foreign = await inject({ method: 'GET', url: '/talks', headers: { origin: 'https://evil.example.org', accept: 'application/json' } })
  t.equal(foreign.headers['access-control-allow-origin'], undefined, 'other origins get no CORS headers')
})

t.test('no CORS without CORS_ALLOW_ORIGIN: OPTIONS is 404 in the error shape', async t => {
  const { inject } = await build(t)
  const res = await inject({ method: 'OPTIONS', url: '/talks', headers: { origin: 'http://localhost:3000', 'access-control-request-method': 'GET' } })
  t.equal(res.statusCode, 404)
  t.equal(res.json().type, 'NotFound')
  t.equal(res.headers['access-control-allow-origin'], undefined)
})
