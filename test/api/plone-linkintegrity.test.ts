import t, { type Test } from 'tap'
import fc from 'fast-check'
import { build, talkBody, type TestApp } from '../helper.js'

/**
 * `GET @linkintegrity` (plone.restapi, as Volto's delete dialog asks it): the
 * links by UID kept in the index of links (core/content/link-index.ts,
 * migration 022), written with each object and gone with it.
 */

const BASE = 'http://localhost:80'
type Call = TestApp['call']

const slateLink = (url: string): Record<string, unknown> => ({
  '@type': 'slate', value: [{ type: 'p', children: [{ text: 'See ' }, { type: 'link', data: { url }, children: [{ text: 'this' }] }] }], plaintext: 'See this'
})
/** Blocks that link to each of `paths`. */
const blocksTo = (paths: string[]): Record<string, unknown> => {
  const blocks = Object.fromEntries(paths.map((path, i) => [`b${i}`, slateLink(path)]))
  return { blocks, blocks_layout: { items: Object.keys(blocks) } }
}

async function create (t: Test, call: Call, token: string, parent: string, body: Record<string, unknown>): Promise<{ uid: string, path: string }> {
  const res = await call('POST', parent, body, token)
  t.equal(res.statusCode, 201, res.body)
  const created = res.json()
  return { uid: created.UID, path: created['@id'].slice(BASE.length) }
}

const integrity = async (call: Call, uids: string[], token?: string): Promise<{ statusCode: number, json: () => any, body: string }> =>
  await call('GET', `/@linkintegrity?${uids.map(uid => `uids=${uid}`).join('&')}`, undefined, token)

t.test('@linkintegrity as plone.restapi documents it', async t => {
  const { call, tokenFor } = await build(t)
  const admin = await tokenFor('admin')
  const doc2 = await create(t, call, admin, '/', { '@type': 'Document', id: 'doc-2', title: 'Second document' })
  const doc1 = await create(t, call, admin, '/', { '@type': 'Document', id: 'doc-1', title: 'First document', ...blocksTo(['/doc-2']) })

  t.test('the documented example', async t => {
    const res = await integrity(call, [doc2.uid], admin)
    t.equal(res.statusCode, 200, res.body)
    t.same(res.json(), [{
      '@id': `${BASE}/doc-2`,
      '@type': 'Document',
      breaches: [{ '@id': `${BASE}/doc-1`, title: 'First document', uid: doc1.uid }],
      description: '',
      items_total: 0,
      review_state: 'private',
      title: 'Second document',
      type_title: 'Page'
    }])
    t.same((await integrity(call, [doc1.uid], admin)).json()[0].breaches, [], 'nothing links to the source')
    const both = (await integrity(call, [doc1.uid, doc2.uid], admin)).json()
    t.same(both.map((entry: any) => entry['@id']), [`${BASE}/doc-1`, `${BASE}/doc-2`], 'one entry a UID, in the order asked')
    t.same(both[1].breaches.map((b: any) => b.uid), [doc1.uid], 'a source asked about is still named (Volto leaves it out)')
  })

  t.test('links from rich text and from a Link\'s remoteUrl', async t => {
    const talk = await create(t, call, admin, '/talks', talkBody({ title: 'Talk', details: { data: '<p><a href="/doc-2#top">two</a></p>', 'content-type': 'text/html' } }))
    const link = await create(t, call, admin, '/', { '@type': 'Link', id: 'a-link', title: 'A link', remoteUrl: `\${portal_url}/resolveuid/${doc2.uid}` })
    const elsewhere = await create(t, call, admin, '/', { '@type': 'Link', id: 'out', title: 'Out', remoteUrl: 'https://plone.org/resolveuid/not-a-uid' })
    const sources = (await integrity(call, [doc2.uid], admin)).json()[0].breaches.map((b: any) => b.uid)
    t.same(sources.sort(), [doc1.uid, talk.uid, link.uid].sort())
    t.notOk(sources.includes(elsewhere.uid))
  })

  t.test('an edit that removes a link, a delete of the source', async t => {
    t.equal((await call('PATCH', '/doc-1', blocksTo([]), admin)).statusCode, 204)
    t.notOk((await integrity(call, [doc2.uid], admin)).json()[0].breaches.some((b: any) => b.uid === doc1.uid), 'the edit took the link away')
    t.equal((await call('PATCH', '/doc-1', blocksTo(['/doc-2', `${BASE}/doc-2/@@images/image`]), admin)).statusCode, 204)
    t.ok((await integrity(call, [doc2.uid], admin)).json()[0].breaches.some((b: any) => b.uid === doc1.uid), 'and back')
    t.equal((await call('PATCH', '/doc-1', { title: 'First, renamed' }, admin)).statusCode, 204)
    t.ok((await integrity(call, [doc2.uid], admin)).json()[0].breaches.some((b: any) => b.title === 'First, renamed'), 'an edit of other fields keeps it')
    t.equal((await call('PATCH', '/a-link', { remoteUrl: 'https://plone.org' }, admin)).statusCode, 204)
    t.equal((await call('DELETE', '/doc-1', undefined, admin)).statusCode, 204)
    const left = (await integrity(call, [doc2.uid], admin)).json()[0].breaches.map((b: any) => b['@id'])
    t.same(left, [`${BASE}/talks/talk`], 'the deleted source and the changed Link are gone')
  })

  t.test('400s', async t => {
    const cases: Array<[string, RegExp]> = [
      ['/@linkintegrity', /Missing parameter "uids"/],
      ['/@linkintegrity?uids=', /not a UID/],
      ['/@linkintegrity?uids=SomeUUID000000000000000000000002', /not a UID/],
      [`/@linkintegrity?uids=${'0'.repeat(8)}-0000-4000-8000-${'0'.repeat(12)}`, /No object/],
      [`/@linkintegrity?${Array.from({ length: 101 }, () => `uids=${doc2.uid}`).join('&')}`, /At most 100/],
      ['/@linkintegrity?uids=%00', /.+/]
    ]
    for (const [url, message] of cases) {
      const res = await call('GET', url, undefined, admin)
      t.equal(res.statusCode, 400, url.slice(0, 80))
      t.match(res.json(), { message }, url.slice(0, 80))
    }
    const twice = await integrity(call, [doc2.uid, doc2.uid.toUpperCase()], admin)
    t.equal(twice.json().length, 1, 'a UID asked twice is one entry')
  })
})

t.test('what the caller may not view is never named', async t => {
  const { call, tokenFor } = await build(t)
  const admin = await tokenFor('admin')
  const member = await tokenFor('member')
  const publish = async (path: string): Promise<void> => { t.equal((await call('POST', `${path}/@workflow/publish`, {}, admin)).statusCode, 200) }
  const target = await create(t, call, admin, '/', { '@type': 'Document', id: 'target', title: 'Target' })
  await publish('/target')
  const open = await create(t, call, admin, '/', { '@type': 'Document', id: 'open', title: 'Open source', ...blocksTo(['/target']) })
  await publish('/open')
  await create(t, call, admin, '/', { '@type': 'Document', id: 'hidden', title: 'Secret source', ...blocksTo(['/target']) })
  const secret = await create(t, call, admin, '/', { '@type': 'Document', id: 'secret', title: 'Secret target' })

  for (const [who, token] of [['anonymous', undefined], ['a Member', member]] as const) {
    const res = await integrity(call, [target.uid], token)
    t.equal(res.statusCode, 200, who)
    t.same(res.json()[0].breaches, [{ '@id': `${BASE}/open`, title: 'Open source', uid: open.uid }], `${who}: the published source only`)
    t.notMatch(res.body, /hidden|Secret/, `${who}: nothing of the private source`)
    const privateTarget = await integrity(call, [secret.uid], token)
    t.equal(privateTarget.statusCode, 400, `${who}: a private object is as unknown as nothing`)
    t.notMatch(privateTarget.body, /Secret target|\/secret/)
  }
  t.equal((await integrity(call, [target.uid], admin)).json()[0].breaches.length, 2, 'the admin sees both')
})

t.test('a folder: links into anything inside it, items_total, links from inside not counted', async t => {
  const { call, tokenFor } = await build(t)
  const admin = await tokenFor('admin')
  const member = await tokenFor('member')
  const folder = await create(t, call, admin, '/', { '@type': 'folder', id: 'f', title: 'F' })
  const child = await create(t, call, admin, '/f', { '@type': 'Document', id: 'child', title: 'Child' })
  const inner = await create(t, call, admin, '/f/child', { '@type': 'Document', id: 'inner', title: 'Inner' })
  await create(t, call, admin, '/f', { '@type': 'Document', id: 'sibling', title: 'Sibling', ...blocksTo(['/f/child', '/f']) })
  const outside = await create(t, call, admin, '/', { '@type': 'Document', id: 'outside', title: 'Outside', ...blocksTo(['/f/child/inner', '/f']) })
  const res = await integrity(call, [folder.uid], admin)
  t.equal(res.statusCode, 200)
  const entries = res.json()
  t.same(entries.map((e: any) => [e['@id'], e.breaches.map((b: any) => b.uid), e.items_total]), [
    [`${BASE}/f`, [outside.uid], 3],
    [`${BASE}/f/child/inner`, [outside.uid], 0]
  ], 'the folder\'s own, then an entry for the object inside; the sibling\'s links stay inside')
  t.same((await integrity(call, [child.uid], admin)).json().map((e: any) => [e['@id'], e.breaches.map((b: any) => b.uid), e.items_total]), [
    [`${BASE}/f/child`, [(await call('GET', '/f/sibling', undefined, admin)).json().UID], 1],
    [`${BASE}/f/child/inner`, [outside.uid], 0]
  ], 'seen from the child, the sibling is outside')

  // Published: the folder, the outside page; the inner page stays private.
  for (const path of ['/f', '/outside', '/f/child']) t.equal((await call('POST', `${path}/@workflow/publish`, {}, admin)).statusCode, 200)
  const asMember = await integrity(call, [folder.uid], member)
  t.same(asMember.json().map((e: any) => [e['@id'], e.breaches.map((b: any) => b.uid), e.items_total]), [
    [`${BASE}/f`, [outside.uid], 1]
  ], 'a link into a private object counts against the folder, which names nothing of it; items_total counts what the Member sees')
  t.notMatch(asMember.body, /inner|Inner/)
  t.ok(inner.uid)
})

t.test('a folder of many objects and a bulk import', async t => {
  const { call, tokenFor, app } = await build(t)
  const admin = await tokenFor('admin')
  const target = await create(t, call, admin, '/', { '@type': 'Document', id: 'target', title: 'Target' })
  const items = Array.from({ length: 300 }, (_, i) => talkBody({ title: `Talk ${i}`, details: { data: `<p><a href="/target">t</a> ${i}</p>`, 'content-type': 'text/html' } }))
  const imported = await call('POST', '/talks/@import', { items }, admin)
  t.equal(imported.statusCode, 201, imported.body.slice(0, 300))
  const { rows: [{ n }] } = await app.db.query<{ n: string }>('SELECT count(*) AS n FROM links WHERE target = $1', [target.uid])
  t.equal(Number(n), 300, 'the import wrote its links')
  const res = await integrity(call, [target.uid], admin)
  t.equal(res.json()[0].breaches.length, 300)
  const talks = (await call('GET', '/talks', undefined, admin)).json()
  const folder = await integrity(call, [talks.UID], admin)
  t.equal(folder.json()[0].items_total, 300)
  t.same(folder.json()[0].breaches, [], 'links from inside the folder break nothing')
})

t.test('random links between random objects against an oracle graph (property test)', async t => {
  const { call, tokenFor } = await build(t)
  const admin = await tokenFor('admin')
  // A tree: two folders, three pages in each, one page inside a page.
  const objects: Array<{ uid: string, path: string }> = []
  for (const folder of ['a', 'b']) {
    objects.push(await create(t, call, admin, '/', { '@type': 'folder', id: folder, title: folder }))
    for (const page of ['p', 'q', 'r']) objects.push(await create(t, call, admin, `/${folder}`, { '@type': 'Document', id: page, title: `${folder}${page}` }))
  }
  objects.push(await create(t, call, admin, '/a/p', { '@type': 'Document', id: 'deep', title: 'deep' }))
  const pages = objects.filter(o => o.path.split('/').length > 2)
  const inside = (path: string, root: string): boolean => path === root || path.startsWith(`${root}/`)
  // The oracle: who links to whom, as the test set it.
  const graph = new Map<string, string[]>(pages.map(p => [p.path, []]))
  const index = fc.integer({ min: 0, max: objects.length - 1 })
  const step = fc.record({ source: fc.integer({ min: 0, max: pages.length - 1 }), targets: fc.uniqueArray(index, { maxLength: 4 }), asked: fc.uniqueArray(index, { minLength: 1, maxLength: 3 }) })
  await fc.assert(fc.asyncProperty(step, async ({ source, targets, asked }) => {
    const from = pages[source]
    const to = targets.map(i => objects[i].path)
    if ((await call('PATCH', from.path, blocksTo(to), admin)).statusCode !== 204) return false
    graph.set(from.path, to)
    const roots = asked.map(i => objects[i])
    const res = await integrity(call, roots.map(r => r.uid), admin)
    if (res.statusCode !== 200) return false
    const got = new Set<string>(res.json().flatMap((e: any) => e.breaches.map((b: any) => `${e['@id'].slice(BASE.length)} <- ${b['@id'].slice(BASE.length)}`)))
    const expected = new Set<string>()
    for (const root of roots) {
      for (const [src, linked] of graph) {
        if (inside(src, root.path)) continue
        for (const target of linked) {
          if (!inside(target, root.path)) continue
          // The admin sees every target: a breach is in the entry of its target (its own, after the roots, when not asked about).
          expected.add(`${target} <- ${src}`)
        }
      }
    }
    const totals = res.json().slice(0, roots.length).map((e: any) => e.items_total)
    const expectedTotals = roots.map(r => objects.filter(o => o.path !== r.path && inside(o.path, r.path)).length)
    return JSON.stringify([...got].sort()) === JSON.stringify([...expected].sort()) && JSON.stringify(totals) === JSON.stringify(expectedTotals)
  }), { numRuns: 50 })
})
