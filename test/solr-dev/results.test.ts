// solr-dev conformance: what a select answers — fl, sort (ties, missing values), paging, the
// response envelope, facets and highlighting — as Solr 9 answers for the test configset.
import t from 'tap'
import { ids, index, solrError, startSolrDev, type Query } from './helper.js'

const solr = await startSolrDev(t)

await index(solr, 'test', [
  { id: 'a', title: 'Solr in action', body: 'Solr is a search server built on Lucene. It is fast. Lucene does the indexing.', category: 'book', tags: ['search', 'java'], price: 30, views: 10, rank: 2, published: '2024-01-01T00:00:00Z', featured: true, notes: 'stored only', hidden: 'secret' },
  { id: 'b', title: 'Lucene in action', body: 'Lucene is a Java library for full text search.', category: 'book', tags: ['java', 'lucene'], price: 30, views: 20, rank: 1, published: '2023-01-01T00:00:00Z', featured: false },
  { id: 'c', title: 'Search patterns', body: 'Patterns for search user interfaces.', category: 'article', tags: ['search', 'ux'], price: 5, views: 20, featured: true },
  { id: 'd', title: 'Relevance tuning', body: 'Tuning relevance in Solr and Elasticsearch.', category: 'article', tags: ['search'], views: 5, published: '2025-01-01T00:00:00Z' },
  { id: 'e', title: 'Cooking with Java', body: 'Coffee recipes.', tags: ['coffee'], price: 12.5, views: 20 }
])

async function select (query: Query): Promise<ReturnType<typeof solr.get>> {
  return await solr.get('test/select', query)
}

async function sorted (sort: string, q = '*:*'): Promise<string[]> {
  const res = await select({ q, sort, fl: 'id' })
  if (res.status !== 200) throw new Error(JSON.stringify(res.body))
  return ids(res)
}

t.test('fl', async t => {
  const all = (await select({ q: 'id:e' })).body.response.docs[0]
  t.same(Object.keys(all).sort(), ['_version_', 'body', 'id', 'kind', 'price', 'tags', 'title', 'title_sort', 'views'],
    'default: stored fields and docValues fields (useDocValuesAsStored), not _text_')
  t.same((await select({ q: 'id:a', fl: 'notes,hidden' })).body.response.docs, [{ notes: 'stored only' }], 'a field neither stored nor docValues is never returned')
  t.same((await select({ q: 'id:a', fl: 'id,title' })).body.response.docs, [{ id: 'a', title: 'Solr in action' }], 'named fields')
  t.same((await select({ q: 'id:a', fl: 'id nope' })).body.response.docs, [{ id: 'a' }], 'space-separated; unknown names are ignored')
  t.same(Object.keys((await select({ q: 'id:a', fl: 't*' })).body.response.docs[0]).sort(), ['tags', 'title', 'title_sort'], 'globs')
  t.same((await select({ q: 'id:a', fl: 'name:title,id' })).body.response.docs, [{ name: 'Solr in action', id: 'a' }], 'alias:field')
  t.same((await select({ q: 'id:a', fl: ['id', 'views'] })).body.response.docs, [{ id: 'a', views: 10 }], 'repeated fl')
  const scored = await select({ q: 'title:action', fl: 'id,score' })
  t.same(Object.keys(scored.body.response), ['numFound', 'start', 'maxScore', 'numFoundExact', 'docs'], 'maxScore comes with fl=score')
  t.equal(scored.body.response.docs[0].score, scored.body.response.maxScore)
  t.same(Object.keys((await select({ q: 'title:action', fl: 'id' })).body.response), ['numFound', 'start', 'numFoundExact', 'docs'], 'and only then')
  t.same(Object.keys((await select({ q: 'id:a', fl: 'score' })).body.response.docs[0]), ['score'], 'fl=score alone returns only the score')
  const fn = await select({ q: '*:*', fl: 'id,sum(views,1)' })
  t.same([fn.status, fn.body.error.msg], [400, 'solr-dev does not support functions and [transformers] in fl (fl=id,sum(views,1))'], 'functions in fl: 400 that says so')
  t.equal((await select({ q: '*:*', fl: '[docid]' })).status, 400, 'transformers too')
  t.same(ids(await select({ q: 'hidden:secret', fl: 'id' })), ['a'], 'an unstored field is still searchable')
  t.same(ids(await select({ q: 'notes:stored', fl: 'id' })), [], 'an unindexed field matches nothing, as in Solr')
})

t.test('sort', async t => {
  t.same(await sorted('price asc'), ['d', 'c', 'e', 'a', 'b'], 'numbers without sortMissing*: a missing value sorts as 0; ties in index order')
  t.same(await sorted('price desc'), ['a', 'b', 'e', 'c', 'd'])
  t.same(await sorted('category asc'), ['c', 'd', 'a', 'b', 'e'], 'sortMissingLast strings: missing last ascending…')
  t.same(await sorted('category desc'), ['a', 'b', 'c', 'd', 'e'], '…and descending')
  t.same(await sorted('views desc, id desc'), ['e', 'c', 'b', 'a', 'd'], 'several fields')
  t.same(await sorted('views asc,price desc'), ['d', 'a', 'b', 'e', 'c'], 'several fields without a space after the comma')
  t.same(await sorted('title_sort asc'), ['e', 'b', 'd', 'c', 'a'], 'a string copy of the title')
  t.same(await sorted('published asc'), ['c', 'e', 'b', 'a', 'd'], 'dates; missing ones sort as the epoch')
  t.same(await sorted('featured asc'), ['b', 'a', 'c', 'd', 'e'], 'booleans: false, true, then missing')
  t.same(await sorted('tags asc'), ['e', 'a', 'b', 'c', 'd'], 'a multiValued field with docValues sorts ascending by its smallest value')
  t.same(await sorted('tags desc'), ['c', 'a', 'd', 'b', 'e'], 'and descending by its largest')
  t.same(await sorted('rank asc'), ['c', 'd', 'e', 'b', 'a'], 'an indexed field without docValues is sorted by uninverting (missing as 0)')
  t.same(await sorted('_docid_ desc'), ['e', 'd', 'c', 'b', 'a'], '_docid_')
  t.same(await sorted('score desc', 'title:action'), ['a', 'b'], 'equal scores: index order')
  t.same(await sorted('score asc', 'title:action OR title:solr'), ['b', 'a'], 'score asc')
  t.same(await sorted('hidden asc, id desc'), ['a', 'e', 'd', 'c', 'b'], 'a string indexed but neither stored nor docValues is sortable (missing last)')
  const errors: Array<[string, string]> = [
    ['nope asc', 'sort param field can\'t be found: nope'],
    ['price', 'Can\'t determine a Sort Order (asc or desc) in sort spec \'price\', pos=5'],
    ['price up', 'Can\'t determine a Sort Order (asc or desc) in sort spec \'price up\', pos=6'],
    ['notes asc', 'can not sort on a field w/o docValues unless it is indexed=true uninvertible=true and the type supports Uninversion: notes'],
    ['title asc', 'solr-dev does not support sorting on TextField title'],
    ['div(views,2) asc', 'solr-dev does not support sorting by functions (div(views,2) asc)']
  ]
  for (const [sort, msg] of errors) {
    const res = await select({ q: '*:*', sort })
    t.same([res.status, res.body.error], [400, solrError(400, msg)], `sort=${sort}`)
  }
})

t.test('paging and the envelope', async t => {
  const page = await select({ q: '*:*', sort: 'id asc', start: 1, rows: 2, fl: 'id' })
  t.same(page.body.response, { numFound: 5, start: 1, numFoundExact: true, docs: [{ id: 'b' }, { id: 'c' }] }, 'start and rows')
  t.same((await select({ q: '*:*', start: 10, fl: 'id' })).body.response, { numFound: 5, start: 10, numFoundExact: true, docs: [] }, 'past the end')
  t.same((await select({ q: '*:*', rows: 0 })).body.response, { numFound: 5, start: 0, numFoundExact: true, docs: [] }, 'rows=0 counts')
  t.equal((await select({ q: '*:*' })).body.response.docs.length, 5, 'rows defaults to 10')
  t.same((await select({ q: '*:*', start: -1 })).body.error, solrError(400, '\'start\' parameter cannot be negative'))
  t.same((await select({ q: '*:*', rows: -1 })).body.error, solrError(400, '\'rows\' parameter cannot be negative'))

  const echoed = await select({ q: 'title:action', fq: ['category:book', 'views:[* TO 100]'], rows: 2, wt: 'json' })
  t.same(Object.keys(echoed.body), ['responseHeader', 'response'])
  t.same(Object.keys(echoed.body.responseHeader), ['status', 'QTime', 'params'])
  t.same(echoed.body.responseHeader.params, { q: 'title:action', fq: ['category:book', 'views:[* TO 100]'], rows: '2', wt: 'json' },
    'echoParams=explicit (solrconfig.xml): one value as a string, repeated values as an array')
  t.equal(echoed.body.responseHeader.status, 0)
  t.type(echoed.body.responseHeader.QTime, 'number')
  const all = await select({ q: '*:*', rows: 0, echoParams: 'all' })
  t.same(all.body.responseHeader.params, { echoParams: 'all', rows: '0', df: '_text_', q: '*:*' }, 'echoParams=all adds the handler defaults')
  t.notOk('params' in (await select({ q: '*:*', echoParams: 'none' })).body.responseHeader, 'echoParams=none')
  t.notOk('responseHeader' in (await select({ q: '*:*', omitHeader: 'true' })).body, 'omitHeader=true')
  const form = await solr.request('test/select', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'q=id%3Aa&fl=id' })
  t.same((await form.json()).response.docs, [{ id: 'a' }], 'parameters in a form-encoded POST body')
})

t.test('facets', async t => {
  async function facet (field: string, extra: Query = {}): Promise<unknown[]> {
    const res = await select({ q: '*:*', rows: 0, facet: 'true', 'facet.field': field, ...extra })
    if (res.status !== 200) throw new Error(JSON.stringify(res.body))
    return res.body.facet_counts.facet_fields[field]
  }
  const res = await select({ q: '*:*', rows: 0, facet: 'true', 'facet.field': 'category' })
  t.same(res.body.facet_counts, {
    facet_queries: {},
    facet_fields: { category: ['article', 2, 'book', 2] },
    facet_ranges: {},
    facet_intervals: {},
    facet_heatmaps: {}
  }, 'facet_counts: a flat [term, count, …] list; equal counts in index order')
  t.same(await facet('tags'), ['search', 3, 'java', 2, 'coffee', 1, 'lucene', 1, 'ux', 1], 'multiValued: by count')
  const book = { fq: 'category:book' }
  t.same(await facet('tags', book), ['java', 2, 'lucene', 1, 'search', 1, 'coffee', 0, 'ux', 0], 'counts follow q and fq; facet.mincount defaults to 0')
  t.same(await facet('tags', { ...book, 'facet.mincount': 1 }), ['java', 2, 'lucene', 1, 'search', 1], 'facet.mincount')
  t.same(await facet('tags', { 'facet.limit': 2 }), ['search', 3, 'java', 2], 'facet.limit')
  t.same(await facet('tags', { ...book, 'facet.limit': 2, 'facet.offset': 1 }), ['lucene', 1, 'search', 1], 'facet.offset')
  t.same(await facet('tags', { 'facet.sort': 'index' }), ['coffee', 1, 'java', 2, 'lucene', 1, 'search', 3, 'ux', 1], 'facet.sort=index')
  t.same(await facet('tags', { 'facet.prefix': 's' }), ['search', 3], 'facet.prefix')
  t.same(await facet('category', { 'facet.missing': 'true' }), ['article', 2, 'book', 2, null, 1], 'facet.missing adds a null bucket')
  t.same(await facet('views'), ['20', 3, '5', 1, '10', 1], 'ints: values as strings, ties in numeric order')
  t.same(await facet('price'), ['30.0', 2, '5.0', 1, '12.5', 1], 'floats')
  t.same(await facet('published'), ['2023-01-01T00:00:00Z', 1, '2024-01-01T00:00:00Z', 1, '2025-01-01T00:00:00Z', 1], 'dates')
  t.same(await facet('featured'), ['true', 2, 'false', 1], 'booleans')
  t.same(await facet('title'), ['action', 2, 'cooking', 1, 'java', 1, 'lucene', 1, 'patterns', 1, 'relevance', 1, 'search', 1, 'solr', 1, 'tuning', 1], 'text: the analysed terms (stop words gone)')
  const two = await select({ q: '*:*', rows: 0, facet: 'true', 'facet.field': ['tags', 'category'], 'f.tags.facet.limit': 1 })
  t.same(two.body.facet_counts.facet_fields, { tags: ['search', 3], category: ['article', 2, 'book', 2] }, 'several fields, f.<field>. overrides')
  t.notOk('facet_counts' in (await select({ q: '*:*', 'facet.field': 'tags' })).body, 'no facet=true, no facets')
  const noDv = await select({ q: '*:*', facet: 'true', 'facet.field': 'rank' })
  t.same([noDv.status, noDv.body.error.msg], [400, 'Can\'t facet on a PointField without docValues'])
  const unknown = await select({ q: '*:*', facet: 'true', 'facet.field': 'nope' })
  t.same([unknown.status, unknown.body.error.msg], [400, 'undefined field nope'])
  const fq = await select({ q: '*:*', facet: 'true', 'facet.query': 'views:[10 TO 20]' })
  t.same([fq.status, fq.body.error.msg], [400, 'solr-dev does not support the parameter facet.query'])
})

t.test('highlighting (Solr 9 default: the unified highlighter)', async t => {
  async function hl (query: Query): Promise<unknown> {
    const res = await select({ fl: 'id', hl: 'true', ...query })
    if (res.status !== 200) throw new Error(JSON.stringify(res.body))
    return res.body.highlighting
  }
  t.same(await hl({ q: 'title:solr', 'hl.fl': 'title' }), { a: { title: ['<em>Solr</em> in action'] } }, 'keyed by uniqueKey, field → snippets, <em> by default')
  t.same(await hl({ q: 'title:solr', 'hl.fl': 'title', 'hl.simple.pre': '[', 'hl.simple.post': ']' }), { a: { title: ['[Solr] in action'] } }, 'hl.simple.pre/post')
  t.same(await hl({ q: 'title:solr', 'hl.fl': 'title', 'hl.tag.pre': '<b>', 'hl.tag.post': '</b>', 'hl.simple.pre': '[' }), { a: { title: ['<b>Solr</b> in action'] } }, 'hl.tag.pre/post win over hl.simple.*')
  t.same(await hl({ q: 'body:"full text"', 'hl.fl': 'body' }), { b: { body: ['Lucene is a Java library for <em>full text</em> search.'] } }, 'a phrase is highlighted as one match')
  t.same(await hl({ q: 'title:solr OR body:recipes', 'hl.fl': 'title', sort: 'id asc' }), { a: { title: ['<em>Solr</em> in action'] }, e: {} }, 'a result without a highlight gets an empty object')
  t.same(await hl({ q: 'title:solr OR body:lucene', 'hl.fl': 'title', sort: 'id asc' }), { a: { title: ['<em>Solr</em> in action'] }, b: { title: ['<em>Lucene</em> in action'] } },
    'terms of every field highlight by default (hl.requireFieldMatch=false)')
  t.same(await hl({ q: 'title:solr OR body:lucene', 'hl.fl': 'title', 'hl.requireFieldMatch': 'true', sort: 'id asc' }), { a: { title: ['<em>Solr</em> in action'] }, b: {} }, 'hl.requireFieldMatch=true')
  t.same(await hl({ q: 'title:tun*', 'hl.fl': 'title' }), { d: { title: ['Relevance <em>tuning</em>'] } }, 'wildcards highlight')
  t.same(await hl({ q: 'body:fast', 'hl.fl': 'body', 'hl.fragsize': 0 }), { a: { body: ['Solr is a search server built on Lucene. It is <em>fast</em>. Lucene does the indexing.'] } }, 'hl.fragsize=0: the whole value')
  t.same(await hl({ q: 'body:indexing', 'hl.fl': 'body', 'hl.fragsize': 10 }), { a: { body: ['Lucene does the <em>indexing</em>.'] } }, 'a small hl.fragsize: the sentence holding the match')
  t.same(await hl({ q: 'title:solr' }), { a: {} }, 'no hl.fl: df (_text_, not stored) gives nothing')
  t.same(await hl({ q: 'title:java OR title:lucene', 'hl.fl': 'title,body', sort: 'id asc' }), {
    b: { title: ['<em>Lucene</em> in action'], body: ['<em>Lucene</em> is a <em>Java</em> library for full text search.'] },
    e: { title: ['Cooking with <em>Java</em>'] }
  }, 'several fields; fields without a highlight are left out')
  const bad = await select({ q: 'title:solr', hl: 'true', 'hl.method': 'original' })
  t.same([bad.status, bad.body.error.msg], [400, 'solr-dev does not support hl.method=original (only unified, Solr 9\'s default)'])

  await index(solr, 'test', [{ id: 'z', title: 'Less <than> more & co' }])
  t.same(await hl({ q: 'title:more', 'hl.fl': 'title', 'hl.encoder': 'html' }), { z: { title: ['Less &lt;than&gt; <em>more</em> &amp; co'] } }, 'hl.encoder=html escapes the text')
  t.same(await hl({ q: 'title:more', 'hl.fl': 'title' }), { z: { title: ['Less <than> <em>more</em> & co'] } }, 'the default encoder does not')
})
