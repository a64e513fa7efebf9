import t from 'tap'
import { build, talkBody } from '../helper.js'
import { png, upload } from '../image-samples.js'

/**
 * `POST <folder>/@import` (docs/api.md, "Bulk import"): many objects, each
 * created as POST creates it and taken through its transitions as
 * `@workflow` would, in one transaction: all or nothing.
 */
const BASE = 'http://localhost:80'
const { app, call, tokenFor } = await build(t, { env: { IMPORT_MAX_ITEMS: '50' } })
const admin = await tokenFor('admin')
const contributor = await tokenFor('connie', ['Contributor'])
const member = await tokenFor('mia', ['Member'])

const pathOf = (url: string): string => new URL(url).pathname
const talks = (n: number, prefix: string, extra: Record<string, unknown> = {}): Array<Record<string, unknown>> =>
  Array.from({ length: n }, (_, i) => talkBody({ title: `${prefix} ${i}`, ...extra }))

/** What anonymous and the catalogue see of /talks, and what the database holds: nothing may change after a refused import. */
async function snapshot (): Promise<{ folder: number, search: number, adminSearch: number, content: number, catalog: number, history: number }> {
  const count = async (sql: string): Promise<number> => Number((await app.db.query<{ n: string }>(sql)).rows[0].n)
  return {
    folder: (await call('GET', '/talks?b_size=1')).json().items_total,
    search: (await call('GET', '/@search?portal_type=talk&b_size=1')).json().items_total,
    adminSearch: (await call('GET', '/@search?portal_type=talk&b_size=1', undefined, admin)).json().items_total,
    content: await count('SELECT count(*) AS n FROM content'),
    catalog: await count('SELECT count(*) AS n FROM catalog'),
    history: await count('SELECT count(*) AS n FROM workflow_history')
  }
}

t.test('imports talks, published or not, in one request', async t => {
  const before = await snapshot()
  const items = [
    ...talks(5, 'Published import', { transitions: ['publish'] }),
    ...talks(3, 'Private import')
  ]
  const res = await call('POST', '/talks/@import', { items }, admin)
  t.equal(res.statusCode, 201, res.body)
  const body = res.json()
  t.equal(body['@id'], `${BASE}/talks/@import`)
  t.equal(body.items_total, 8)
  t.same(body.items.map((i: { title: string }) => i.title), items.map(i => i.title), 'in item order')
  t.same(body.items.map((i: { review_state: string }) => i.review_state), [...Array(5).fill('published'), ...Array(3).fill('private')])
  t.same(Object.keys(body.items[0]).sort(), ['@id', '@type', 'UID', 'id', 'review_state', 'title'])
  t.equal(body.items[0]['@id'], `${BASE}/talks/published-import-0`, 'ids from titles')

  const after = await snapshot()
  t.equal(after.folder, before.folder + 5, 'anonymous sees exactly the published ones in the folder')
  t.equal(after.search, before.search + 5, 'and in @search')
  t.equal(after.adminSearch, before.adminSearch + 8, 'a Manager sees all of them')
  const found = (await call('GET', '/@search?SearchableText=published&portal_type=talk')).json()
  t.equal(found.items_total, 5, 'full text finds the published ones (catalogue)')

  const published = pathOf(body.items[0]['@id'])
  const talk = (await call('GET', published, undefined, admin)).json()
  t.equal(talk.review_state, 'published')
  t.ok(talk.effective, 'effective set by the publication')
  t.ok(Math.abs(Date.parse(talk.effective) - Date.now()) < 60_000, 'effective is now')
  t.same(talk.creators, ['admin'], 'the caller is the creator')
  const history = (await call('GET', `${published}/@workflow`, undefined, admin)).json().history
  t.same(history.map((e: { action: string | null, review_state: string }) => [e.action, e.review_state]), [[null, 'private'], ['publish', 'published']], 'history: create, publish')
  const privatePath = pathOf(body.items[5]['@id'])
  const privateTalk = (await call('GET', privatePath, undefined, admin)).json()
  t.equal(privateTalk.effective, null, 'no effective without publication')
  t.equal((await call('GET', privatePath)).statusCode, 401, 'anonymous may not see a private one')
  t.same((await call('GET', `${privatePath}/@workflow`, undefined, admin)).json().history.map((e: { action: string | null }) => e.action), [null])
  const searched = (await call('GET', '/@search?SearchableText=import&portal_type=talk&sort_on=created&b_size=100', undefined, admin)).json()
  t.same(searched.items.map((i: { title: string }) => i.title), items.map(i => i.title), 'created in item order')
  const positions = (await app.db.query<{ position: number }>("SELECT position FROM content WHERE path LIKE '/talks/%' ORDER BY position")).rows.map(r => r.position)
  t.equal(new Set(positions).size, positions.length, 'positions unique')
})

t.test('an item is created exactly as POST creates it', async t => {
  const res = await call('POST', '/++api++/talks/@import', {
    items: [{ ...talkBody({ title: 'Same as POST', details: '<p>Hello <script>x</script>there</p>', subjects: ['a', 'b'] }), id: 'explicit-id', review_state: 'published', UID: 'ignored' }]
  }, admin)
  t.equal(res.statusCode, 201, res.body)
  t.equal(res.json().items[0].id, 'explicit-id')
  t.equal(res.json().items[0].review_state, 'private', 'review_state in the body is ignored, as in write bodies')
  const created = (await call('GET', '/talks/explicit-id', undefined, admin)).json()
  t.same(created.details, { data: '<p>Hello there</p>', 'content-type': 'text/html', encoding: 'utf-8' }, 'rich text sanitised as POST does')
  t.same(created.subjects, ['a', 'b'])
  t.not(created.UID, 'ignored')
  const single = (await call('POST', '/talks', talkBody({ title: 'Same as POST' }), admin)).json()
  t.equal(single.id, 'same-as-post', 'a title is still free for a later create')
  const again = await call('POST', '/talks/@import', { items: talks(2, 'Same as POST').map(i => ({ ...i, title: 'Same as POST' })) }, admin)
  t.equal(again.statusCode, 201, again.body)
  t.same(again.json().items.map((i: { id: string }) => i.id), ['same-as-post-1', 'same-as-post-2'], 'taken ids get the next free one, within the batch too')
})

t.test('virtual hosting addresses the answer', async t => {
  const res = await call('POST', '/VirtualHostBase/https/example.org:443/++api++/VirtualHostRoot/talks/@import', { items: talks(1, 'Hosted') }, admin)
  t.equal(res.statusCode, 201, res.body)
  t.equal(res.json()['@id'], 'https://example.org/talks/@import')
  t.equal(res.json().items[0]['@id'], 'https://example.org/talks/hosted-0')
})

t.test('a bad item anywhere: 4xx naming it, nothing written', async t => {
  await call('POST', '/talks', talkBody({ title: 'Taken', id: 'taken' }), admin)
  const good = talks(4, 'Never written', { transitions: ['publish'] })
  const cases: Array<{ name: string, bad: Record<string, unknown>, token?: string, status: number, type: string, field?: string, message?: RegExp }> = [
    { name: 'validation', bad: talkBody({ title: '' }), status: 400, type: 'BadRequest', field: 'items/2/title' },
    { name: 'wrong type of a field', bad: talkBody({ audience: 'Beginner' }), status: 400, type: 'BadRequest', field: 'items/2/audience' },
    { name: 'unknown field', bad: talkBody({ nonsense: 1 }), status: 400, type: 'BadRequest', field: 'items/2/nonsense' },
    { name: 'no @type', bad: talkBody({ '@type': undefined }), status: 400, type: 'BadRequest', field: 'items/2/@type' },
    { name: 'unknown type', bad: talkBody({ '@type': 'nope' }), status: 403, type: 'Forbidden', message: /items\/2/ },
    { name: 'the site root as a type', bad: talkBody({ '@type': 'Plone Site' }), status: 403, type: 'Forbidden', message: /items\/2/ },
    { name: 'a field the caller may not write', bad: talkBody({ room: 'Auditorium' }), token: contributor, status: 403, type: 'Forbidden', message: /items\/2.*room/ },
    { name: 'taken id', bad: talkBody({ id: 'taken' }), status: 409, type: 'Conflict', message: /items\/2.*taken/ },
    { name: 'a transition that does not exist', bad: talkBody({ transitions: ['fly'] }), status: 400, type: 'WorkflowException', message: /items\/2/ },
    { name: 'a transition not available from the state', bad: talkBody({ transitions: ['publish', 'publish'] }), status: 400, type: 'WorkflowException', message: /items\/2/ },
    { name: 'transitions not a list', bad: talkBody({ transitions: 'publish' }), status: 400, type: 'BadRequest', field: 'items/2/transitions' },
    { name: 'a Contributor asking publish', bad: talkBody({ transitions: ['publish'] }), token: contributor, status: 400, type: 'WorkflowException', message: /items\/2.*publish/ },
    { name: 'an item that is not an object', bad: ['a list'] as unknown as Record<string, unknown>, status: 400, type: 'BadRequest', field: 'items/2' }
  ]
  for (const c of cases) {
    const before = await snapshot()
    const items = [...(c.token === contributor ? good.map(({ transitions: _, ...i }) => i) : good).slice(0, 2), c.bad, ...good.slice(2)]
    const res = await call('POST', '/talks/@import', { items }, c.token ?? admin)
    t.equal(res.statusCode, c.status, `${c.name}: ${res.statusCode} ${res.body}`)
    const body = res.json()
    t.equal(body.type, c.type, `${c.name}: type`)
    if (c.field !== undefined) t.ok(body.errors?.some((e: { field: string }) => e.field === c.field), `${c.name}: errors name ${c.field}`)
    if (c.message !== undefined) t.match(body.message, c.message, `${c.name}: the message names the item`)
    t.same(await snapshot(), before, `${c.name}: nothing written`)
  }

  const before = await snapshot()
  const twice = await call('POST', '/talks/@import', { items: [talkBody({ id: 'twice' }), talkBody({ id: 'twice' })] }, admin)
  t.equal(twice.statusCode, 409, 'the same explicit id twice in a batch → 409')
  t.match(twice.json().message, /items\/1/)
  const several = await call('POST', '/talks/@import', { items: [talkBody({ title: '' }), talkBody(), talkBody({ audience: 1 })] }, admin)
  t.equal(several.statusCode, 400)
  t.same(several.json().errors.map((e: { field: string }) => e.field), ['items/0/title', 'items/2/audience'], 'every bad item at once')
  t.same(await snapshot(), before, 'nothing written')
})

t.test('the batch: limits and shape', async t => {
  const before = await snapshot()
  const cases: Array<[string, unknown, string]> = [
    ['empty items', { items: [] }, 'items'],
    ['too many items', { items: talks(51, 'Too many') }, 'items'],
    ['items not a list', { items: { 0: talkBody() } }, 'items'],
    ['items missing', {}, 'items'],
    ['an unknown key', { items: talks(1, 'x'), extra: 1 }, 'extra'],
    ['a list as body', [talkBody()], '']
  ]
  for (const [name, body, field] of cases) {
    const res = await call('POST', '/talks/@import', body, admin)
    t.equal(res.statusCode, 400, `${name}: ${res.body}`)
    t.equal(res.json().type, 'BadRequest')
    if (field !== '') t.ok(res.json().errors.some((e: { field: string }) => e.field === field), `${name}: names ${field}`)
  }
  const max = await call('POST', '/talks/@import', { items: talks(50, 'Exactly the limit') }, admin)
  t.equal(max.statusCode, 201, 'IMPORT_MAX_ITEMS items are fine')
  t.equal(max.json().items_total, 50)
  t.equal((await snapshot()).content, before.content + 50)
})

t.test('who may import', async t => {
  const before = await snapshot()
  const anonymous = await call('POST', '/talks/@import', { items: talks(2, 'Anonymous') })
  t.equal(anonymous.statusCode, 401, 'anonymous → 401')
  t.equal(anonymous.json().type, 'Unauthorized')
  const root = await call('POST', '/@import', { items: talks(2, 'Member at the root') }, member)
  t.equal(root.statusCode, 403, 'a member without the add permission → 403')
  t.equal(root.json().type, 'Forbidden')
  const onTalk = await call('POST', '/talks/taken/@import', { items: talks(1, 'Inside a talk') }, admin)
  t.equal(onTalk.statusCode, 405, 'not a folder → 405')
  const missing = await call('POST', '/nowhere/@import', { items: talks(1, 'Nowhere') }, admin)
  t.equal(missing.statusCode, 404)
  t.same(await snapshot(), before, 'nothing written')
  const asContributor = await call('POST', '/talks/@import', { items: talks(2, 'By a contributor', { transitions: ['submit'] }) }, contributor)
  t.equal(asContributor.statusCode, 201, asContributor.body)
  t.same(asContributor.json().items.map((i: { review_state: string }) => i.review_state), ['pending', 'pending'], 'a Contributor may submit what they import')
  const mine = (await call('GET', pathOf(asContributor.json().items[0]['@id']), undefined, contributor)).json()
  t.same(mine.creators, ['connie'], 'and is its creator')
})

t.test('imports and creates at once: positions and ids unique, everything acknowledged present', async t => {
  const made = await call('POST', '/talks', { '@type': 'folder', title: 'Concurrent imports' }, admin)
  const folder = pathOf(made.json()['@id'])
  const imports = Array.from({ length: 6 }, async (_, n) => await call('POST', `${folder}/@import`, { items: talks(20, 'Same title', { transitions: n % 2 === 0 ? ['publish'] : [] }) }, admin))
  const creates = Array.from({ length: 20 }, async () => await call('POST', folder, talkBody({ title: 'Same title 3' }), admin))
  const results = await Promise.all([...imports, ...creates])
  t.same([...new Set(results.map(r => r.statusCode))], [201], 'every request 201')
  const acknowledged = results.flatMap(r => r.json().items?.map((i: { UID: string }) => i.UID) ?? [r.json().UID])
  t.equal(acknowledged.length, 140)
  const { rows } = await app.db.query<{ uid: string, id: string, position: number }>('SELECT c.uid, c.id, c.position FROM content c JOIN content f ON c.parent_uid = f.uid WHERE f.path = $1', [folder])
  t.equal(rows.length, 140, 'every acknowledged object present')
  t.same(new Set(rows.map(r => r.uid)), new Set(acknowledged))
  t.equal(new Set(rows.map(r => r.id)).size, 140, 'ids unique')
  t.equal(new Set(rows.map(r => r.position)).size, 140, 'positions unique')
  t.equal((await call('GET', `${folder}?b_size=1`, undefined, admin)).json().items_total, 140, 'the folder lists all of them')
  const catalogued = (await app.db.query('SELECT 1 FROM catalog JOIN content USING (uid) WHERE content.path LIKE $1', [`${folder}/%`])).rowCount
  t.equal(catalogued, 140, 'every one catalogued')
})

t.test('hostile input through the endpoint: always 4xx in the error shape, never 500, nothing written', async t => {
  const before = await snapshot()
  const item = JSON.stringify(talkBody({ title: 'Hostile' }))
  const nested = (depth: number): string => '['.repeat(depth) + '1' + ']'.repeat(depth)
  // Raw JSON texts, so that `__proto__` is a key of the document, not an assignment in this file.
  const bodies = [
    '{"__proto__": {"Anonymous": ["Manager"]}, "items": []}',
    `{"items": [${item}], "__proto__": {"x": 1}}`,
    `{"items": [${item}], "constructor": {"prototype": {"x": 1}}}`,
    `{"items": [${item.slice(0, -1)}, "__proto__": {"review_state": "published"}}]}`,
    `{"items": [${item.slice(0, -1)}, "constructor": {"prototype": {"Anonymous": ["Manager"]}}}]}`,
    `{"items": [${item.slice(0, -1)}, "prototype": 1}]}`,
    `{"items": [${item.slice(0, -1)}, "subjects": [{"__proto__": 1}]}]}`,
    `{"items": [${item.slice(0, -1)}, "transitions": ["__proto__"]}]}`,
    `{"items": [${item.slice(0, -1)}, "transitions": ["constructor"]}]}`,
    `{"items": [${item.slice(0, -1)}, "transitions": ["toString"]}]}`,
    '{"items": [{"@type": "talk", "title": "nul \\u0000 inside", "type_of_talk": "Talk", "audience": ["Beginner"]}]}',
    '{"items": [{"@type": "talk", "title": "lone \\ud800 high", "type_of_talk": "Talk", "audience": ["Beginner"]}]}',
    '{"items": [{"@type": "talk\\u0000", "title": "x"}]}',
    '{"items": [{"@type": "__proto__", "title": "x"}]}',
    '{"items": [{"@type": "toString", "title": "x"}]}',
    '{"items": [{"@type": 1, "title": "x"}]}',
    `{"items": [${item.slice(0, -1)}, "id": "\\ud800"}]}`,
    `{"items": [${item.slice(0, -1)}, "id": 7}]}`,
    `{"items": [${item.slice(0, -1)}, "id": "++etc++"}]}`,
    `{"items": [${item.slice(0, -1)}, "id": "../escape"}]}`,
    `{"items": [${item.slice(0, -1)}, "title": ${nested(40)}}]}`,
    `{"items": ${nested(40)}}`,
    '{"items": [null]}', '{"items": [1]}', '{"items": ["x"]}', '{"items": [[]]}', '{"items": [true]}',
    '{"items": null}', '{"items": "x"}', '{"items": 1}', '{"items": {}}',
    `{"items": [${Array(51).fill(item).join(',')}]}`,
    `{"items": [${Array(5000).fill('1').join(',')}]}`,
    'null', '1', '"x"', '[]', 'true', '{', '{"items": [', '',
    `{"items": [${item.slice(0, -1)}, "transitions": [1]}]}`,
    `{"items": [${item.slice(0, -1)}, "transitions": {"0": "publish"}}]}`,
    `{"items": [${item.slice(0, -1)}, "transitions": ${JSON.stringify(Array(11).fill('publish'))}}]}`,
    `{"items": [${item.slice(0, -1)}, "image": {"data": "bm90IGFuIGltYWdl", "content-type": "image/png"}}]}`
  ]
  for (const payload of bodies) {
    const res = await app.inject({ method: 'POST', url: '/talks/@import', headers: { 'content-type': 'application/json', authorization: `Bearer ${admin}` }, payload })
    const label = `${payload.slice(0, 80)}: ${res.statusCode}`
    t.ok(res.statusCode >= 400 && res.statusCode < 500, label)
    const body = res.json()
    t.type(body.type, 'string', `${label}: contract shape (type)`)
    t.type(body.message, 'string', `${label}: contract shape (message)`)
  }
  t.same(await snapshot(), before, 'nothing written')
  t.equal(({} as Record<string, unknown>).Anonymous, undefined, 'no prototype polluted')
  const anonymous = await call('GET', '/@search?SearchableText=hostile')
  t.equal(anonymous.json().items_total, 0, 'anonymous sees nothing of it')
})

t.test('an imported talk is catalogued exactly as a created and published one', async t => {
  const body = talkBody({ title: 'Twin talk', details: '<p>Same words</p>', subjects: ['twin', 'talk'], speaker: 'Ada Lovelace', start: '2030-05-01T10:00:00Z', end: '2030-05-01T10:30:00Z' })
  const imported = await call('POST', '/talks/@import', { items: [{ ...body, id: 'twin-imported', transitions: ['publish'] }] }, admin)
  t.equal(imported.statusCode, 201, imported.body)
  t.equal((await call('POST', '/talks', { ...body, id: 'twin-created' }, admin)).statusCode, 201)
  t.equal((await call('POST', '/talks/twin-created/@workflow/publish', {}, admin)).statusCode, 200)
  const rowOf = async (id: string): Promise<Record<string, unknown>> => {
    const { rows } = await app.db.query('SELECT catalog.*, catalog.searchable::text AS searchable FROM catalog JOIN content USING (uid) WHERE content.path = $1', [`/talks/${id}`])
    const row = rows[0] as Record<string, unknown>
    // What differs by nature: identity, address, position and times (`changed_by`: the writing transaction).
    for (const key of ['changed_by', 'uid', 'UID', 'getId', 'id', 'path_string', 'path_parents', 'getObjPositionInParent', 'created', 'modified', 'Date', 'effective']) delete row[key]
    return row
  }
  t.same(await rowOf('twin-imported'), await rowOf('twin-created'), 'the same catalogue values (lists, texts, security, state)')
  const [imp, made] = await Promise.all(['twin-imported', 'twin-created'].map(async id => (await call('GET', `/talks/${id}`, undefined, admin)).json()))
  for (const key of ['@id', 'id', 'UID', 'created', 'modified', 'effective', 'getObjPositionInParent', 'lock', '@components', 'version']) { delete imp[key]; delete made[key] }
  t.same(imp, made, 'and reads back the same')
})

t.test('images, rich text and ids, on PostgreSQL and on the embedded database', async t => {
  const picture = png(4, 3)
  for (const embedded of [false, true]) {
    await t.test(embedded ? 'embedded (PGlite)' : 'PostgreSQL', async t => {
      const { call: http, tokenFor: login } = embedded ? await build(t, { embedded: true }) : { call, tokenFor }
      const token = await login('admin')
      const folder = embedded ? '/talks' : pathOf((await http('POST', '/talks', { '@type': 'folder', title: 'Pictures' }, token)).json()['@id'])
      const res = await http('POST', `${folder}/@import`, {
        items: [
          { ...talkBody({ title: 'Pictured', details: { data: 'Plain text', 'content-type': 'text/plain' } }), transitions: ['publish'] },
          talkBody({ title: 'Pictured' }),
          talkBody({ title: 'With image', image: upload(picture, 'a.png') })
        ]
      }, token)
      t.equal(res.statusCode, 201, res.body)
      t.same(res.json().items.map((i: { id: string }) => i.id), ['pictured', 'pictured-1', 'with-image'])
      const image = await http('GET', `${folder}/with-image/@@download/image`, undefined, token)
      t.equal(image.statusCode, 200)
      t.same(image.rawPayload, picture, 'the image bytes as sent')
      t.match((await http('GET', `${folder}/with-image`, undefined, token)).json().image, { 'content-type': 'image/png', width: 4, height: 3 })
      t.same((await http('GET', `${folder}/pictured`, undefined, token)).json().details.data, '<p>Plain text</p>', 'text/plain as POST converts it')
      t.equal((await http('GET', `${folder}/@search?SearchableText=pictured&path.depth=1`, undefined, token)).json().items_total, 2)
    })
  }
})

t.test('concurrent imports of the same titles in opposite orders: all acknowledged, none deadlocked', async t => {
  const made = await call('POST', '/talks', { '@type': 'folder', title: 'Crossing imports' }, admin)
  const folder = pathOf(made.json()['@id'])
  const titles = Array.from({ length: 30 }, (_, i) => `Crossing ${i % 10}`)
  for (let round = 0; round < 3; round++) {
    const results = await Promise.all(Array.from({ length: 6 }, async (_, n) => {
      const ordered = n % 2 === 0 ? titles : [...titles].reverse()
      return await call('POST', `${folder}/@import`, { items: ordered.map(title => talkBody({ title })) }, admin)
    }))
    t.same(results.map(r => r.statusCode), Array(6).fill(201), `round ${round}: every import 201 (${results.map(r => r.statusCode === 201 ? '' : r.body).join(' ')})`)
  }
  const { rows } = await app.db.query<{ id: string, position: number }>('SELECT c.id, c.position FROM content c JOIN content f ON c.parent_uid = f.uid WHERE f.path = $1', [folder])
  t.equal(rows.length, 3 * 6 * 30, 'all present')
  t.equal(new Set(rows.map(r => r.id)).size, rows.length, 'ids unique')
  t.equal(new Set(rows.map(r => r.position)).size, rows.length, 'positions unique')
})
