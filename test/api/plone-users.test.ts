import t from 'tap'
import { build } from '../helper.js'

/**
 * `@users` in plone.restapi's shapes (users, users_created, users_add,
 * users_update examples) and the role map Volto's user control panel sends.
 */
const BASE = 'http://localhost:80'

t.test('@users as plone.restapi answers it', async t => {
  const { call, tokenFor } = await build(t)
  const admin = await tokenFor('admin')

  await t.test('POST takes the member properties; the user carries them', async t => {
    const res = await call('POST', '/@users', {
      username: 'noam',
      email: 'noam@example.org',
      password: 'noam-password',
      fullname: 'Noam Chomsky',
      description: 'Linguist',
      home_page: 'https://example.org/noam',
      location: 'Tucson',
      portrait: null,
      roles: ['Member']
    }, admin)
    t.equal(res.statusCode, 201, res.body)
    t.same(res.json(), {
      '@id': `${BASE}/@users/noam`,
      id: 'noam',
      username: 'noam',
      email: 'noam@example.org',
      fullname: 'Noam Chomsky',
      roles: ['Member'],
      created: res.json().created,
      description: 'Linguist',
      home_page: 'https://example.org/noam',
      location: 'Tucson',
      portrait: null,
      groups: { '@id': `${BASE}/@users`, items: [{ id: 'AuthenticatedUsers', title: 'AuthenticatedUsers' }], items_total: 1 }
    })
    t.equal((await call('POST', '/@users', { username: 'pia', email: 'pia@example.org', password: 'pia-password', portrait: { data: 'x' } }, admin)).statusCode, 400, 'portraits are not kept')
  })

  await t.test('GET @users: {@id, items, items_total}', async t => {
    const body = (await call('GET', '/@users', undefined, admin)).json()
    t.equal(body['@id'], `${BASE}/@users`)
    t.equal(body.items_total, 2)
    t.same(body.items.map((u: { id: string }) => u.id), ['admin', 'noam'])
    t.match(body.items[0], { id: 'admin', roles: ['Manager'], description: null, home_page: null, location: null, portrait: null })
  })

  await t.test('PATCH: roles as Volto\'s control panel sends them; properties cleared with null', async t => {
    const roles = async (): Promise<string[]> => (await call('GET', '/@users/noam', undefined, admin)).json().roles
    t.equal((await call('PATCH', '/@users/noam', { roles: { Contributor: false, Editor: true, Reviewer: true, Reader: false } }, admin)).statusCode, 204)
    t.same((await roles()).sort(), ['Editor', 'Member', 'Reviewer'])
    t.equal((await call('PATCH', '/@users/noam', { roles: { Reviewer: false } }, admin)).statusCode, 204)
    t.same((await roles()).sort(), ['Editor', 'Member'])
    const unknown = await call('PATCH', '/@users/noam', { roles: { Pope: true } }, admin)
    t.equal(unknown.statusCode, 400)
    t.equal(unknown.json().type, 'BadRequest')
    t.equal((await call('PATCH', '/@users/admin', { roles: { Manager: false } }, admin)).statusCode, 400, 'admin keeps Manager')
    t.equal((await call('PATCH', '/@users/noam', { location: null, description: 'Retired linguist' }, admin)).statusCode, 204)
    t.match((await call('GET', '/@users/noam', undefined, admin)).json(), { location: null, description: 'Retired linguist', home_page: 'https://example.org/noam' })
    const noam = await tokenFor('noam')
    t.equal((await call('PATCH', '/@users/noam', { roles: { Manager: true } }, noam)).statusCode, 403, 'not their own roles')
    t.equal((await call('PATCH', '/@users/noam', { home_page: 'https://noam.example.org' }, noam)).statusCode, 204, 'their own properties')
  })

  await t.test('concurrent role maps both apply', async t => {
    await Promise.all([
      call('PATCH', '/@users/noam', { roles: { Contributor: true } }, admin),
      call('PATCH', '/@users/noam', { roles: { 'Site Administrator': true } }, admin)
    ])
    t.same((await call('GET', '/@users/noam', undefined, admin)).json().roles.sort(), ['Contributor', 'Editor', 'Member', 'Site Administrator'])
  })

  await t.test('@roles', async t => {
    const roles = (await call('GET', '/@roles', undefined, admin)).json()
    t.same(roles[0], { '@id': `${BASE}/@roles/Manager`, '@type': 'role', id: 'Manager', title: 'Manager' })
    t.equal((await call('GET', '/@roles')).statusCode, 401)
  })
})
