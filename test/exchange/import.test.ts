import t from 'tap'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { build } from '../helper.js'
import { FILE_BYTES, item, PICTURE, runImport, smallSite, uid, writeExport } from './exports.js'

/** The import of a plone.exportimport export (core/exchange): what it keeps, idempotent by UID, resumable. */
const dashed = (hex: string): string => `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`

const { app, call, tokenFor } = await build(t)
const admin = await tokenFor('admin')
const site = smallSite()
// Redirects as plone.app.redirector keeps them (old path → new path): two sound, the others what no site could take.
const REDIRECTS = { '/old': '/docs', '/old-page': '/docs/page', '/outside': 'https://plone.org/', '/gone': '/nothing-here', '/docs': '/docs/page', '/a/../b': '/docs' }
const dir = writeExport(site.objects, { metadata: site.metadata, principals: site.principals, redirects: REDIRECTS })
const count = async (sql: string): Promise<number> => Number((await app.db.query<{ n: string }>(sql)).rows[0].n)

t.test('imports a small site of every type with its users, roles, states and blobs', async t => {
  const report = await runImport(app, dir)
  t.equal(report.counts['objects imported'], 8, JSON.stringify(report))
  t.equal(report.counts['users imported'], 2)
  t.equal(report.counts['groups imported'], 1)
  t.equal(report.counts['redirects imported'], 2)
  const refused = report.problems.filter(p => p.kind.startsWith('redirect not imported'))
  t.same(refused.map(p => [p.kind, p.examples.sort()]).sort(), [
    ['redirect not imported: bad old path', ['/a/../b']],
    ['redirect not imported: old path taken', ['/docs']],
    ['redirect not imported: target not in the site', ['/gone', '/outside']]
  ], 'the others are reported, not dropped')

  const login = await call('POST', '/@login', { login: 'editor', password: 'editor-secret' })
  t.equal(login.statusCode, 200, 'a Plone SSHA password logs in')
  const token = login.json().token as string
  const hash = (await app.db.query<{ password_hash: string }>("SELECT password_hash FROM users WHERE id = 'editor'")).rows[0].password_hash
  t.match(hash, /^scrypt\$/, 'and is rehashed with the service\'s own at its first success')
  t.equal((await call('POST', '/@login', { login: 'editor', password: 'editor-secret' })).statusCode, 200, 'the new hash verifies')
  t.equal((await call('POST', '/@login', { login: 'reader', password: 'wrong' })).statusCode, 401)

  const redirected = await call('GET', '/old-page/@history?x=1', undefined, admin)
  t.same([redirected.statusCode, redirected.headers.location], [302, 'http://localhost:80/docs/page/@history?x=1'], 'an old path redirects to the imported object')
  t.equal((await call('GET', '/old', undefined, admin)).headers.location, 'http://localhost:80/docs')
  const docs = (await call('GET', '/docs', undefined, admin)).json()
  t.equal(docs.UID, dashed(uid(1)))
  t.equal(docs.review_state, 'published')
  t.same(docs.items.map((i: { '@id': string }) => i['@id'].split('/').pop()), ['slides.pdf', 'picture.png', 'link', 'event', 'news', 'page'], 'siblings keep their exported order')
  t.equal(docs.created, '2024-02-13T18:15:56+00:00')
  const page = (await call('GET', '/docs/page')).json()
  t.equal(page.modified, '2024-02-14T22:22:11+00:00')
  t.same(page.creators, ['editor'])
  t.match(JSON.stringify(page.blocks), /docs\/news/, 'a link by UID resolves to the object it names')
  const history = (await call('GET', '/docs/page/@history', undefined, token)).json()
  t.ok(Array.isArray(history) && history.some((h: { action: string | null }) => h.action === 'publish'), 'the workflow history is kept')

  t.equal((await call('GET', '/private')).statusCode, 401, 'a private folder stays private')
  const reader = await call('POST', '/@login', { login: 'reader', password: 'reader-secret' })
  t.equal((await call('GET', '/private', undefined, reader.json().token)).statusCode, 200, 'a local Reader role is kept')
  const row = (await app.db.query<{ owner: string, local_roles_block: boolean }>('SELECT owner, local_roles_block FROM content WHERE path = $1', ['/private'])).rows[0]
  t.same(row, { owner: 'editor', local_roles_block: true }, 'Owner becomes the owner; a blocked inheritance stays blocked')

  const image = await call('GET', '/docs/picture.png/@@images/image', undefined, token)
  t.equal(image.statusCode, 200)
  t.same(image.rawPayload, PICTURE)
  const file = await call('GET', '/docs/slides.pdf/@@download/file', undefined, token)
  t.equal(file.statusCode, 200)
  t.ok(file.rawPayload.equals(FILE_BYTES), 'a 3 MB file arrives whole, streamed from disk')
  t.equal(await count('SELECT count(*) AS n FROM index_outbox'), await count('SELECT count(*) AS n FROM index_outbox'), 'the outbox is readable')
  t.equal(await count('SELECT count(*) AS n FROM catalog'), await count('SELECT count(*) AS n FROM content') - 1, 'every object but the site root has its catalogue row')
})

t.test('a second run updates by UID and never duplicates', async t => {
  const before = await count('SELECT count(*) AS n FROM content')
  const changed = smallSite()
  changed.objects[1].data.title = 'Renamed page'
  const again = writeExport(changed.objects, { metadata: changed.metadata, principals: changed.principals })
  const report = await runImport(app, again)
  t.equal(report.counts['objects imported'], 8, JSON.stringify(report))
  t.equal(await count('SELECT count(*) AS n FROM content'), before)
  t.equal(await count('SELECT count(*) AS n FROM workflow_history'), await count('SELECT count(DISTINCT (uid, seq)) AS n FROM workflow_history'))
  t.equal((await call('GET', '/docs/page')).json().title, 'Renamed page')
  t.equal((await call('POST', '/@login', { login: 'editor', password: 'editor-secret' })).statusCode, 200, 'a second import leaves a rehashed password alone')
})

t.test('an interrupted import leaves whole objects, and a second run completes it', async t => {
  const { app, call } = await build(t)
  const site = smallSite()
  const path = writeExport(site.objects, { metadata: site.metadata, principals: site.principals })
  const count = async (sql: string): Promise<number> => Number((await app.db.query<{ n: string }>(sql)).rows[0].n)
  const before = await count('SELECT count(*) AS n FROM content')
  await t.rejects(runImport(app, path, { batchObjects: 3, afterBatch: () => { throw new Error('killed') } }), /killed/)
  const partial = await count('SELECT count(*) AS n FROM content') - before
  t.ok(partial >= 1 && partial < 8, `stopped after a batch (${partial} objects)`)
  t.equal(await count('SELECT count(*) AS n FROM catalog'), await count('SELECT count(*) AS n FROM content') - 1, 'each written object has its catalogue row')
  const report = await runImport(app, path)
  t.same(report.problems.map(p => p.kind), ['workflow state not kept'], JSON.stringify(report))
  t.equal(await count('SELECT count(*) AS n FROM content'), before + 8)
  t.equal((await call('GET', '/docs/page')).statusCode, 200)
})

t.test('an id the site holds under another UID, and an object its type refuses, are left out alone and reported', async t => {
  const before = await count('SELECT count(*) AS n FROM content')
  const dir = writeExport([
    { data: item(101, 'Folder', 'docs', null) },
    { data: item(102, 'Document', 'under-taken', 101) },
    { data: item(103, 'Link', 'no-url', null) },
    { data: item(104, 'Document', 'fine', null) }
  ])
  // One batch; then the taken folder written while its page is read (batches of 3: the page next); then one at a time.
  for (const batchObjects of [undefined, 3, 1]) {
    const report = await runImport(app, dir, { batchObjects })
    const kinds = Object.fromEntries(report.problems.map(p => [p.kind, p.count]))
    t.same(kinds, { 'id taken in the site': 1, 'parent not imported': 1, 'invalid object': 1 }, `batches of ${batchObjects ?? 'up to 200'}: ${JSON.stringify(report)}`)
    t.equal(await count('SELECT count(*) AS n FROM content'), before + 1)
  }
  t.equal((await call('GET', '/docs', undefined, admin)).json().UID, dashed(uid(1)), 'the site\'s object stays')
  t.equal((await call('GET', '/fine', undefined, admin)).statusCode, 200)
})

t.test('redirects kept under the exported site\'s own path (/Plone/…) lose it; a second import replaces them', async t => {
  const site = smallSite()
  const root = { data: { '@id': 'http://localhost:8080/Plone', '@type': 'Plone Site', UID: 'a85d0294bdbb41cabb03ff81e6aeb302', title: 'Plone site' }, folder: 'plone_site_root' }
  const physical = writeExport([root, ...site.objects], { metadata: site.metadata, principals: site.principals, redirects: { '/Plone/older': '/Plone/docs/news', '/Plone/old': '/Plone/docs/event' } })
  const report = await runImport(app, physical)
  t.equal(report.counts['redirects imported'], 2, JSON.stringify(report))
  t.equal((await call('GET', '/older', undefined, admin)).headers.location, 'http://localhost:80/docs/news')
  t.equal((await call('GET', '/old', undefined, admin)).headers.location, 'http://localhost:80/docs/event', 'the first import\'s /old now leads where the second says')
  t.equal(await count("SELECT count(*) AS n FROM redirects WHERE path = '/old'"), 1)
})

t.test("the site root's fields and roles, as Plone exports them, become the home page; a root the service refuses is reported and left as it was", async t => {
  const before = (await call('GET', '/', undefined, admin)).json()
  // plone.exportimport's site root (its tests' base_import): the keys a root has that this one has not, empty.
  const ploneRoot = {
    '@id': '/Plone',
    '@type': 'Plone Site',
    UID: 'a85d0294bdbb41cabb03ff81e6aeb302',
    id: 'Plone',
    title: 'A Plone site',
    description: '',
    subjects: [],
    effective: null,
    exclude_from_nav: false,
    rights: '',
    language: '##DEFAULT##',
    blocks: { h: { '@type': 'title' }, p: { '@type': 'slate', plaintext: 'to the page', value: [{ type: 'p', children: [{ type: 'link', data: { url: `../resolveuid/${uid(2)}` }, children: [{ text: 'to the page' }] }] }] } },
    blocks_layout: { items: ['h', 'p'] },
    'exportimport.versions': {},
    'exportimport.conversation': [],
    workflow_history: {},
    review_state: null,
    parent: {}
  }
  const metadata = { ...site.metadata, local_roles: { ...site.metadata.local_roles as object, plone_site_root: { local_roles: { admin: ['Owner'], staff: ['Editor'] } } } }
  const report = await runImport(app, writeExport([{ data: ploneRoot, folder: 'plone_site_root' }, ...site.objects], { metadata, principals: site.principals }))
  t.equal(report.counts['site root imported'], 1, JSON.stringify(report))
  t.notOk(report.problems.some(p => p.kind.includes('Plone Site')), 'empty values of fields the root lacks lose nothing')
  const root = (await call('GET', '/', undefined, admin)).json()
  t.equal(root.title, 'A Plone site')
  t.same(root.blocks_layout, ploneRoot.blocks_layout)
  t.match(JSON.stringify(root.blocks.p), '"url":"http://localhost:80/docs/page"', 'its link by UID resolves to the page')
  t.match(JSON.stringify((await app.db.query("SELECT data FROM content WHERE path = '/'")).rows[0].data), `resolveuid/${dashed(uid(2))}`, 'and is kept by UID')
  const shared = (await call('GET', '/@sharing', undefined, admin)).json().entries.find((e: { id: string }) => e.id === 'staff')
  t.equal(shared?.roles.Editor, true, 'the group keeps its role on the root')
  t.equal((await app.db.query("SELECT owner FROM content WHERE path = '/'")).rows[0].owner, 'admin', 'the root keeps its owner')

  const refused = { ...ploneRoot, title: 'Never', subjects: ['kept nowhere'], blocks_layout: { items: 'not a list' } }
  const second = await runImport(app, writeExport([{ data: refused, folder: 'plone_site_root' }, ...site.objects], { metadata, principals: site.principals }))
  t.same(second.problems.filter(p => p.kind.includes('root') || p.kind.includes('Plone Site')).map(p => p.kind).sort(), ['field not in this service: Plone Site.subjects', 'site root not imported'], JSON.stringify(second))
  t.equal((await call('GET', '/', undefined, admin)).json().title, 'A Plone site', 'the root stays as it was')
  t.equal(second.counts['objects imported'], 8, 'the content is imported all the same')
  // The site as the other tests found it.
  t.equal((await call('PATCH', '/', { title: before.title, blocks: before.blocks, blocks_layout: before.blocks_layout }, admin)).statusCode, 204)
})

t.test('versions as plone.exportimport writes them (exportimport.versions, changeNote, changeActor) are kept; a bad one is reported; a second import replaces them', async t => {
  const version = (title: string, changeNote: string, modified: string): Record<string, unknown> => ({ '@type': 'Document', UID: uid(301), id: 'versioned', title, changeNote, changeActor: 'editor', modified, review_state: 'private' })
  const page = {
    ...item(301, 'Document', 'versioned', null, { title: 'Now' }),
    changeNote: 'the last edit',
    changeActor: 'admin',
    'exportimport.versions': {
      // Plone writes them newest first; the ids say their order.
      2: { ...version('Two', 'bad', '2024-02-14T12:00:00+00:00'), title: 42 },
      1: version('One', 'second', '2024-02-14T11:00:00+00:00'),
      0: version('Zero', 'Initial version', '2024-02-14T10:00:00+00:00'),
      x: version('Not a version', '', '2024-02-14T10:00:00+00:00')
    }
  }
  const export1 = writeExport([{ data: page }])
  for (const run of [1, 2]) {
    const report = await runImport(app, export1)
    t.same(report.problems.map(p => [p.kind, p.count]), [['version not imported', 2]], `run ${run}: ${JSON.stringify(report)}`)
    t.equal(report.counts['versions imported'], 3)
    const history = (await call('GET', '/versioned/@history', undefined, admin)).json() as Array<Record<string, unknown>>
    t.same(history.filter(e => e.type === 'versioning').map(e => [e.version, e.comments]), [[3, 'the last edit'], [1, 'second'], [0, 'Initial version']], `run ${run}: the versions, newest first`)
    t.same((await call('GET', '/versioned/@history/0', undefined, admin)).json().title, 'Zero')
    t.equal((await call('GET', '/versioned/@history/3', undefined, admin)).json().title, 'Now', 'the newest is the object as it is')
  }
  t.equal(await count(`SELECT count(*) AS n FROM versions WHERE uid = '${dashed(uid(301))}'`), 3, 'never duplicated')
  // The site's retention (VERSIONS_KEPT) bounds what an import keeps, as it bounds an edit's.
  const kept = app.content.versionsKept
  app.content.versionsKept = 2
  t.equal((await runImport(app, export1)).counts['versions imported'], 2)
  t.equal(await count(`SELECT count(*) AS n FROM versions WHERE uid = '${dashed(uid(301))}' AND version_id IN (1, 3)`), 2, 'the newest two')
  app.content.versionsKept = kept
  await runImport(app, export1)
  const reverted = await call('PATCH', '/versioned/@history', { version: 0 }, admin)
  t.equal(reverted.statusCode, 200, reverted.body)
  t.equal((await call('GET', '/versioned', undefined, admin)).json().title, 'Zero', 'an imported version reverts')
  t.equal((await call('DELETE', '/versioned', undefined, admin)).statusCode, 204)
})

t.test('what the service has nothing for (relations, translations, comments, portlets, default pages, local permissions, addable types) is reported by kind, entry by entry; the objects are imported', async t => {
  const comment = { '@type': 'Discussion Item', text: { data: 'Nice', 'mime-type': 'text/plain' }, author_username: 'editor' }
  const objects = [
    { data: item(401, 'Folder', 'left-out', null, { 'exportimport.constrains': { locally_allowed_types: ['Document'], immediately_addable_types: ['Document'] } }) },
    // Its comments are in discussions.json too: counted once.
    { data: item(402, 'Document', 'discussed', 401, { 'exportimport.conversation': [comment, comment] }) },
    { data: item(403, 'Document', 'commented', 401, { 'exportimport.conversation': [comment], 'exportimport.constrains': {} }) }
  ]
  const files = {
    'relations.json': JSON.stringify([{ from_attribute: 'relatedItems', from_uuid: uid(402), to_uuid: uid(403) }, { from_attribute: 'relatedItems', from_uuid: uid(403), to_uuid: uid(402) }]),
    'translations.json': JSON.stringify([{ canonical: uid(402), translations: { de: uid(403) } }]),
    'discussions.json': JSON.stringify({ [uid(402)]: { items_total: 2, items: [comment, comment] } }),
    'portlets.json': JSON.stringify([{ '@id': 'http://localhost:8080/Plone', portlets: { 'plone.leftcolumn': [{ type: 'portlets.Navigation' }], 'plone.footerportlets': [] } }])
  }
  const metadata = { default_page: { [uid(401)]: { default_page: 'discussed', default_page_uuid: uid(402) } }, local_permissions: { [uid(401)]: { 'Add portal content': { roles: ['Manager'], acquire: false } } } }
  const report = await runImport(app, writeExport(objects, { metadata, files }))
  t.equal(report.counts['objects imported'], 3, JSON.stringify(report))
  t.same(Object.fromEntries(report.problems.map(p => [p.kind, p.count])), {
    'not imported: relations': 2,
    'not imported: translations': 1,
    'not imported: comments': 3,
    'not imported: portlets': 1,
    'not imported: default pages': 1,
    'not imported: local permissions': 1,
    'not imported: constraints of addable types': 1
  })
  t.match(report.problems.find(p => p.kind === 'not imported: relations')?.examples, [`relations.json: relatedItems ${uid(402)} → ${uid(403)}`])
  t.equal((await call('DELETE', '/left-out', undefined, admin)).statusCode, 204)
})

t.test("__metadata__.json, which names every object, is read beyond a data.json's bound (as many bytes an object as the import may take objects)", async t => {
  // Over 1 MiB (runImport's jsonMaxBytes) of places of objects this export does not hold: the metadata of a large site.
  const ordering = Object.fromEntries(Array.from({ length: 40_000 }, (_, n) => [uid(100_000 + n), n]))
  const exported = writeExport([{ data: item(601, 'Folder', 'large-metadata', null) }], { metadata: { ordering: { ...ordering, [uid(601)]: 0 } } })
  const report = await runImport(app, exported)
  t.same([report.counts['objects imported'], report.problems], [1, []], JSON.stringify(report).slice(0, 500))
  t.equal((await call('DELETE', '/large-metadata', undefined, admin)).statusCode, 204)
})

t.test('an object is read again from its data.json when it is written (the import holds no content meanwhile): one changed since is left out and reported', async t => {
  const objects = [{ data: item(701, 'Folder', 'reread', null) }, { data: item(705, 'Document', 'first', 701) }, { data: item(702, 'Document', 'kept', 701, { title: 'As read' }) }, { data: item(703, 'Document', 'swapped', 701) }]
  const dir = writeExport(objects)
  // Two batches under way at once: the one after the folder's is read while the folder is written, the third once it is.
  const report = await runImport(app, dir, {
    batchObjects: 1,
    writers: 2,
    afterBatch: written => {
      if (written !== 1) return
      // After the folder's batch (the next one, 'first', is read while it is written): one page's file now says another UID, the other's only another title.
      writeFileSync(join(dir, 'content', uid(703), 'data.json'), JSON.stringify({ ...objects[3].data, UID: uid(704) }))
      writeFileSync(join(dir, 'content', uid(702), 'data.json'), JSON.stringify({ ...objects[2].data, title: 'As written' }))
    }
  })
  t.same(report.problems.map(p => [p.kind, p.examples]), [['changed while imported', [`${uid(703)}/data.json`]]], JSON.stringify(report))
  t.equal(report.counts['objects imported'], 3)
  t.equal((await call('GET', '/reread/kept', undefined, admin)).json().title, 'As written', 'what is written is what the file holds then')
  t.equal((await call('GET', '/reread/swapped', undefined, admin)).statusCode, 404)
  t.equal((await call('DELETE', '/reread', undefined, admin)).statusCode, 204)
})

t.test('batches written side by side (several writers) keep each folder\'s exported order and leave out what a refused folder held', async t => {
  for (const [run, writers] of [1, 2, 4].entries()) {
    const base = 1000 + run * 100
    const objects: Array<{ data: Record<string, unknown> }> = []
    const ordering: Record<string, number> = {}
    for (const [f, name] of ['left', 'refused', 'right'].entries()) {
      const folder = base + f * 20
      // The middle folder's title is no text: it is refused, and its children with it (in later batches, written meanwhile).
      objects.push({ data: item(folder, 'Folder', `${name}-${run}`, null, name === 'refused' ? { title: 42 } : {}) })
      ordering[uid(folder)] = f
      // Children whose ids sort against their exported order: the order is the export's, not the ids'.
      for (let c = 1; c <= 7; c++) {
        objects.push({ data: item(folder + c, 'Document', `page-${8 - c}`, folder) })
        ordering[uid(folder + c)] = c - 1
      }
    }
    const before = await count('SELECT count(*) AS n FROM content')
    const report = await runImport(app, writeExport(objects, { metadata: { ordering } }), { batchObjects: 2, writers })
    const kinds = Object.fromEntries(report.problems.map(p => [p.kind, p.count]))
    t.same([report.counts['objects imported'], kinds], [16, { 'invalid object': 1, 'parent not imported': 7 }], `${writers} writer(s): ${JSON.stringify(report)}`)
    t.equal(await count('SELECT count(*) AS n FROM content'), before + 16)
    for (const name of ['left', 'right']) {
      const listed = (await call('GET', `/${name}-${run}`, undefined, admin)).json()
      t.same(listed.items.map((i: { '@id': string }) => i['@id'].split('/').pop()), ['page-7', 'page-6', 'page-5', 'page-4', 'page-3', 'page-2', 'page-1'], `${writers} writer(s): /${name}-${run} in its exported order`)
    }
    t.equal((await call('GET', `/refused-${run}`, undefined, admin)).statusCode, 404)
    t.equal(await count('SELECT count(*) AS n FROM catalog'), await count('SELECT count(*) AS n FROM content') - 1, 'each written object has its catalogue row')
  }
})
