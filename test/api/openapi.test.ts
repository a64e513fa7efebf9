import t from 'tap'
import { build } from '../helper.js'

t.test('the OpenAPI document is generated from the route schemas', async t => {
  const { call } = await build(t)
  const res = await call('GET', '/@openapi')
  t.equal(res.statusCode, 200)
  const doc = res.json()
  t.equal(doc.openapi, '3.0.3')
  for (const path of ['/@login', '/@login-renew', '/@logout', '/@users', '/@users/{id}', '/@search', '/@workflow', '/@workflow/{transition}',
    '/@types', '/@types/{name}', '/@vocabularies/{name}', '/@controlpanels/{name}', '/{*}', '/@@download/{field}']) {
    t.ok(doc.paths[path], `documents ${path}`)
  }
  t.match(doc.paths['/@login'].post.requestBody.content['application/json'].schema, { required: ['login', 'password'] }, 'the login body comes from its TypeBox schema')
  t.ok(doc.components.schemas.Error, 'the error shape is a shared component')
  t.same(doc.components.securitySchemes.bearer, { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' })
})

t.test('the OpenAPI document is served under SITE_PATH', async t => {
  const { call } = await build(t, { env: { SITE_PATH: '/Plone' } })
  const res = await call('GET', '/Plone/@openapi')
  t.equal(res.statusCode, 200)
  t.same(res.json().servers, [{ url: '/Plone' }])
})
