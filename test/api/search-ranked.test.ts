import t from 'tap'
import { CatalogSearch } from '../../core/catalog/search.js'
import { QueryParser } from '../../core/query/parse.js'
import { build, talkBody } from '../helper.js'

/**
 * Full text on the catalogue ranks a bounded set of candidates: the most
 * recent matches by relevance, then the other matches newest first
 * (docs/search.md). Checked against an oracle that reads PostgreSQL's own
 * ts_rank_cd and the creation times, with a bound of 5 so that 14 talks
 * cross it, on every page size.
 */
t.test('relevance ranks the most recent candidates, then the rest newest first; pages agree', async t => {
  const { app, call, tokenFor } = await build(t)
  const admin = await tokenFor('admin')
  // Four rank levels, mixed over creation order: 'plone' once to four times in the description.
  for (let i = 0; i < 14; i++) {
    const body = talkBody({ title: `Talk ${i}`, description: Array.from({ length: (i * 7) % 4 + 1 }, () => 'plone').join(' and ') })
    const created = await call('POST', '/talks', body, admin)
    t.equal(created.statusCode, 201)
    t.equal((await call('POST', `/talks/${created.json().id}/@workflow/publish`, {}, admin)).statusCode, 200)
  }
  await call('POST', '/talks', talkBody({ title: 'Unrelated', description: 'nothing to see' }), admin)

  const { rows: truth } = await app.db.query<{ uid: string, rank: number, created: Date }>(
    "SELECT uid, ts_rank_cd(searchable, to_tsquery('simple', 'plone')) AS rank, created FROM catalog WHERE searchable @@ to_tsquery('simple', 'plone')")
  t.equal(truth.length, 14, 'the oracle sees every match')
  const newestFirst = [...truth].sort((a, b) => b.created.getTime() - a.created.getTime() || (b.uid < a.uid ? -1 : 1))
  const byRank = (rows: typeof truth): string[] => [...rows]
    .sort((a, b) => b.rank - a.rank || a.created.getTime() - b.created.getTime() || (a.uid < b.uid ? -1 : 1)).map(r => r.uid)
  const bounded = [...byRank(newestFirst.slice(0, 5)), ...newestFirst.slice(5).map(r => r.uid)]
  t.not(new Set(truth.map(r => r.rank)).size, 1, 'the ranks differ (the test can tell orders apart)')
  t.notSame(bounded, byRank(truth), 'the bounded order differs from ranking everything')

  const search = async (catalogue: CatalogSearch, start: number, size: number): Promise<{ uids: string[], total: number, rows: ReadonlyArray<Record<string, unknown>> }> => {
    const parser = new QueryParser(name => catalogue.index(name))
    const query = parser.parse({ criteria: { SearchableText: 'plone' }, sortOn: [], descending: false, start, size, principals: ['Anonymous'], showInactive: false })
    const result = await catalogue.search(app.db, query)
    return { uids: result.rows.map(r => String(r.uid)), total: result.total, rows: result.rows }
  }
  const pages = async (catalogue: CatalogSearch, size: number): Promise<string[]> => {
    const uids: string[] = []
    for (let start = 0; start < 14; start += size) {
      const page = await search(catalogue, start, size)
      t.equal(page.total, 14, `items_total stays exact (page of ${size} at ${start})`)
      uids.push(...page.uids)
    }
    return uids
  }

  const boundedCatalogue = new CatalogSearch(app.contentTypes, undefined, 5)
  const onePage = await search(boundedCatalogue, 0, 50)
  t.same(onePage.uids, bounded, 'one page: the five newest matches by rank, then the rest newest first')
  // The candidates carry only the page's columns: every metadata column (`created` among them, which the order also reads) still arrives.
  const createdOf = new Map(truth.map(r => [r.uid, r.created.getTime()]))
  t.same(onePage.rows.map(r => new Date(r.created as string).getTime()), onePage.uids.map(uid => createdOf.get(uid)), 'each row carries its own creation time')
  for (const size of [1, 3, 4, 5, 6, 13]) t.same(await pages(boundedCatalogue, size), bounded, `pages of ${size} put together give the same order`)
  t.same((await search(new CatalogSearch(app.contentTypes), 0, 50)).uids, byRank(truth), 'within the default bound every match is ranked')
})
