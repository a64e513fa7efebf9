import t from 'tap'
import { build, talkBody } from '../helper.js'

/**
 * `@copy` and `@move` (plone.restapi's copymove service) and rename by an
 * `id` in a PATCH: the documented examples (copy, copy_multiple, move), sources
 * by URL, path and UID, ids that collide, a folder into itself, permissions,
 * hostile sources, and what the subtree looks like after (paths, catalogue,
 * listings, files, history).
 */
const BASE = 'http://localhost:80'

t.test('copy and move', async t => {
  const { app, call, tokenFor } = await build(t)
  const admin = await tokenFor('admin', ['Manager'])
  const olga = await tokenFor('olga', ['Member'])
  const member = await tokenFor('mia', ['Member'])
  const post = async (path: string, body: unknown, token = admin): Promise<string> => {
    const res = await call('POST', path, body, token)
    t.equal(res.statusCode, 201, res.body)
    return new URL(res.json()['@id'] as string).pathname
  }
  const folder = await post('/', { '@type': 'folder', id: 'folder', title: 'Folder' })
  const frontPage = await post('/', { '@type': 'Document', id: 'front-page', title: 'Front page' })
  await post('/', { '@type': 'Document', id: 'newsitem', title: 'News item' })

  await t.test('plone.restapi\'s examples: copy, copy_multiple, move', async t => {
    const copied = await call('POST', '/@copy', { source: `${BASE}/front-page` }, admin)
    t.equal(copied.statusCode, 200, copied.body)
    t.same(copied.json(), [{ source: `${BASE}/front-page`, target: `${BASE}/front-page-1` }], 'the copy beside its original takes the next free id')
    const multiple = await call('POST', '/@copy', { source: [`${BASE}/front-page`, `${BASE}/newsitem`] }, admin)
    t.same(multiple.json(), [
      { source: `${BASE}/front-page`, target: `${BASE}/front-page-2` },
      { source: `${BASE}/newsitem`, target: `${BASE}/newsitem-1` }
    ])
    const moved = await call('POST', `${folder}/@move`, { source: `${BASE}/front-page` }, admin)
    t.equal(moved.statusCode, 200, moved.body)
    t.same(moved.json(), [{ source: `${BASE}/front-page`, target: `${BASE}/folder/front-page` }])
    t.equal((await call('GET', '/folder/front-page', undefined, admin)).json().title, 'Front page')
    t.equal((await call('GET', frontPage, undefined, admin)).statusCode, 302, 'the old path redirects')
  })

  await t.test('a subtree moves whole: paths, catalogue, listings, parent', async t => {
    const a = await post('/', { '@type': 'folder', id: 'a', title: 'A' })
    const b = await post(a, { '@type': 'folder', id: 'b', title: 'B' })
    const doc = await post(b, { '@type': 'Document', id: 'doc', title: 'Deep document' })
    const uid = (await call('GET', doc, undefined, admin)).json().UID
    const res = await call('POST', `${folder}/@move`, { source: a }, admin)
    t.same(res.json(), [{ source: `${BASE}/a`, target: `${BASE}/folder/a` }])
    const read = (await call('GET', '/folder/a/b/doc', undefined, admin)).json()
    t.equal(read.UID, uid)
    t.equal(read.parent['@id'], `${BASE}/folder/a/b`)
    const search = (await call('GET', '/@search?path.query=/folder/a&metadata_fields=getId', undefined, admin)).json()
    t.same(search.items.map((i: { '@id': string }) => i['@id']).sort(), [`${BASE}/folder/a`, `${BASE}/folder/a/b`, `${BASE}/folder/a/b/doc`])
    t.equal(search.items_total, 3)
    t.equal((await call('GET', '/@search?path.query=/a', undefined, admin)).json().items_total, 0, 'nothing is left at the old path')
    const depth = (await call('GET', '/@search?path.query=/folder/a&path.depth=1', undefined, admin)).json()
    t.same(depth.items.map((i: { '@id': string }) => i['@id']), [`${BASE}/folder/a/b`])
    const listing = (await call('GET', '/folder/a/b', undefined, admin)).json()
    t.same(listing.items.map((i: { '@id': string }) => i['@id']), [`${BASE}/folder/a/b/doc`])
    const crumbs = (await call('GET', '/folder/a/b/doc/@breadcrumbs', undefined, admin)).json()
    t.same(crumbs.items.map((i: { '@id': string }) => i['@id']), [`${BASE}/folder`, `${BASE}/folder/a`, `${BASE}/folder/a/b`, `${BASE}/folder/a/b/doc`])
  })

  await t.test('a folder into itself or below it: 400, nothing moved', async t => {
    for (const target of ['/folder/a', '/folder/a/b']) {
      const res = await call('POST', `${target}/@move`, { source: '/folder/a' }, admin)
      t.equal(res.statusCode, 400, res.body)
      t.equal(res.json().type, 'BadRequest')
      const copy = await call('POST', `${target}/@copy`, { source: '/folder/a' }, admin)
      t.equal(copy.statusCode, 400, copy.body)
    }
    t.equal((await call('GET', '/folder/a/b/doc', undefined, admin)).statusCode, 200)
  })

  await t.test('sources by path and by UID; a copy is a new object of its copier', async t => {
    const talk = await post('/talks', talkBody({ title: 'Copied talk' }), olga)
    const original = (await call('GET', talk, undefined, olga)).json()
    t.equal((await call('POST', `/talks${talk.slice('/talks'.length)}/@workflow/submit`, {}, olga)).statusCode, 200)
    const editor = await tokenFor('eddie', ['Editor', 'Contributor'])
    const res = await call('POST', '/talks/@copy', { source: original.UID }, editor)
    t.equal(res.statusCode, 200, res.body)
    const copy = (await call('GET', new URL(res.json()[0].target).pathname, undefined, admin)).json()
    t.not(copy.UID, original.UID, 'a new UID')
    t.equal(copy.id, `${original.id}-1`)
    t.equal(copy.title, 'Copied talk')
    t.same(copy.creators, ['olga'], 'creators kept')
    t.equal(copy.review_state, 'private', 'the workflow starts again')
    const history = (await call('GET', `${new URL(copy['@id']).pathname}/@history`, undefined, admin)).json()
    t.equal(history.filter((h: { type: string }) => h.type === 'workflow').length, 1, 'one creation entry')
    const byPath = await call('POST', '/talks/@copy', { source: talk }, admin)
    t.equal(new URL(byPath.json()[0].target).pathname, `${talk}-2`)
    const searched = (await call('GET', `/@search?UID=${copy.UID as string}`, undefined, admin)).json()
    t.equal(searched.items_total, 1, 'the copy is catalogued')
  })

  await t.test('a copied folder copies its content with new uids', async t => {
    const res = await call('POST', '/@copy', { source: '/folder/a' }, admin)
    t.same(res.json(), [{ source: `${BASE}/folder/a`, target: `${BASE}/a` }])
    const copy = (await call('GET', '/a/b/doc', undefined, admin)).json()
    const original = (await call('GET', '/folder/a/b/doc', undefined, admin)).json()
    t.not(copy.UID, original.UID)
    t.equal(copy.title, original.title)
    t.equal((await call('GET', '/@search?path.query=/a', undefined, admin)).json().items_total, 3)
    t.equal((await call('GET', '/@search?path.query=/folder/a', undefined, admin)).json().items_total, 3, 'the original stays')
  })

  await t.test('permissions: Add on the folder, Delete on what moves, View on what is copied', async t => {
    const talk = await post('/talks', talkBody({ title: 'Private talk' }), olga)
    t.equal((await call('POST', '/talks/@copy', { source: talk })).statusCode, 401, 'anonymous')
    t.equal((await call('POST', '/folder/@move', { source: talk }, member)).statusCode, 403, 'no Add on the folder')
    const invisible = await call('POST', '/talks/@copy', { source: talk }, member)
    t.same([invisible.statusCode, invisible.json()], [200, []], 'a source the caller may not view is left out')
    const contributor = await tokenFor('carl', ['Contributor'])
    const shown = await post('/talks', talkBody({ title: 'Shown talk' }), olga)
    t.equal((await call('POST', `${shown.slice(0)}/@workflow/publish`, {}, admin)).statusCode, 200)
    t.equal((await call('POST', '/folder/@move', { source: shown }, contributor)).statusCode, 403, 'no Delete on the talk nor on its folder')
    t.equal((await call('GET', shown, undefined, olga)).statusCode, 200, 'still there')
    const copied = await call('POST', '/talks/@copy', { source: shown }, contributor)
    t.equal(copied.statusCode, 200, 'a contributor copies what they may view')
    t.equal((await call('POST', '/folder/@copy', { source: shown }, contributor)).statusCode, 403, 'not into a private folder of another')
    t.equal((await call('POST', '/folder/@move', { source: talk }, olga)).statusCode, 403, 'the owner may not add to the folder')
  })

  await t.test('a copy holds only what its copier may view', async t => {
    const box = await post('/', { '@type': 'folder', id: 'box', title: 'Box' })
    const dest = await post('/', { '@type': 'folder', id: 'dest', title: 'Dest' })
    await post(box, { '@type': 'Document', id: 'shown', title: 'Shown' })
    const hidden = await post(box, { '@type': 'folder', id: 'hidden', title: 'Hidden' })
    await post(hidden, { '@type': 'Document', id: 'inside', title: 'Inside' })
    for (const path of [box, dest, `${box}/shown`]) t.equal((await call('POST', `${path}/@workflow/publish`, {}, admin)).statusCode, 200)
    const carl = await tokenFor('carl', ['Contributor'])
    const res = await call('POST', `${dest}/@copy`, { source: box }, carl)
    t.same(res.json(), [{ source: `${BASE}/box`, target: `${BASE}/dest/box` }], res.body)
    t.equal((await call('GET', '/dest/box/shown', undefined, admin)).statusCode, 200)
    t.equal((await call('GET', '/dest/box/hidden', undefined, admin)).statusCode, 404, 'a private folder of another is not copied')
    t.equal((await call('GET', '/dest/box/hidden/inside', undefined, admin)).statusCode, 404, 'nor what it holds')
    t.equal((await call('GET', '/dest/box', undefined, carl)).json().review_state, 'private', 'the copy is the copier\'s, private')
  })

  await t.test('rename: PATCH with a new id', async t => {
    const doc = await post(folder, { '@type': 'Document', id: 'old-name', title: 'Renamed' })
    const res = await call('PATCH', doc, { id: 'new-name', title: 'Renamed too' }, admin)
    t.equal(res.statusCode, 204, res.body)
    const read = (await call('GET', '/folder/new-name', undefined, admin)).json()
    t.same([read.id, read.title], ['new-name', 'Renamed too'])
    t.equal((await call('GET', doc, undefined, admin)).statusCode, 302)
    await post(folder, { '@type': 'Document', id: 'taken', title: 'Taken' })
    t.equal((await call('PATCH', '/folder/new-name', { id: 'taken' }, admin)).statusCode, 409)
    t.equal((await call('PATCH', '/folder/new-name', { id: '../x' }, admin)).statusCode, 400)
    t.equal((await call('PATCH', '/folder/new-name', { id: 'new-name', title: 'Same id' }, admin)).statusCode, 204)
  })

  await t.test('after a move, access follows the local roles of the new folders', async t => {
    const shared = await post('/', { '@type': 'folder', id: 'shared', title: 'Shared' })
    const doc = await post('/', { '@type': 'Document', id: 'memo', title: 'Memo' })
    // A Reader role granted on the folder (as @sharing would), written directly: this suite tests the move, not sharing.
    await app.db.query('UPDATE content SET local_roles = $1 WHERE path = $2', [JSON.stringify({ 'user:mia': ['Reader'] }), shared])
    const searched = async (): Promise<number> => (await call('GET', '/@search?SearchableText=Memo', undefined, member)).json().items_total
    t.equal(await searched(), 0, 'private, not shared')
    t.equal((await call('POST', `${shared}/@move`, { source: doc }, admin)).statusCode, 200)
    t.equal(await searched(), 1, 'the Reader of the new folder finds it')
    t.equal((await call('GET', '/shared/memo', undefined, member)).statusCode, 200)
    t.equal((await call('POST', '/@move', { source: '/shared/memo' }, admin)).statusCode, 200)
    t.equal(await searched(), 0, 'moved out, not any more')
    t.equal((await call('GET', '/memo', undefined, member)).statusCode, 403)
  })

  await t.test('a locked object moves only with its lock\'s token', async t => {
    const doc = await post(folder, { '@type': 'Document', id: 'locked', title: 'Locked' })
    const token = (await call('POST', `${doc}/@lock`, {}, admin)).json().token as string
    const editor = await tokenFor('eddie', ['Editor', 'Contributor'])
    t.equal((await call('POST', '/@move', { source: doc }, editor)).statusCode, 409, 'locked by another')
    const moved = await call('POST', '/@move', { source: doc }, admin, { 'lock-token': token })
    t.equal(moved.statusCode, 200, moved.body)
    t.equal((await call('POST', '/@copy', { source: '/locked' }, editor)).statusCode, 200, 'a copy of a locked object is not locked')
  })

  await t.test('hostile sources', async t => {
    for (const body of [{}, { source: '' }, { source: [] }, { source: 3 }, { source: ['a', 4] }, { source: 'x'.repeat(5000) },
      { source: Array.from({ length: 10_000 }, (_, i) => `/x${i}`) }, { source: '/a', extra: 1 }]) {
      const res = await call('POST', '/folder/@copy', body, admin)
      t.ok(res.statusCode === 400 || res.statusCode === 413, JSON.stringify(body).slice(0, 80))
      t.type(res.json().type, 'string')
    }
    t.equal((await call('POST', '/folder/@copy', JSON.parse('{"source": "/a", "__proto__": {"x": 1}}'), admin)).statusCode, 400)
    t.equal((await call('POST', '/folder/@copy', { source: '/a\u0000b' }, admin)).statusCode, 400)
    for (const source of ['http://evil.example/front-page', 'https://localhost:80/a', 'javascript:alert(1)', '00000000-0000-4000-8000-000000000000', '/no/such/thing', `${BASE}/%ZZ`]) {
      const res = await call('POST', '/folder/@copy', { source }, admin)
      t.same([res.statusCode, res.json()], [200, []], source)
    }
    t.equal((await call('POST', '/@move', { source: '/' }, admin)).statusCode, 400, 'the site root does not move')
  })
})
