import t from 'tap'
import { STALE_IN_SOLR } from '../../core/indexing/outbox.js'
import { build, talkBody } from '../helper.js'
import { waitFor } from '../queue/helper.js'
import { recordingProxy, type Recorded } from './helper.js'
import { patchSettings, startSolr } from './helper.js'

/**
 * What the service sends Solr for a search, counted in front of the search
 * server (solr-dev has no caches: real Solr's filter and result caches serve
 * a request again only when its `q`, `fq`, sort and `fl` repeat exactly). One
 * select per search, filters that stay the same from one search to the next,
 * `fl` without `*` or the score; and the coarse effective-date filter stays
 * exact: what it lets in that is not active now is neither shown nor counted.
 */

t.test('what a search sends Solr', async t => {
  const solr = await startSolr(t)
  const proxy = await recordingProxy(t, solr.port)
  // Solr commits every write (the default strategy): nothing waits in the outbox or unsettled once delivered.
  const app = await build(t, { env: { SOLR_ACTIVE: 'true', SOLR_PORT: String(proxy.port), SOLR_BASE: '/solr/plone' } })
  const admin = await app.tokenFor('admin')
  const titles: Record<string, string> = {}
  const publish = async (body: Record<string, unknown>): Promise<void> => {
    const created = await app.call('POST', '/talks', talkBody(body), admin)
    t.equal(created.statusCode, 201, created.body)
    titles[created.json()['@id']] = String(body.title)
    t.equal((await app.call('POST', `/talks/${created.json().id}/@workflow/publish`, {}, admin)).statusCode, 200)
  }
  await publish({ title: 'Alpha lecture now', effective: '2020-01-10T00:00:00Z' })
  await publish({ title: 'Beta lecture expired', effective: '2019-01-01T00:00:00Z', expires: '2020-01-01T00:00:00Z' })
  await publish({ title: 'Gamma lecture future', effective: '2030-01-01T00:00:00Z' })
  await waitFor('every write delivered and committed', async () => {
    const { rows: [{ waiting }] } = await app.app.db.query<{ waiting: number }>(`SELECT count(*)::int AS waiting FROM (${STALE_IN_SOLR}) stale`)
    return waiting === 0
  }, 10_000)

  const selects = (): Recorded[] => proxy.requests.filter(r => r.path.endsWith('/select'))
  const search = async (query: string): Promise<{ titles: string[], total: number }> => {
    const res = await app.call('GET', `/@search?${query}`)
    t.equal(res.headers['x-search-engine'], 'solr', query)
    return { titles: res.json().items.map((i: { '@id': string }) => titles[i['@id']]), total: res.json().items_total }
  }

  await t.test('the default filter changes once a minute and needs no exclusions when nothing is turning', async t => {
    proxy.requests.length = 0
    const words = ['lecture', 'alpha', 'now', 'lecture alpha', 'lect*']
    for (let round = 0; round < 4; round++) {
      for (const word of words) t.same((await search(`SearchableText=${encodeURIComponent(word)}`)).titles, ['Alpha lecture now'], word)
    }
    const sent = selects()
    t.equal(sent.length, 4 * words.length, 'one select per search')
    const filterSets = new Set(sent.map(r => JSON.stringify(r.params.getAll('fq'))))
    // 20 searches take well under a minute: at most one step boundary falls between them.
    t.ok(filterSets.size <= 2, `the same filters for every search (${filterSets.size} distinct sets)`)
    t.notOk(sent.some(r => r.params.getAll('fq').some(fq => fq.includes('UID'))), 'no exclusion filter: the talks outside now are outside the minute too')
    for (const r of sent) {
      const fl = (r.params.get('fl') ?? '').split(',')
      if (fl.includes('*') || fl.includes('score') || fl.length === 0) t.fail(`fl asks for more than the answer needs: ${r.params.get('fl') ?? ''}`)
    }
    t.equal(new Set(sent.map(r => r.params.get('fl'))).size, 1, 'one fl for every search of the same shape')
  })

  await t.test('a step of ~32 years: what it lets in is excluded by UID, so counts stay exact', async t => {
    await patchSettings(app, { effective_steps: 1_000_000_000 })
    proxy.requests.length = 0
    t.same(await search('SearchableText=lecture'), { titles: ['Alpha lecture now'], total: 1 })
    // The first page holds only the active talk: the other two would still count if Solr found them.
    t.same(await search('SearchableText=lecture&sort_on=sortable_title&b_size=1'), { titles: ['Alpha lecture now'], total: 1 }, 'not counted on a page that does not show them')
    t.same(await search('SearchableText=lecture&sort_on=sortable_title&sort_order=reverse&b_size=1'), { titles: ['Alpha lecture now'], total: 1 }, 'nor when they would sort first')
    const exclusions = new Set(selects().map(r => r.params.getAll('fq').filter(fq => fq.startsWith('-UID:')).join()))
    t.equal(exclusions.size, 1, 'one exclusion filter, the same for every search while nothing turns')
    t.equal([...exclusions][0].split(' OR ').length, 2, 'the expired and the future talk')
    await patchSettings(app, { effective_steps: 60 })
  })

  await t.test('a talk published this instant is found by the next search (its effective date is now, within the step)', async t => {
    for (let i = 0; i < 5; i++) {
      const created = await app.call('POST', '/talks', talkBody({ title: `Zeta${i} fresh` }), admin)
      t.equal(created.statusCode, 201)
      titles[created.json()['@id']] = `Zeta${i} fresh`
      const published = await app.call('POST', `/talks/${created.json().id}/@workflow/publish`, {}, admin)
      t.equal(published.statusCode, 200)
      t.same(await search(`SearchableText=zeta${i}`), { titles: [`Zeta${i} fresh`], total: 1 }, `talk ${i}: found at once`)
    }
  })
})
