import t from 'tap'
import { build } from '../helper.js'

/**
 * `@groups` in plone.restapi's shapes (groups, groups_created, groups_get,
 * groups_update, groups_delete, groups_filtered_by_groupname examples), who
 * may manage groups, a group's roles in its members' principals, and users'
 * `groups`.
 */
const BASE = 'http://localhost:80'
const members = (items: string[], at = '/@groups'): Record<string, unknown> => ({ '@id': `${BASE}${at}`, items, items_total: items.length })
const builtIn = (id: string, role: string): Record<string, unknown> => ({
  '@id': `${BASE}/@groups/${id.replace(' ', '%20')}`, description: '', email: '', groupname: id, id, members: members([]), roles: [role, 'Authenticated'], title: id
})

t.test('@groups as plone.restapi answers it', async t => {
  const { call, tokenFor } = await build(t)
  const admin = await tokenFor('admin')
  await tokenFor('noam')
  await tokenFor('test_user_1_')

  await t.test('GET lists the groups a Plone site is created with, the virtual one last', async t => {
    const res = await call('GET', '/@groups', undefined, admin)
    t.equal(res.statusCode, 200, res.body)
    t.same(res.json(), [
      builtIn('Administrators', 'Manager'),
      builtIn('Reviewers', 'Reviewer'),
      builtIn('Site Administrators', 'Site Administrator'),
      { '@id': `${BASE}/@groups/AuthenticatedUsers`, description: 'Automatic Group Provider', email: '', groupname: 'AuthenticatedUsers', id: 'AuthenticatedUsers', members: members([]), roles: [], title: 'Authenticated Users (Virtual Group)' }
    ])
  })

  await t.test('POST creates a group with roles and members (groups_created)', async t => {
    const res = await call('POST', '/@groups', { description: 'The Plone Framework Team', email: 'fwt@plone.org', groupname: 'fwt', roles: ['Manager'], title: 'Framework Team', users: ['admin', 'test_user_1_'] }, admin)
    t.equal(res.statusCode, 201, res.body)
    t.equal(res.headers.location, `${BASE}/@groups/fwt`)
    t.same(res.json(), { '@id': `${BASE}/@groups/fwt`, description: 'The Plone Framework Team', email: 'fwt@plone.org', groupname: 'fwt', id: 'fwt', members: members(['admin', 'test_user_1_']), roles: ['Manager', 'Authenticated'], title: 'Framework Team' })
    const ploneteam = await call('POST', '/@groups', { groupname: 'ploneteam', title: 'Plone Team', description: 'We are Plone', email: 'ploneteam@plone.org', users: ['noam'] }, admin)
    t.equal(ploneteam.statusCode, 201, ploneteam.body)
  })

  await t.test('GET one group, and the filtered listing without members', async t => {
    t.same((await call('GET', '/@groups/ploneteam', undefined, admin)).json(), {
      '@id': `${BASE}/@groups/ploneteam`, description: 'We are Plone', email: 'ploneteam@plone.org', groupname: 'ploneteam', id: 'ploneteam', members: members(['noam'], '/@groups/ploneteam'), roles: ['Authenticated'], title: 'Plone Team'
    })
    t.same((await call('GET', '/@groups?query=plo', undefined, admin)).json(), [
      { '@id': `${BASE}/@groups/ploneteam`, description: 'We are Plone', email: 'ploneteam@plone.org', groupname: 'ploneteam', id: 'ploneteam', roles: ['Authenticated'], title: 'Plone Team' }
    ])
    t.equal((await call('GET', '/@groups/nobody', undefined, admin)).statusCode, 404)
  })

  await t.test('PATCH changes fields, roles and members (groups_update); users carry their groups', async t => {
    const res = await call('PATCH', '/@groups/ploneteam', { description: 'Plone team members', email: 'ploneteam2@plone.org', roles: ['Authenticated', 'Reviewer'], title: 'The Plone team', users: { test_user_1_: true, noam: false } }, admin)
    t.equal(res.statusCode, 204, res.body)
    t.match((await call('GET', '/@groups/ploneteam', undefined, admin)).json(), { title: 'The Plone team', description: 'Plone team members', email: 'ploneteam2@plone.org', roles: ['Reviewer', 'Authenticated'], members: { items: ['test_user_1_'], items_total: 1 } })
    const user = (await call('GET', '/@users/test_user_1_', undefined, admin)).json()
    t.same(user.groups, { '@id': `${BASE}/@users`, items: [{ id: 'AuthenticatedUsers', title: 'AuthenticatedUsers' }, { id: 'fwt', title: 'Framework Team' }, { id: 'ploneteam', title: 'The Plone team' }], items_total: 3 })
    t.same((await call('GET', '/@users/noam', undefined, admin)).json().groups.items_total, 1)
  })

  await t.test('Volto\'s groups control panel sends each listed group back whole', async t => {
    const listed = (await call('GET', '/@groups', undefined, admin)).json() as Array<Record<string, unknown> & { id: string, roles: string[] }>
    for (const group of listed) {
      const res = await call('PATCH', `/@groups/${encodeURIComponent(group.id)}`, group.id === 'fwt' ? { ...group, roles: [...group.roles, 'Editor'] } : group, admin)
      t.equal(res.statusCode, 204, `${group.id}: ${res.body}`)
    }
    t.same((await call('GET', '/@groups', undefined, admin)).json(), listed.map(g => g.id === 'fwt' ? { ...g, roles: ['Editor', 'Manager', 'Authenticated'] } : g))
    t.equal((await call('PATCH', '/@groups/fwt', { roles: ['Manager'] }, admin)).statusCode, 204)
  })

  await t.test('DELETE removes a group; its id is never given again', async t => {
    t.equal((await call('DELETE', '/@groups/ploneteam', undefined, admin)).statusCode, 204)
    t.equal((await call('GET', '/@groups/ploneteam', undefined, admin)).statusCode, 404)
    t.equal((await call('DELETE', '/@groups/ploneteam', undefined, admin)).statusCode, 404)
    t.equal((await call('POST', '/@groups', { groupname: 'ploneteam' }, admin)).statusCode, 409, 'a deleted group\'s id')
    t.equal((await call('POST', '/@groups', { groupname: 'Noam' }, admin)).statusCode, 409, 'a user\'s id, in any case')
    t.equal((await call('POST', '/@users', { username: 'fwt', email: 'fwt@example.org', password: 'fwt-password' }, admin)).statusCode, 409, 'a group\'s id for a user')
    t.equal((await call('DELETE', '/@groups/Administrators', undefined, admin)).statusCode, 400)
    t.equal((await call('DELETE', '/@groups/AuthenticatedUsers', undefined, admin)).statusCode, 400)
    t.equal((await call('PATCH', '/@groups/AuthenticatedUsers', { title: 'x' }, admin)).statusCode, 400)
    t.equal((await call('PATCH', '/@groups/Administrators', { roles: [] }, admin)).statusCode, 400, 'Administrators keeps Manager')
  })

  await t.test('who may manage groups: Managers and Site Administrators, without escalation', async t => {
    const member = await tokenFor('mia')
    const siteAdmin = await tokenFor('sam', ['Member', 'Site Administrator'])
    t.equal((await call('GET', '/@groups')).statusCode, 401)
    t.equal((await call('GET', '/@groups', undefined, member)).statusCode, 403)
    t.equal((await call('POST', '/@groups', { groupname: 'mine' }, member)).statusCode, 403)
    t.equal((await call('GET', '/@groups', undefined, siteAdmin)).statusCode, 200)
    t.equal((await call('POST', '/@groups', { groupname: 'editors', roles: ['Editor'], users: ['mia'] }, siteAdmin)).statusCode, 201)
    t.equal((await call('POST', '/@groups', { groupname: 'bosses', roles: ['Manager'] }, siteAdmin)).statusCode, 403)
    t.equal((await call('PATCH', '/@groups/editors', { roles: ['Manager'] }, siteAdmin)).statusCode, 403)
    t.equal((await call('PATCH', '/@groups/Administrators', { users: { sam: true } }, siteAdmin)).statusCode, 403, 'no joining the Managers')
    t.equal((await call('PATCH', '/@groups/fwt', { users: { sam: true } }, siteAdmin)).statusCode, 403, 'nor any group holding Manager')
    t.equal((await call('DELETE', '/@groups/fwt', undefined, siteAdmin)).statusCode, 403)
    t.match((await call('GET', '/@groups/Administrators', undefined, admin)).json(), { members: { items: [] } })
  })

  await t.test('a group\'s roles are its members\', from their next request on', async t => {
    const gus = await tokenFor('gus')
    t.equal((await call('GET', '/@users', undefined, gus)).statusCode, 403)
    t.equal((await call('PATCH', '/@groups/Administrators', { users: { gus: true } }, admin)).statusCode, 204)
    t.equal((await call('GET', '/@users', undefined, gus)).statusCode, 200, 'a member of Administrators is a Manager')
    t.equal((await call('PATCH', '/@groups/Administrators', { users: { gus: false } }, admin)).statusCode, 204)
    t.equal((await call('GET', '/@users', undefined, gus)).statusCode, 403, 'the same token: its kept principal ended')
    t.equal((await call('PATCH', '/@groups/editors', { users: { gus: true } }, admin)).statusCode, 204)
    t.equal((await call('PATCH', '/@groups/editors', { roles: ['Manager'] }, admin)).statusCode, 204)
    t.equal((await call('GET', '/@users', undefined, gus)).statusCode, 200, 'a group given Manager')
    t.equal((await call('DELETE', '/@groups/editors', undefined, admin)).statusCode, 204)
    t.equal((await call('GET', '/@users', undefined, gus)).statusCode, 403, 'a group deleted')
  })

  await t.test('hostile input: 400 in the error shape, nothing written', async t => {
    const groups = async (): Promise<number> => (await call('GET', '/@groups', undefined, admin)).json().length
    const before = await groups()
    const bodies: unknown[] = [
      { groupname: '__proto__' },
      { groupname: 'nul\u0000byte' },
      { groupname: 'a'.repeat(101) },
      { groupname: 'owners', roles: ['Owner'] },
      { groupname: 'nested', groups: ['Administrators'] },
      { groupname: 'ghosts', users: ['admin', 'nobody'] },
      { groupname: 'many', users: Array.from({ length: 1001 }, (_, i) => `u${i}`) },
      { groupname: 'typed', title: 42 },
      { groupname: 'extra', unknown: true }
    ]
    for (const body of bodies) {
      const res = await call('POST', '/@groups', body, admin)
      t.equal(res.statusCode, 400, JSON.stringify(body).slice(0, 80))
      t.equal(res.json().type, 'BadRequest')
    }
    t.equal(await groups(), before)
    t.equal((await call('PATCH', '/@groups/fwt', { users: Object.fromEntries(Array.from({ length: 1001 }, (_, i) => [`u${i}`, false])) }, admin)).statusCode, 400)
    t.equal((await call('PATCH', '/@groups/fwt', { title: 'Renamed', users: { nobody: true } }, admin)).statusCode, 400)
    t.equal((await call('GET', '/@groups/fwt', undefined, admin)).json().title, 'Framework Team', 'a refused change changed nothing')
    // JSON.parse makes `__proto__` an own key, as a client's body has it.
    t.equal((await call('PATCH', '/@groups/fwt', { users: JSON.parse('{"__proto__": true}') }, admin)).statusCode, 400)
  })
})
