import t from 'tap'
import { build, talkBody } from '../helper.js'
import { reindexSubtreeAccess } from '../../core/security/subtree-access.js'

/**
 * `@sharing` in plone.restapi's shapes (sharing_folder_get, sharing_search,
 * sharing_folder_post), its effect everywhere permissions count (reads,
 * writes, @search, @actions), inheritance and its blocking, groups, who may
 * delegate which role, hostile bodies, and `@principals`.
 */
const BASE = 'http://localhost:80'
const AVAILABLE = [{ id: 'Contributor', title: 'Can add' }, { id: 'Editor', title: 'Can edit' }, { id: 'Reader', title: 'Can view' }, { id: 'Reviewer', title: 'Can review' }]
const none = { Contributor: false, Editor: false, Reader: false, Reviewer: false }
const loggedIn = (roles: Record<string, unknown> = none): Record<string, unknown> => ({ disabled: false, id: 'AuthenticatedUsers', login: null, roles, title: 'Logged-in users', type: 'group' })

t.test('@sharing as plone.restapi answers it', async t => {
  const { app, call, tokenFor } = await build(t)
  const admin = await tokenFor('admin')
  const rita = await tokenFor('rita')
  const created = async (path: string, body: Record<string, unknown>): Promise<void> => {
    const res = await call('POST', path, body, admin)
    if (res.statusCode !== 201) throw new Error(res.body)
  }
  await created('/', { '@type': 'folder', id: 'folder', title: 'Folder' })
  await created('/folder', { '@type': 'Document', id: 'doc', title: 'Secret okapi page' })
  await created('/folder', { '@type': 'folder', id: 'inner', title: 'Inner' })
  await created('/folder/inner', { '@type': 'Document', id: 'deep', title: 'Deep okapi page' })
  const found = async (token?: string): Promise<string[]> =>
    (await call('GET', '/@search?SearchableText=okapi&sort_on=path', undefined, token)).json().items.map((i: { '@id': string }) => new URL(i['@id']).pathname)

  await t.test('GET: the documented answer (sharing_folder_get)', async t => {
    const res = await call('GET', '/folder/@sharing', undefined, admin)
    t.equal(res.statusCode, 200, res.body)
    t.same(res.json(), { available_roles: AVAILABLE, entries: [loggedIn()], inherit: true })
  })

  await t.test('what a content type grants every logged-in user shows as AuthenticatedUsers, and may be taken', async t => {
    t.same((await call('GET', '/talks/@sharing', undefined, admin)).json().entries, [loggedIn({ ...none, Contributor: true })])
    t.equal((await call('POST', '/talks', talkBody(), rita)).statusCode, 201, 'members may add talks')
    t.equal((await call('POST', '/talks/@sharing', { entries: [{ id: 'AuthenticatedUsers', roles: { Contributor: false, Reader: true } }] }, admin)).statusCode, 204)
    t.same((await call('GET', '/talks/@sharing', undefined, admin)).json().entries, [loggedIn({ ...none, Reader: true })])
    t.equal((await call('POST', '/talks', talkBody(), rita)).statusCode, 403, 'no longer')
    t.equal((await call('POST', '/talks/@sharing', { entries: [{ id: 'AuthenticatedUsers', roles: { Contributor: true } }] }, admin)).statusCode, 204)
  })

  await t.test('GET ?search: groups and users found, global roles marked (sharing_search)', async t => {
    await tokenFor('sally', ['Member', 'Reviewer'])
    const res = await call('GET', '/folder/doc/@sharing?search=a', undefined, admin)
    t.equal(res.statusCode, 200, res.body)
    const entries = res.json().entries as Array<{ id: string, type: string, roles: Record<string, unknown>, login?: string | null }>
    t.same(entries.map(e => `${e.type}:${e.id}`), ['group:Administrators', 'group:AuthenticatedUsers', 'group:Site Administrators', 'user:admin', 'user:rita', 'user:sally'])
    t.same(entries.find(e => e.id === 'sally')?.roles, { ...none, Reviewer: 'global' })
    t.equal(entries.find(e => e.id === 'Administrators')?.login, null)
    t.same((await call('GET', '/folder/@sharing?search=%25', undefined, admin)).json().entries.length, 1, 'LIKE wildcards are searched as text')
  })

  await t.test('POST (sharing_folder_post) grants roles; GET shows them, inherited below as acquired', async t => {
    const res = await call('POST', '/folder/@sharing', { entries: [{ id: 'AuthenticatedUsers', roles: { Contributor: false, Editor: false, Reader: true, Reviewer: true }, type: 'user' }], inherit: true }, admin)
    t.equal(res.statusCode, 204, res.body)
    t.same((await call('GET', '/folder/@sharing', undefined, admin)).json().entries, [loggedIn({ ...none, Reader: true, Reviewer: true })])
    t.same((await call('GET', '/folder/doc/@sharing', undefined, admin)).json().entries, [loggedIn({ ...none, Reader: 'acquired', Reviewer: 'acquired' })])
    t.same(await found(rita), ['/folder/doc', '/folder/inner/deep'], 'every logged-in user now finds the private pages')
    t.same(await found(), [], 'anonymous does not')
    t.equal((await call('POST', '/folder/@sharing', { entries: [{ id: 'AuthenticatedUsers', roles: { Reader: false, Reviewer: false } }] }, admin)).statusCode, 204)
    t.same(await found(rita), [])
  })

  await t.test('a user\'s local role counts for reads, writes, search and actions; taken, it ends', async t => {
    t.not((await call('GET', '/folder/doc', undefined, rita)).statusCode, 200)
    t.equal((await call('POST', '/folder/@sharing', { entries: [{ id: 'rita', type: 'user', roles: { Reader: true } }] }, admin)).statusCode, 204)
    t.equal((await call('GET', '/folder/doc', undefined, rita)).statusCode, 200)
    t.same(await found(rita), ['/folder/doc', '/folder/inner/deep'])
    t.not((await call('PATCH', '/folder/doc', { title: 'Secret okapi page, read' }, rita)).statusCode, 204, 'Reader does not edit')
    const actions = async (): Promise<string[]> => (await call('GET', '/folder/doc/@actions', undefined, rita)).json().object.map((a: { id: string }) => a.id)
    t.notOk((await actions()).includes('local_roles'))
    t.equal((await call('POST', '/folder/@sharing', { entries: [{ id: 'rita', type: 'user', roles: { Reader: true, Editor: true } }] }, admin)).statusCode, 204)
    t.equal((await call('PATCH', '/folder/doc', { title: 'Secret okapi page, edited' }, rita)).statusCode, 204, 'Editor edits')
    t.ok((await actions()).includes('local_roles'), 'and may share: Sharing is among the actions')
    t.equal((await call('POST', '/folder/@sharing', { entries: [{ id: 'rita', type: 'user', roles: { Reader: false, Editor: false } }] }, admin)).statusCode, 204)
    t.not((await call('GET', '/folder/doc', undefined, rita)).statusCode, 200)
    t.same(await found(rita), [])
    t.same((await call('GET', '/folder/@sharing', undefined, admin)).json().entries, [loggedIn()], 'nothing is left of her entry')
  })

  await t.test('a group\'s local role counts for its members, and ends when one leaves', async t => {
    const gus = await tokenFor('gus')
    t.equal((await call('POST', '/@groups', { groupname: 'team', title: 'The team', users: ['gus'] }, admin)).statusCode, 201)
    t.equal((await call('POST', '/folder/@sharing', { entries: [{ id: 'team', type: 'group', roles: { Editor: true } }] }, admin)).statusCode, 204)
    t.equal((await call('PATCH', '/folder/doc', { title: 'Secret okapi page, by the team' }, gus)).statusCode, 204)
    t.same(await found(gus), ['/folder/doc', '/folder/inner/deep'])
    t.match((await call('GET', '/folder/@sharing', undefined, admin)).json().entries, [loggedIn(), { id: 'team', type: 'group', title: 'The team', login: null, roles: { ...none, Editor: true } }])
    t.equal((await call('PATCH', '/@groups/team', { users: { gus: false } }, admin)).statusCode, 204)
    t.not((await call('PATCH', '/folder/doc', { title: 'Not any more' }, gus)).statusCode, 204, 'the same token')
    t.same(await found(gus), [])
  })

  await t.test('inherit: false blocks what is granted above, not global roles; the blocker keeps its own', async t => {
    t.equal((await call('POST', '/folder/@sharing', { entries: [{ id: 'rita', roles: { Editor: true } }] }, admin)).statusCode, 204)
    t.same(await found(rita), ['/folder/doc', '/folder/inner/deep'])
    t.equal((await call('POST', '/folder/inner/@sharing', { inherit: false }, rita)).statusCode, 204, 'an Editor may block')
    const inner = (await call('GET', '/folder/inner/@sharing', undefined, admin)).json()
    t.equal(inner.inherit, false)
    t.match(inner.entries, [loggedIn(), { id: 'rita', roles: { ...none, Editor: true } }], 'her acquired Editor was kept on the folder')
    t.equal((await call('POST', '/folder/inner/@sharing', { entries: [{ id: 'rita', roles: { Editor: false } }] }, admin)).statusCode, 204)
    t.same(await found(rita), ['/folder/doc'], 'the role above no longer reaches inside')
    t.same(await found(admin), ['/folder/doc', '/folder/inner/deep'], 'global roles still count')
    t.not((await call('GET', '/folder/inner/deep', undefined, rita)).statusCode, 200)
    t.equal((await call('POST', '/folder/inner/@sharing', { inherit: true }, admin)).statusCode, 204)
    t.same(await found(rita), ['/folder/doc', '/folder/inner/deep'])
    t.equal((await call('POST', '/folder/@sharing', { entries: [{ id: 'rita', roles: { Editor: false } }] }, admin)).statusCode, 204)
  })

  await t.test('who may share, and no escalation', async t => {
    const ed = await tokenFor('ed')
    t.equal((await call('GET', '/folder/@sharing')).statusCode, 401)
    t.equal((await call('GET', '/folder/@sharing', undefined, ed)).statusCode, 403)
    t.equal((await call('POST', '/folder/@sharing', { entries: [{ id: 'ed', roles: { Editor: true } }] }, ed)).statusCode, 403)
    t.equal((await call('POST', '/folder/@sharing', { entries: [{ id: 'rita', roles: { Reader: true } }] }, admin)).statusCode, 204)
    t.equal((await call('GET', '/folder/@sharing', undefined, rita)).statusCode, 403, 'a Reader may not share')
    t.equal((await call('POST', '/folder/@sharing', { entries: [{ id: 'ed', roles: { Editor: true } }] }, admin)).statusCode, 204)
    const asEditor = (await call('GET', '/folder/@sharing', undefined, ed)).json()
    t.same(asEditor.available_roles.map((r: { id: string }) => r.id), ['Contributor', 'Editor', 'Reader'], 'Reviewer is delegated by reviewers only')
    t.equal((await call('POST', '/folder/@sharing', { entries: [{ id: 'ed', roles: { Editor: true, Reviewer: true } }, { id: 'rita', roles: { Reader: true, Reviewer: true } }] }, ed)).statusCode, 204)
    const entries = (await call('GET', '/folder/@sharing', undefined, admin)).json().entries as Array<{ id: string, roles: Record<string, unknown> }>
    t.same(entries.find(e => e.id === 'ed')?.roles, { ...none, Editor: true }, 'no Reviewer taken by an Editor')
    t.same(entries.find(e => e.id === 'rita')?.roles, { ...none, Reader: true })
    t.equal((await call('POST', '/folder/@sharing', { entries: [{ id: 'ed', roles: { Manager: true } }] }, ed)).statusCode, 400, 'Manager is no local role to grant')
    t.equal((await call('POST', '/folder/@sharing', { entries: [{ id: 'ed', roles: { Manager: true } }] }, admin)).statusCode, 400, 'not even by a Manager')
    t.equal((await call('POST', '/folder/@sharing', { entries: [{ id: 'ed', roles: { Editor: 'global', Reader: 'acquired' } }] }, ed)).statusCode, 204, 'Volto sends what it shows')
    t.same(((await call('GET', '/folder/@sharing', undefined, admin)).json().entries as typeof entries).find(e => e.id === 'ed'), undefined, 'which grants nothing')
    t.equal((await call('POST', '/folder/@sharing', { entries: [{ id: 'rita', roles: { Reader: false } }] }, admin)).statusCode, 204)
  })

  await t.test('hostile bodies: 400 in the error shape, nothing written', async t => {
    const before = (await call('GET', '/folder/@sharing', undefined, admin)).json()
    const bodies: unknown[] = [
      { entries: [{ id: '__proto__', roles: { Reader: true } }] },
      { entries: JSON.parse('[{"id": "rita", "roles": {"__proto__": true}}]') },
      { entries: [{ id: 'nobody', roles: { Reader: true } }] },
      { entries: [{ id: 'nul\u0000', roles: { Reader: true } }] },
      { entries: [{ id: 'rita', roles: { Reader: 'yes' } }] },
      { entries: [{ id: 'rita', roles: { Reader: true } }, { id: 'rita', roles: { Reader: false } }] },
      { entries: Array.from({ length: 201 }, (_, i) => ({ id: `u${i}`, roles: { Reader: true } })) },
      { entries: [{ id: 'rita', roles: { Reader: true } }], inherit: 'no' },
      { entries: 'everyone' }
    ]
    for (const body of bodies) {
      const res = await call('POST', '/folder/@sharing', body, admin)
      t.equal(res.statusCode, 400, JSON.stringify(body).slice(0, 80))
      t.equal(res.json().type, 'BadRequest')
    }
    t.same((await call('GET', '/folder/@sharing', undefined, admin)).json(), before)
    t.equal((await call('GET', '/folder/@sharing?search=a%00b', undefined, admin)).statusCode, 400)
    t.equal((await call('GET', '/nowhere/@sharing', undefined, admin)).statusCode, 404)
  })

  await t.test('a folder\'s sharing re-indexes its subtree set-based, changing only what changed', async t => {
    for (let i = 0; i < 160; i++) await created('/folder/inner', { '@type': 'Document', id: `page-${i}`, title: `Bulk okapi ${i}` })
    const count = async (): Promise<number> => (await call('GET', '/@search?SearchableText=okapi&b_size=1', undefined, rita)).json().items_total
    t.equal(await count(), 0)
    t.equal((await call('POST', '/folder/@sharing', { entries: [{ id: 'rita', roles: { Reader: true } }] }, admin)).statusCode, 204)
    t.equal(await count(), 162, 'more than one notification names: every page is found at once')
    const again = await app.content.write(async write => await reindexSubtreeAccess(write, '/folder', row => app.content.typeOf(row)))
    t.same(again, [], 'nothing changed, nothing written')
    t.equal((await call('POST', '/folder/@sharing', { entries: [{ id: 'rita', roles: { Reader: false } }] }, admin)).statusCode, 204)
    t.equal(await count(), 0)
  })

  await t.test('concurrent changes of one object\'s sharing each keep the others\'', async t => {
    const users = Array.from({ length: 8 }, (_, i) => `racer${i}`)
    for (const user of users) await tokenFor(user)
    const answers = await Promise.all(users.map(async id => await call('POST', '/folder/inner/@sharing', { entries: [{ id, roles: { Reader: true } }] }, admin)))
    t.same(answers.map(a => a.statusCode), users.map(() => 204))
    const entries = (await call('GET', '/folder/inner/@sharing', undefined, admin)).json().entries as Array<{ id: string }>
    t.same(entries.map(e => e.id).filter(id => id.startsWith('racer')).sort(), users)
    await call('POST', '/folder/inner/@sharing', { entries: users.map(id => ({ id, roles: { Reader: false } })) }, admin)
  })

  await t.test('@principals (principals): users and groups found by a search', async t => {
    t.equal((await call('POST', '/@groups', { groupname: 'ploneteam', title: 'Plone Team', description: 'We are Plone', email: 'ploneteam@plone.org' }, admin)).statusCode, 201)
    const res = await call('GET', '/@principals?search=ploneteam', undefined, admin)
    t.equal(res.statusCode, 200, res.body)
    t.same(res.json(), { groups: [{ '@id': `${BASE}/@groups/ploneteam`, description: 'We are Plone', email: 'ploneteam@plone.org', groupname: 'ploneteam', id: 'ploneteam', roles: ['Authenticated'], title: 'Plone Team' }], users: [] })
    t.match((await call('GET', '/@principals?search=rit', undefined, admin)).json(), { groups: [], users: [{ id: 'rita', username: 'rita' }] })
    t.equal((await call('GET', '/@principals', undefined, admin)).statusCode, 400)
    t.equal((await call('GET', '/@principals?search=', undefined, admin)).statusCode, 400)
    t.equal((await call('GET', '/@principals?search=a', undefined, rita)).statusCode, 403)
    t.equal((await call('GET', '/@principals?search=a')).statusCode, 401)
  })
})
