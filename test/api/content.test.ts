import t from 'tap'
import { build, talkBody } from '../helper.js'

/** Content CRUD (docs/api.md) on one app: create, read, update, delete, listings. */
t.test('content API', async t => {
  const { app, call, tokenFor } = await build(t)
  const admin = await tokenFor('admin')
  const jane = await tokenFor('jane')
  const pathOf = (url: unknown): string => new URL(String(url)).pathname
  const rowCounts = async (): Promise<{ content: number, catalog: number }> =>
    (await app.db.query<{ content: number, catalog: number }>('SELECT (SELECT count(*) FROM content) AS content, (SELECT count(*) FROM catalog) AS catalog')).rows[0]

  t.test('POST creates: 201, Location, the new object', async t => {
    const res = await call('POST', '/talks', talkBody({ title: 'Create me', speaker: 'Jane' }), jane)
    t.equal(res.statusCode, 201, res.body)
    t.equal(res.headers.location, 'http://localhost:80/talks/create-me')
    const body = res.json()
    t.equal(body['@id'], res.headers.location)
    const read = await call('GET', '/talks/create-me', undefined, jane)
    t.same(body, read.json(), 'the body is the object as GET gives it')
  })

  t.test('ids come from titles, with -1, -2 on clashes, unless given', async t => {
    const ids: string[] = []
    for (let i = 0; i < 3; i++) ids.push((await call('POST', '/talks', talkBody({ title: 'Ünïcode: Café & Crème!' }), jane)).json().id)
    t.same(ids, ['unicode-cafe-creme', 'unicode-cafe-creme-1', 'unicode-cafe-creme-2'])
    const given = await call('POST', '/talks', talkBody({ id: 'my-own-id', title: 'Something else' }), jane)
    t.equal(given.statusCode, 201)
    t.equal(given.headers.location, 'http://localhost:80/talks/my-own-id')
    const before = await rowCounts()
    const taken = await call('POST', '/talks', talkBody({ id: 'my-own-id' }), jane)
    t.equal(taken.statusCode, 409, taken.body)
    t.equal(taken.json().type, 'Conflict')
    t.same(await rowCounts(), before, 'nothing was written')
    const invalid = await call('POST', '/talks', talkBody({ id: '../etc' }), jane)
    t.equal(invalid.statusCode, 400)
    t.equal(invalid.json().errors[0].field, 'id')
  })

  t.test('simultaneous creates in one folder never clash', async t => {
    const together = async (body: Record<string, unknown>): Promise<Array<{ statusCode: number, id?: string }>> =>
      (await Promise.all(Array.from({ length: 4 }, async () => await call('POST', '/talks', body, jane))))
        .map(r => ({ statusCode: r.statusCode, ...(r.statusCode === 201 ? { id: r.json().id } : {}) }))
    const byTitle = await together(talkBody({ title: 'Same time' }))
    t.same(byTitle.map(r => r.statusCode), [201, 201, 201, 201], JSON.stringify(byTitle))
    t.same(byTitle.map(r => r.id).sort(), ['same-time', 'same-time-1', 'same-time-2', 'same-time-3'])
    const byId = await together(talkBody({ id: 'same-id' }))
    t.same(byId.map(r => r.statusCode).sort(), [201, 409, 409, 409], 'one wins, the others are told the id is taken')
  })

  t.test('GET gives every key of the contract', async t => {
    const created = await call('POST', '/talks', talkBody({ title: 'Shape' }), jane)
    const talk = (await call('GET', pathOf(created.headers.location), undefined, jane)).json()
    for (const key of ['@id', '@type', 'UID', 'id', 'title', 'description', 'review_state', 'created', 'modified', 'effective', 'expires',
      'creators', 'subjects', 'parent', 'is_folderish', 'layout', 'type_of_talk', 'details', 'audience', 'room', 'speaker', 'email',
      'image', 'speaker_biography', 'start', 'end']) {
      t.ok(key in talk, `has ${key}`)
    }
    t.match(talk, {
      '@type': 'talk',
      id: 'shape',
      review_state: 'private',
      creators: ['jane'],
      subjects: [],
      speaker: null,
      details: null,
      effective: null,
      expires: null,
      is_folderish: false,
      layout: 'talkview',
      UID: /^[0-9a-f-]{36}$/,
      created: /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00$/
    })
    t.same(talk.parent, { '@id': 'http://localhost:80/talks', '@type': 'folder', title: 'Talks', description: '', review_state: 'published', type_title: 'Folder' })
    const folder = (await call('GET', '/talks', undefined, jane)).json()
    t.match(folder, { '@type': 'folder', is_folderish: true, items: Array, items_total: Number })
    t.same(Object.keys(folder.items[0]).sort(), ['@id', '@type', 'description', 'review_state', 'title', 'type_title'])
  })

  t.test('PATCH: 204, or 200 and the object with Prefer: return=representation', async t => {
    const path = pathOf((await call('POST', '/talks', talkBody({ title: 'Patch me' }), jane)).headers.location)
    const plain = await call('PATCH', path, { title: 'Patched' }, jane)
    t.equal(plain.statusCode, 204)
    t.equal(plain.body, '')
    const represented = await call('PATCH', path, { speaker: 'Jane' }, jane, { prefer: 'return=representation' })
    t.equal(represented.statusCode, 200)
    t.match(represented.json(), { title: 'Patched', speaker: 'Jane', id: 'patch-me' })
    const invalid = await call('PATCH', path, { title: 'Not stored', email: 'nope' }, jane)
    t.equal(invalid.statusCode, 400)
    t.equal((await call('GET', path, undefined, jane)).json().title, 'Patched', 'a refused PATCH stores nothing')
  })

  t.test('ETag and If-Match', async t => {
    const path = pathOf((await call('POST', '/talks', talkBody({ title: 'Locked' }), jane)).headers.location)
    t.equal((await call('PATCH', path, { speaker: 'First' }, jane)).statusCode, 204)
    const first = await call('GET', path, undefined, jane)
    const etag = String(first.headers.etag)
    t.match(etag, /^"[^"]+"$/)
    const current = await call('PATCH', path, { title: 'With the current ETag' }, jane, { 'if-match': etag })
    t.equal(current.statusCode, 204, current.body)
    const stale = await call('PATCH', path, { title: 'With a stale ETag' }, jane, { 'if-match': etag })
    t.equal(stale.statusCode, 409, stale.body)
    t.equal(stale.json().type, 'Conflict')
    t.equal((await call('GET', path, undefined, jane)).json().title, 'With the current ETag')
  })

  t.test('DELETE: 204, then 404', async t => {
    const path = pathOf((await call('POST', '/talks', talkBody({ title: 'Delete me' }), jane)).headers.location)
    const deleted = await call('DELETE', path, undefined, jane)
    t.equal(deleted.statusCode, 204)
    const gone = await call('GET', path, undefined, jane)
    t.equal(gone.statusCode, 404)
    t.equal(gone.json().type, 'NotFound')
    const { rows } = await app.db.query("SELECT count(*) AS n FROM catalog WHERE path_string = '/talks/delete-me'")
    t.equal(rows[0].n, 0, 'the catalogue row went with it')
  })

  t.test('POST errors: not a folder, unknown or missing @type', async t => {
    const path = pathOf((await call('POST', '/talks', talkBody({ title: 'Leaf' }), jane)).headers.location)
    const intoTalk = await call('POST', path, talkBody(), jane)
    t.equal(intoTalk.statusCode, 405, intoTalk.body)
    t.equal(intoTalk.json().type, 'MethodNotAllowed')
    const unknown = await call('POST', '/talks', talkBody({ '@type': 'Bookshelf' }), jane)
    t.equal(unknown.statusCode, 403)
    t.match(unknown.json(), { type: 'Forbidden', message: /Bookshelf/ })
    const missing = await call('POST', '/talks', talkBody({ '@type': undefined }), jane)
    t.equal(missing.statusCode, 400)
    t.match(missing.json(), { type: 'BadRequest', message: /@type/ })
    for (const body of [talkBody(), talkBody({ '@type': 'Bookshelf' }), talkBody({ title: undefined })]) {
      t.equal((await call('POST', '/talks', body)).statusCode, 401, 'anonymous callers log in first, whatever they send')
    }
    const inRoot = await call('POST', '/', talkBody(), jane)
    t.equal(inRoot.statusCode, 403, 'a member may not add to the site root')
    t.equal(inRoot.json().type, 'Forbidden')
  })

  t.test('a failed write leaves no row in content nor catalogue', async t => {
    const before = await rowCounts()
    const invalid = await call('POST', '/talks', talkBody({ title: 'Never stored', audience: ['Nobody'] }), jane)
    t.equal(invalid.statusCode, 400)
    t.same(await rowCounts(), before)
    const { rows } = await app.db.query(`SELECT (SELECT count(*) FROM content WHERE data->>'title' = 'Never stored') AS content,
      (SELECT count(*) FROM catalog WHERE "Title" = 'Never stored') AS catalog`)
    t.same(rows[0], { content: 0, catalog: 0 })
  })

  t.test('folder listings are batched', async t => {
    // A folder of its own, so that the other subtests' talks do not count.
    const folder = await call('POST', '/', { '@type': 'folder', title: 'Batch' }, admin)
    t.equal(folder.statusCode, 201, folder.body)
    t.equal((await call('POST', '/batch/@workflow/publish', {}, admin)).statusCode, 200)
    for (let i = 1; i <= 30; i++) {
      const res = await call('POST', '/batch', talkBody({ title: `Talk ${String(i).padStart(2, '0')}` }), admin)
      t.equal((await call('POST', `${pathOf(res.headers.location)}/@workflow/publish`, {}, admin)).statusCode, 200)
    }
    const first = (await call('GET', '/batch')).json()
    t.equal(first.items_total, 30)
    t.equal(first.items.length, 25, 'pages of 25 by default')
    t.equal(first.items[0].title, 'Talk 01', 'in folder order')
    t.same(first.batching, {
      '@id': 'http://localhost:80/batch',
      first: 'http://localhost:80/batch?b_start=0',
      last: 'http://localhost:80/batch?b_start=25',
      next: 'http://localhost:80/batch?b_start=25'
    })
    const page = (await call('GET', '/batch?b_size=10&b_start=10')).json()
    t.same(page.items.map((i: { title: string }) => i.title), Array.from({ length: 10 }, (_, i) => `Talk ${i + 11}`))
    t.same(page.batching, {
      '@id': 'http://localhost:80/batch?b_size=10&b_start=10',
      first: 'http://localhost:80/batch?b_start=0&b_size=10',
      last: 'http://localhost:80/batch?b_start=20&b_size=10',
      prev: 'http://localhost:80/batch?b_start=0&b_size=10',
      next: 'http://localhost:80/batch?b_start=20&b_size=10'
    })
    const all = (await call('GET', '/batch?b_size=30')).json()
    t.equal(all.items.length, 30)
    t.notOk('batching' in all, 'no batching on a single page')
    t.equal((await call('GET', '/batch?b_size=ten')).statusCode, 400)
  })
})
