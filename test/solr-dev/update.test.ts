// solr-dev conformance: the update handler (document forms, commits and visibility, deletes,
// atomic updates, optimistic concurrency, errors) and real-time get, with the answers Solr 9
// gives for the test configset.
import t from 'tap'
import { ids, solrError, startSolrDev, type Answer, type SolrDev } from './helper.js'

const solr = await startSolrDev(t)

async function visible (q = '*:*'): Promise<string[]> {
  return ids(await solr.get('test/select', { q, fl: 'id', rows: 100, sort: 'id asc' }))
}

async function raw (body: string, query = '', contentType = 'application/json'): Promise<Answer> {
  const res = await solr.request(`test/update${query}`, { method: 'POST', headers: { 'content-type': contentType }, body })
  return { status: res.status, body: await res.json(), contentType: res.headers.get('content-type') ?? '' }
}

async function clear (s: SolrDev = solr): Promise<void> {
  await s.post('test/update', { delete: { query: '*:*' }, commit: {} })
}

async function rtg (id: string, fl?: string): Promise<unknown> {
  const res = await solr.get('test/get', fl === undefined ? { id } : { id, fl })
  return res.body.doc
}

t.test('adding documents and commit visibility', async t => {
  await clear()
  const add = await solr.post('test/update', [{ id: '1', title: 'one' }, { id: '2', title: 'two' }])
  t.equal(add.status, 200)
  t.same(Object.keys(add.body), ['responseHeader'], 'an update answers only a responseHeader')
  t.same(Object.keys(add.body.responseHeader), ['status', 'QTime'])
  t.equal(add.body.responseHeader.status, 0)
  t.same(await visible(), [], 'nothing is visible before a commit')
  t.same(await rtg('1', 'id,title'), { id: '1', title: 'one' }, 'but real-time get sees uncommitted documents')

  await solr.post('test/update', { commit: {} })
  t.same(await visible(), ['1', '2'], '{"commit":{}} makes them visible')

  const repeated = await raw('{"add":{"doc":{"id":"3","title":"three"}},"add":{"doc":{"id":"4","title":"four"},"overwrite":true},"commit":{}}')
  t.equal(repeated.status, 200)
  t.same(await visible(), ['1', '2', '3', '4'], 'one object with repeated "add" commands, then "commit"')

  await solr.post('test/update', { add: [{ id: '5', title: 'five' }, { id: '6', title: 'six' }] }, { commit: 'true' })
  t.same(await visible(), ['1', '2', '3', '4', '5', '6'], '"add" with an array of documents, commit=true as a URL parameter')

  await solr.post('test/update', [{ id: '7', title: 'seven' }], { softCommit: 'true' })
  t.same(await visible('id:7'), ['7'], 'softCommit=true')

  await solr.post('test/update', [{ id: '8', title: 'eight' }])
  await solr.post('test/update', { commit: { openSearcher: false } })
  t.same(await visible('id:8'), [], 'a commit with openSearcher=false does not open a new searcher')
  await solr.post('test/update', { commit: { softCommit: true } })
  t.same(await visible('id:8'), ['8'], 'a soft commit does')

  await solr.post('test/update', [{ id: '9', title: 'nine' }], { commitWithin: 300 })
  t.same(await visible('id:9'), [], 'commitWithin: not yet visible')
  let seen: string[] = []
  for (let i = 0; i < 100 && seen.length === 0; i++) {
    await new Promise(resolve => setTimeout(resolve, 50))
    seen = await visible('id:9')
  }
  t.same(seen, ['9'], 'commitWithin=300: visible shortly after')

  await solr.post('test/update', { add: { doc: { id: '10', title: 'ten' }, commitWithin: 200 } })
  seen = []
  for (let i = 0; i < 100 && seen.length === 0; i++) {
    await new Promise(resolve => setTimeout(resolve, 50))
    seen = await visible('id:10')
  }
  t.same(seen, ['10'], 'commitWithin inside an add command')

  const opt = await solr.post('test/update', { optimize: {} })
  t.equal(opt.status, 200, 'optimize is accepted')
  const status = await solr.get('admin/cores', { action: 'STATUS', core: 'test' })
  t.equal(status.body.status.test.index.segmentCount, 1, 'and merges the index to one segment')
  t.equal((await solr.get('test/update', { optimize: 'true' })).status, 200, 'optimize=true as a parameter, by GET')
  t.equal((await solr.get('test/update', { commit: 'true' })).status, 200, 'commit=true by GET, without a body')
})

t.test('stored values come back typed as Solr writes them', async t => {
  await clear()
  await solr.post('test/update', [{
    id: 'v',
    title: 'typed',
    views: '42',
    price: 3,
    rating: 2,
    rank: 1.9,
    published: '2024-01-15T10:00:00.000Z',
    featured: 'true',
    tags: 'single',
    scores: [3, 1, 2]
  }], { commit: 'true' })
  const doc = (await solr.get('test/select', { q: 'id:v' })).body.response.docs[0]
  t.equal(doc.views, 42, 'an int given as a string is an int')
  t.equal(doc.price, 3, 'a float')
  t.equal(doc.rank, 1, 'a JSON decimal into a long field is truncated, as Solr does')
  t.equal(doc.published, '2024-01-15T10:00:00Z', 'dates in ISO-8601 without zero milliseconds')
  t.equal(doc.featured, true, '"true" is a boolean true')
  t.same(doc.tags, ['single'], 'multiValued fields are arrays even with one value')
  t.same(doc.scores, [3, 1, 2], 'stored multiValued values keep their order')
  t.equal(doc.kind, 'talk', 'a field default fills a missing value')
  t.equal(typeof doc._version_, 'number', '_version_ is assigned')
  t.notOk('_text_' in doc, 'a non-stored field without docValues is not returned')
  t.equal(doc.title_sort, 'typed', 'a docValues copyField target is returned (useDocValuesAsStored)')

  await solr.post('test/update', [{ id: 'm', title: 'millis', published: '2024-01-15T10:00:00.5Z' }], { commit: 'true' })
  t.equal((await rtg('m', 'published') as { published: string }).published, '2024-01-15T10:00:00.500Z', 'milliseconds when not zero')
})

t.test('deletes', async t => {
  await clear()
  await solr.post('test/update', ['a', 'b', 'c', 'd', 'e', 'f'].map(id => ({ id, title: id, category: id < 'd' ? 'keep' : 'old' })), { commit: 'true' })
  await solr.post('test/update', { delete: { id: 'a' } })
  t.same(await visible(), ['a', 'b', 'c', 'd', 'e', 'f'], 'a delete is not visible before a commit')
  t.equal(await rtg('a'), null, 'but real-time get no longer finds the document')
  await solr.post('test/update', { commit: {} })
  t.same(await visible(), ['b', 'c', 'd', 'e', 'f'], '{"delete":{"id":…}}')
  await solr.post('test/update', { delete: 'b' }, { commit: 'true' })
  t.same(await visible(), ['c', 'd', 'e', 'f'], '{"delete":"id"}')
  await solr.post('test/update', { delete: ['c', 'd'] }, { commit: 'true' })
  t.same(await visible(), ['e', 'f'], '{"delete":["id","id"]}')
  await solr.post('test/update', { delete: { query: 'category:old AND id:e' } })
  t.equal(await rtg('e'), null, 'a delete by query is seen by real-time get at once')
  t.same(await visible(), ['e', 'f'], 'and by searches after a commit')
  await solr.post('test/update', { commit: {} })
  t.same(await visible(), ['f'], '{"delete":{"query":…}}')
  await raw('{"add":{"doc":{"id":"g","title":"g"}},"delete":{"id":"g"},"add":{"doc":{"id":"h","title":"h"}},"commit":{}}')
  t.same(await visible(), ['f', 'h'], 'commands apply in order')
  await solr.post('test/update', { delete: { query: '-id:f' } }, { commit: 'true' })
  t.same(await visible(), ['f'], 'a purely negative delete query')
})

t.test('atomic updates', async t => {
  await clear()
  await solr.post('test/update', [{ id: 'x', title: 'Original title', body: 'body text', tags: ['a', 'b', 'a'], views: 5, price: 1.5, category: 'c1', scores: [1, 2, 3] }], { commit: 'true' })
  const before = await rtg('x') as { _version_: number }

  await solr.post('test/update', [{ id: 'x', title: { set: 'New title' }, tags: { add: ['c'] }, views: { inc: 3 }, category: { set: null } }], { commit: 'true' })
  const after = (await solr.get('test/select', { q: 'id:x', fl: 'id,title,tags,views,category,body,price,_version_' })).body.response.docs[0]
  t.same(after.title, 'New title', 'set')
  t.same(after.tags, ['a', 'b', 'a', 'c'], 'add appends')
  t.equal(after.views, 8, 'inc')
  t.notOk('category' in after, 'set null removes the field')
  t.equal(after.body, 'body text', 'fields not named keep their values')
  t.equal(after.price, 1.5)
  t.ok(after._version_ > before._version_, 'the version grows')
  t.same(await visible('title:new'), ['x'], 'the new value is indexed')
  t.same(await visible('title:original'), [], 'the old value is not')
  t.same(await visible('_text_:new'), ['x'], 'copyField targets are rebuilt from the new values')
  t.same((await solr.get('test/select', { q: 'id:x', fl: 'title_sort' })).body.response.docs[0], { title_sort: 'New title' })

  await solr.post('test/update', [{ id: 'x', tags: { remove: 'a' }, scores: { 'add-distinct': [3, 4] } }], { commit: 'true' })
  const removed = await rtg('x', 'tags,scores') as { tags: string[], scores: number[] }
  t.same(removed.tags, ['b', 'c'], 'remove takes out every occurrence')
  t.same(removed.scores, [1, 2, 3, 4], 'add-distinct adds only new values')

  await solr.post('test/update', [{ id: 'x', tags: { removeregex: '^[bc]$' }, scores: { remove: [1, 2] } }])
  t.same(await rtg('x', 'tags,scores'), { scores: [3, 4] }, 'removeregex; an emptied field disappears; visible to real-time get before commit')

  await solr.post('test/update', [{ id: 'x', views: { inc: -10 }, price: { inc: 0.25 } }], { commit: 'true' })
  t.same(await rtg('x', 'views,price'), { views: -2, price: 1.75 }, 'inc with negative and decimal steps')

  const created = await solr.post('test/update', [{ id: 'new', title: { set: 'Created by set' }, views: { inc: 2 } }], { commit: 'true' })
  t.equal(created.status, 200, 'an atomic update of a missing document creates it')
  t.same(await rtg('new', 'id,title,views'), { id: 'new', title: 'Created by set', views: 2 })

  const noTitle = await solr.post('test/update', [{ id: 'other', views: { set: 1 } }])
  t.equal(noTitle.status, 400)
  t.same(noTitle.body.error, solrError(400, '[doc=other] missing required field: title'), 'required fields still apply')

  const badOp = await solr.post('test/update', [{ id: 'x', views: { multiply: 2 } }])
  t.equal(badOp.status, 400)
  t.same(badOp.body.error.msg, 'Error:[doc=x] Unknown operation for the an atomic update: multiply')
})

t.test('optimistic concurrency with _version_', async t => {
  await clear()
  await solr.post('test/update', [{ id: 'v1', title: 'v1' }], { commit: 'true' })
  // Versions exceed 2^53, as in Solr: read the digits from the JSON text and send them as a string.
  const text = await (await solr.request('test/get?id=v1&fl=_version_')).text()
  const version = /"_version_":(\d+)/.exec(text)?.[1] ?? ''
  t.match(version, /^\d{16,19}$/, '_version_ is a long')
  const ok = await solr.post('test/update', [{ id: 'v1', title: 'v1 again', _version_: version }])
  t.equal(ok.status, 200, 'the current version is accepted')
  const stale = await solr.post('test/update', [{ id: 'v1', title: 'stale', _version_: version }])
  t.equal(stale.status, 409, 'a stale version conflicts')
  t.match(stale.body.error.msg, new RegExp(`^version conflict for v1 expected=${version} actual=\\d+$`))
  t.equal(stale.body.error.code, 409)
  const mustNotExist = await solr.post('test/update', [{ id: 'v1', title: 'x', _version_: -1 }])
  t.equal(mustNotExist.status, 409, '_version_ < 0: the document must not exist')
  const mustExist = await solr.post('test/update', [{ id: 'nope', title: 'x', _version_: 1 }])
  t.equal(mustExist.status, 409, '_version_ = 1: the document must exist')
  t.equal(mustExist.body.error.msg, 'Document not found for update.  id=nope')
  t.equal((await solr.post('test/update', [{ id: 'fresh', title: 'x', _version_: -1 }])).status, 200, '_version_ < 0 on a new id')
})

t.test('update errors in Solr\'s shape; commands before the error stay applied', async t => {
  await clear()
  const cases: Array<[unknown, string]> = [
    [[{ id: 'e1', title: 'x', bogus: 1 }], 'ERROR: [doc=e1] unknown field \'bogus\''],
    [[{ title: 'no id' }], 'Document is missing mandatory uniqueKey field: id'],
    [[{ id: 'e2', title: 'x', views: 'many' }], 'ERROR: [doc=e2] Error adding field \'views\'=\'many\' msg=For input string: "many"'],
    [[{ id: 'e3', title: 'x', price: 'cheap' }], 'ERROR: [doc=e3] Error adding field \'price\'=\'cheap\' msg=For input string: "cheap"'],
    [[{ id: 'e4', title: 'x', published: '2024-01-01' }], 'ERROR: [doc=e4] Error adding field \'published\'=\'2024-01-01\' msg=Invalid Date String:\'2024-01-01\''],
    [[{ id: 'e5', title: ['a', 'b'] }], 'ERROR: [doc=e5] multiple values encountered for non multiValued field title: [a, b]'],
    [[{ id: 'e6' }], '[doc=e6] missing required field: title'],
    [{ frobnicate: {} }, 'Unknown command \'frobnicate\''],
    [{ delete: { id: 'x', bogus: 1 } }, 'Unknown key \'bogus\''],
    [{ commit: { bogus: true } }, 'Unknown commit parameter \'bogus\''],
    [[{ id: 'e7', title: 'x', where: '1,2' }], 'ERROR: [doc=e7] Error adding field \'where\'=\'1,2\' msg=solr-dev does not support field \'where\': field type \'location\' (solr.LatLonPointSpatialField): this field type class is not supported'],
    [[{ id: 'e8', title: 'x', tags: [{ id: 'child' }] }], 'solr-dev does not support nested child documents']
  ]
  for (const [body, msg] of cases) {
    const res = await solr.post('test/update', body)
    t.equal(res.status, 400, msg)
    t.same(res.body, { responseHeader: { status: 400, QTime: res.body.responseHeader.QTime }, error: solrError(400, msg) })
  }
  const empty = await solr.get('test/update')
  t.same([empty.status, empty.body.error.msg], [400, 'missing content stream'], 'an update with neither a body nor a commit')
  const bad = await raw('{"add":')
  t.equal(bad.status, 400, 'invalid JSON')
  t.match(bad.body.error.msg, /^Cannot parse provided JSON: /)

  const xml = await raw('<add><doc><field name="id">1</field></doc></add>', '', 'application/xml')
  t.equal(xml.status, 400, 'XML update bodies are not supported')
  t.equal(xml.body.error.msg, 'solr-dev does not support update bodies of type application/xml (JSON only)')

  const partial = await solr.post('test/update', [{ id: 'ok1', title: 'fine' }, { id: 'bad', title: 'x', views: 'x' }, { id: 'ok2', title: 'never' }], { commit: 'true' })
  t.equal(partial.status, 400)
  await solr.post('test/update', { commit: {} })
  t.same(await visible(), ['ok1'], 'documents before the failing one were added, those after were not')
})

t.test('real-time get', async t => {
  await clear()
  await solr.post('test/update', [{ id: 'r1', title: 'first', tags: ['t'] }, { id: 'r2', title: 'second' }], { commit: 'true' })
  await solr.post('test/update', [{ id: 'r3', title: 'third, uncommitted' }])
  const one = await solr.get('test/get', { id: 'r1', fl: 'id,title,tags' })
  t.same(one.body, { doc: { id: 'r1', title: 'first', tags: ['t'] } }, '/get?id= answers {"doc":…} without a responseHeader')
  t.same((await solr.get('test/get', { id: 'missing' })).body, { doc: null }, 'a missing id answers {"doc":null}')
  const many = await solr.get('test/get', { ids: 'r1,r3,missing', fl: 'id' })
  t.same(many.body, { response: { numFound: 2, start: 0, numFoundExact: true, docs: [{ id: 'r1' }, { id: 'r3' }] } }, '/get?ids=a,b answers a result list, uncommitted included')
  const repeated = await solr.get('test/get', { id: ['r2', 'r1'], fl: 'id' })
  t.same(ids(repeated), ['r2', 'r1'], 'repeated id parameters keep their order')
  t.equal((await solr.get('test/get', { id: 'r1', fq: 'id:r1' })).status, 400, 'fq on get is not supported')
})

t.test('rollback and overwrite=false', async t => {
  await clear()
  await solr.post('test/update', [{ id: 'keep', title: 'committed' }], { commit: 'true' })
  await solr.post('test/update', [{ id: 'gone', title: 'rolled back' }])
  t.same(await rtg('gone', 'id'), { id: 'gone' })
  t.equal((await solr.post('test/update', { rollback: {} })).status, 200, '{"rollback":{}}')
  t.equal(await rtg('gone'), null, 'uncommitted documents are discarded')
  await solr.post('test/update', { commit: {} })
  t.same(await visible(), ['keep'], 'committed ones stay')

  await solr.post('test/update', [{ id: 'keep', title: 'a duplicate' }], { overwrite: 'false', commit: 'true' })
  t.same(await visible('id:keep'), ['keep', 'keep'], 'overwrite=false adds a second document with the same id')
})
