// solr-dev conformance: analysis and the standard query syntax. Each case is the request and
// the answer real Solr 9 gives for the test configset (infra/solr-dev/test-configset).
import t from 'tap'
import { ids, index, solrError, startSolrDev, TEST_CONFIGSET, type Query } from './helper.js'

const solr = await startSolrDev(t)

await index(solr, 'test', [
  { id: '1', title: 'The Quick Brown Fox', body: 'A quick café in Zürich', author: 'Ada Lovelace', code: 'ABC-123', category: 'news', tags: ['solr', 'search'], price: 9.5, views: 100, rank: 3, rating: 4.5, published: '2024-01-15T10:00:00Z', featured: true, legacy: 7, scores: [1, 2, 3] },
  { id: '2', title: 'Lazy dogs sleep', body: 'Notebook computers are quick to boot', author: 'ada lovelace', code: 'abc-124', category: 'blog', tags: ['lucene'], price: 20, views: 50, rank: 1, rating: 3.0, published: '2024-06-01T00:00:00Z', featured: false },
  { id: '3', title: 'Quick quick quick', body: 'the fox jumps over the lazy dog', author: 'Grace Hopper', code: 'XYZ', category: 'news', tags: ['solr', 'lucene'], price: 5, views: 10, rank: 2, rating: 5.0, published: '2023-12-31T23:59:59Z', featured: true },
  { id: '4', title: 'Éléphant résumé', body: 'naïve coöperation', author: 'Grace', category: 'blog', price: 100.25, views: 0, published: '2025-03-01T00:00:00Z' },
  { id: '5', title: 'Wi-Fi and e-mail', body: 'brown foxes', views: 75, featured: false }
])

async function found (q: string, extra: Query = {}): Promise<string[]> {
  const res = await solr.get('test/select', { q, fl: 'id', rows: 100, ...extra })
  if (res.status !== 200) throw new Error(`${q}: ${JSON.stringify(res.body)}`)
  return ids(res)
}

/** The same ids, order aside (for queries whose scores tie or are irrelevant). */
async function foundSet (q: string, extra: Query = {}): Promise<string[]> {
  return (await found(q, extra)).sort()
}

t.test('analysis', async t => {
  t.same(await found('title:quick'), ['3', '1'], 'case folded; three "quick" in a three-word title rank first')
  t.same(await found('title:QUICK'), ['3', '1'], 'the query side is lower-cased too')
  t.same(await found('title:elephant'), ['4'], 'ASCII folding: "Éléphant" is found as "elephant"')
  t.same(await found('title:résumé'), ['4'], 'and accented queries are folded the same way')
  t.same(await found('body:cafe'), [], 'text_general has no ASCII folding: "cafe" does not match "café"')
  t.same(await found('body:café'), ['1'], 'but "café" does')
  t.same(await found('title:fi'), ['5'], 'the standard tokenizer splits "Wi-Fi" into "wi" and "fi"')
  t.same(await found('title:wifi'), [], 'so "wifi" is not a term')
  t.same(await found('title:"wi fi"'), ['5'], 'the parts are adjacent positions')
  t.same(await found('title:the'), [], 'stop words are removed: nothing is left to search')
  t.same(await found('author:Ada'), ['1'], 'the whitespace tokenizer keeps case')
  t.same(await found('author:ada'), ['2'], '…both ways')
  t.same(await found('code:abc-123'), ['1'], 'keyword tokenizer + lowercase: the whole value is one term')
  t.same(await found('code:ABC'), [], 'a part of a keyword-tokenized value does not match')
  t.same(await found('body:laptop'), ['2'], 'query-time synonyms: "laptop" also searches "notebook"')
  t.same(await foundSet('quick'), ['1', '2', '3'], 'df=_text_ from solrconfig.xml: the copyField catch-all of title and body')
})

t.test('terms, phrases and boolean operators', async t => {
  t.same(await found('title:quick AND body:fox'), ['3'])
  t.same(await foundSet('title:quick OR title:lazy'), ['1', '2', '3'])
  t.same(await found('body:quick -category:news'), ['2'], 'a prohibited clause')
  t.same(await foundSet('+title:quick +featured:true'), ['1', '3'], 'required clauses')
  t.same(await found('(title:quick OR title:lazy) AND category:blog'), ['2'], 'grouping')
  t.same(await found('title:quick NOT id:3'), ['1'], 'NOT')
  t.same(await found('title:quick && !id:1'), ['3'], '&& and !')
  t.same(await foundSet('-featured:true'), ['2', '4', '5'], 'a purely negative query matches everything else')
  t.same(await found('title:(quick fox)', { 'q.op': 'AND' }), ['1'], 'q.op=AND')
  t.same(await foundSet('title:(quick fox)'), ['1', '3'], 'default q.op=OR')
  t.same(await found('lovelace', { df: 'author' }), ['2'], 'df names the default field')
  t.same(await foundSet('category:(news blog)'), ['1', '2', '3', '4'], 'several bare terms on a string field are OR-ed')
  t.same(await found('title:"quick brown"'), ['1'], 'phrase')
  t.same(await found('title:"brown quick"'), [], 'phrase order matters')
  t.same(await found('title:"quick fox"'), [], 'a gap breaks an exact phrase')
  t.same(await found('title:"quick fox"~1'), ['1'], 'phrase slop')
  t.same(await foundSet('*:*'), ['1', '2', '3', '4', '5'])
  t.same(await foundSet('*'), ['1', '2', '3', '4', '5'], 'a bare * matches all documents')
  t.same(await found('id:2'), ['2'])
  t.same(await foundSet('featured:false'), ['2', '5'])
  t.same(await foundSet('featured:true'), ['1', '3'])
  t.same(await found('views:100'), ['1'], 'int value')
  t.same(await found('price:9.5'), ['1'], 'float value')
  t.same(await found('rating:5'), ['3'], 'double value')
  t.same(await found('scores:2'), ['1'], 'multiValued int')
  t.same(await found('published:"2024-06-01T00:00:00Z"'), ['2'], 'date value, quoted')
  t.same(await found('published:2024-06-01T00\\:00\\:00Z'), ['2'], 'date value, escaped')
  t.same(await found('title:quick /* a comment */ AND id:1'), ['1'], 'comments are skipped')
})

t.test('wildcards, fuzzy and existence', async t => {
  t.same(await foundSet('title:qui*'), ['1', '3'], 'prefix')
  t.same(await foundSet('title:QUI*'), ['1', '3'], 'multi-term analysis lower-cases wildcard terms')
  t.same(await foundSet('title:q?ick'), ['1', '3'], '? wildcard')
  t.same(await foundSet('title:*ick'), ['1', '3'], 'leading wildcards are allowed')
  t.same(await foundSet('title:éléph*'), ['4'], 'and ASCII-folded')
  t.same(await foundSet('category:ne*'), ['1', '3'], 'prefix on a string field')
  t.same(await found('category:NE*'), [], 'string fields are not analysed')
  t.same(await foundSet('title:quack~1'), ['1', '3'], 'fuzzy, one edit')
  t.same(await found('title:quack~0'), [], 'fuzzy, no edit')
  t.same(await foundSet('title:qiuck~'), ['1', '3'], 'fuzzy, default two edits')
  t.same(await foundSet('category:*'), ['1', '2', '3', '4'], 'field:* matches documents that have the field')
  t.same(await foundSet('price:*'), ['1', '2', '3', '4'], '…numeric fields too')
  t.same(await found('-category:*'), ['5'], 'and its negation the ones without')
  t.same(await foundSet('title:/qu.ck/'), ['1', '3'], 'regular expressions')
})

t.test('ranges', async t => {
  t.same(await foundSet('price:[5 TO 20]'), ['1', '2', '3'], 'inclusive float range')
  t.same(await found('price:{5 TO 20}'), ['1'], 'exclusive')
  t.same(await foundSet('price:[* TO 10]'), ['1', '3'], 'open lower end')
  t.same(await foundSet('views:[50 TO *]'), ['1', '2', '5'], 'open upper end')
  t.same(await foundSet('views:{50 TO *]'), ['1', '5'], 'mixed brackets')
  t.same(await foundSet('rank:[2 TO 3]'), ['1', '3'], 'long range (no docValues: points only)')
  t.same(await found('legacy:[5 TO 10]'), ['1'], 'a TrieIntField works as an int')
  t.same(await foundSet('category:[a TO c]'), ['2', '4'], 'string range')
  t.same(await foundSet('id:[2 TO 4]'), ['2', '3', '4'], 'string order')
  t.same(await foundSet('title:[quick TO quick]'), ['1', '3'], 'text range on analysed terms')
  t.same(await foundSet('published:[2024-01-01T00:00:00Z TO 2024-12-31T23:59:59Z]'), ['1', '2'], 'date range')
  // NOW fixed with the NOW parameter (ms), as Solr allows, to keep the answer stable.
  const now = { NOW: Date.parse('2025-06-15T12:00:00Z') }
  t.same(await foundSet('published:[* TO NOW]', now), ['1', '2', '3', '4'], 'NOW')
  t.same(await foundSet('published:[NOW/YEAR-1YEAR TO NOW/YEAR]', now), ['1', '2'], 'date math: rounding and subtraction')
  t.same(await foundSet('published:[NOW-1YEAR TO *]', now), ['4'], 'NOW-1YEAR')
})

t.test('boosts and scores', async t => {
  t.same(await found('title:lazy^10 title:quick'), ['2', '3', '1'], 'a boosted clause ranks first')
  t.same(await found('title:lazy title:quick^10'), ['3', '1', '2'], 'boosting the other clause reverses that')
  const constant = await solr.get('test/select', { q: 'title:quick^=2', fl: 'id,score' })
  t.same(constant.body.response.docs, [{ id: '1', score: 2 }, { id: '3', score: 2 }], '^= gives a constant score (ties in index order)')
  const ranged = await solr.get('test/select', { q: 'price:[5 TO 20]', fl: 'id,score' })
  t.same(ranged.body.response.docs.map((d: { score: number }) => d.score), [1, 1, 1], 'range queries score 1')

  // BM25 (k1=1.2, b=0.75), the similarity of Solr 9 and Lucene 8 alike: a core of two short docs.
  const bm = await startSolrDev(t)
  await index(bm, 'test', [{ id: 'a', title: 'apple' }, { id: 'b', title: 'apple banana' }])
  const res = await bm.get('test/select', { q: 'title:apple', fl: 'id,score' })
  const idf = Math.log(1 + (2 - 2 + 0.5) / (2 + 0.5))
  const avgdl = 3 / 2
  const bm25 = (dl: number): number => idf * 1 / (1 + 1.2 * (1 - 0.75 + 0.75 * dl / avgdl))
  t.same(ids(res), ['a', 'b'])
  t.ok(Math.abs(res.body.response.docs[0].score - bm25(1)) < 1e-6, `score of the one-word doc is ${bm25(1)}`)
  t.ok(Math.abs(res.body.response.docs[1].score - bm25(2)) < 1e-6, `score of the two-word doc is ${bm25(2)}`)
  t.ok(Math.abs(res.body.response.maxScore - bm25(1)) < 1e-6, 'maxScore is the best score')
})

t.test('filter queries', async t => {
  t.same(await foundSet('*:*', { fq: ['category:news', 'featured:true'] }), ['1', '3'], 'repeated fq intersect')
  t.same(await foundSet('*:*', { fq: '-category:news' }), ['2', '4', '5'], 'a negative fq')
  t.same(await foundSet('*:*', { fq: 'views:[50 TO *]' }), ['1', '2', '5'], 'a range fq')
  const plain = await solr.get('test/select', { q: 'title:quick', fl: 'id,score' })
  const filtered = await solr.get('test/select', { q: 'title:quick', fq: 'category:news', fl: 'id,score' })
  t.same(filtered.body.response.docs, plain.body.response.docs, 'fq does not change scores')
  t.same(await found('title:quick', { fq: '' }), ['3', '1'], 'an empty fq is ignored')
})

t.test('query errors answer 400 in Solr\'s error shape', async t => {
  const cases: Array<[Query, number, string]> = [
    [{ q: 'title:(quick' }, 400, 'org.apache.solr.search.SyntaxError: Cannot parse \'title:(quick\': Encountered "<EOF>" at line 1, column 12.'],
    [{ q: 'nope:x' }, 400, 'undefined field nope'],
    [{ q: 'views:abc' }, 400, 'Invalid Number: abc for field views'],
    [{ q: 'published:yesterday' }, 400, 'Invalid Date String:\'yesterday\''],
    [{ q: 'published:[NOW-1FORTNIGHT TO NOW]' }, 400, 'Invalid Date Math String:\'NOW-1FORTNIGHT\''],
    [{ q: 'views:1*' }, 400, 'Can\'t run prefix queries on numeric fields'],
    [{ q: 'title:quick', 'q.op': 'XOR' }, 400, 'Invalid value for q.op parameter: XOR. Valid values are \'AND\' or \'OR\''],
    [{ q: 'hello', df: 'nope' }, 400, 'undefined field nope']
  ]
  for (const [query, status, msg] of cases) {
    const res = await solr.get('test/select', query)
    t.equal(res.status, status, `${JSON.stringify(query)} → ${status}`)
    t.same(res.body.error, solrError(status, msg), msg)
    t.same(res.body.responseHeader.status, status)
    t.same(res.body.responseHeader.params, query, 'the request params are echoed in errors too')
  }
  const noDf = await startSolrDev(t, { cores: { bare: `${TEST_CONFIGSET}/conf` } })
  const bare = await noDf.get('bare/select', { q: 'hello' })
  t.equal(bare.status, 200, 'a configset dir without conf/ works too (its solrconfig.xml still sets df)')
  const missing = await solr.get('test/select', { fl: 'id' })
  t.same(missing.body.response, { numFound: 0, start: 0, numFoundExact: true, docs: [] }, 'no q: nothing matches, as in Solr')
})

t.test('features solr-dev lacks answer 400 and say so', async t => {
  const cases: Array<[Query, string]> = [
    [{ q: '{!term f=id}1' }, 'solr-dev does not support local params ({!...}) in queries'],
    [{ q: 'filter(id:1)' }, 'solr-dev does not support filter(...) in queries'],
    [{ q: 'where:x' }, 'solr-dev does not support field \'where\': field type \'location\' (solr.LatLonPointSpatialField): this field type class is not supported'],
    [{ q: 'x', defType: 'edismax', qf: 'title' }, 'solr-dev does not support defType=edismax (only the standard lucene query parser)'],
    [{ q: '*:*', group: 'true', 'group.field': 'category' }, 'solr-dev does not support group=true'],
    [{ q: '*:*', 'json.facet': '{}' }, 'solr-dev does not support the parameter json.facet'],
    [{ q: '*:*', wt: 'xml' }, 'solr-dev does not support wt=xml (JSON only)']
  ]
  for (const [query, msg] of cases) {
    const res = await solr.get('test/select', query)
    t.equal(res.status, 400, JSON.stringify(query))
    t.equal(res.body.error.msg, msg)
  }
})
