import t from 'tap'
import type { FastifyBaseLogger } from 'fastify'
import { Solr } from '../../core/solr/client.js'
import { solrFields } from '../../core/solr/configset.js'
import { SolrQueryTranslator } from '../../core/solr/lucene.js'
import { QueryParser } from '../../core/query/parse.js'
import { runSelect } from '../../core/solr/search.js'
import { talkBody } from '../helper.js'
import { buildWithSolr, patchSettings, PUSHED, pushToSolr, slowProxy, startSolr } from './helper.js'

/**
 * `@search` answered by Solr (solr-dev on the generated configset, documents
 * built by the indexer's own builder): what is found, the catalogue's shapes,
 * facets, highlighting, security, escaping, and every search setting.
 */
const BASE = 'http://localhost:80'
const HOSTILE = 'C++ (advanced) "AND" foo:bar'

const TALKS: Record<string, Record<string, unknown>> = {
  routing: { title: 'Routing in depth', description: 'How requests find their handler', details: { 'content-type': 'text/html', data: '<p>We compare <b>Fastify</b> plugins with Express middleware.</p>' }, subjects: ['nodejs'], start: '2026-10-02T09:00:00Z' },
  fastify: { title: 'Fastify for Plone people', description: 'The REST API on a new stack', speaker: 'Jürgen Müller', subjects: ['nodejs', 'plone'], room: '101', start: '2026-10-01T10:00:00Z' },
  keynote: { title: 'Plone keynote', description: 'The state of Plone', speaker: 'Eric Steele', type_of_talk: 'Keynote', audience: ['Beginner', 'Advanced'], room: 'Auditorium', start: '2026-10-01T09:00:00Z' },
  cpp: { title: HOSTILE, description: 'Templates and other horrors', speaker: 'Zoë Ødegård', start: '2026-10-03T09:00:00Z' },
  strasse: { title: 'Die Straße der Ideen', description: 'Ein Vortrag über Œuvres. Die Ideen der Straße, lang und breit erklärt.', start: '2026-10-04T09:00:00Z' },
  expired: { title: 'Expired keynote', description: 'Plone of the past', effective: '2019-01-01T00:00:00Z', expires: '2020-01-01T00:00:00Z', start: '2026-10-05T09:00:00Z' }
}

t.test('@search answered by Solr', async t => {
  const solr = await startSolr(t)
  const app = await buildWithSolr(t, solr, PUSHED)
  const { call, tokenFor } = app
  const admin = await tokenFor('admin')
  const mia = await tokenFor('mia')
  const keyOf = new Map<string, string>([[`${BASE}/talks`, 'folder']])
  const uids: Record<string, string> = {}
  const create = async (key: string, body: Record<string, unknown>, token: string, publish: boolean): Promise<void> => {
    // Published long ago: "now" rounded down by effective_steps must not hide a talk published this second.
    const created = await call('POST', '/talks', talkBody({ effective: '2020-01-10T00:00:00Z', ...body }), token)
    t.equal(created.statusCode, 201, created.body)
    keyOf.set(created.json()['@id'], key)
    uids[key] = created.json().UID
    if (publish) t.equal((await call('POST', `/talks/${created.json().id}/@workflow/publish`, {}, admin)).statusCode, 200)
  }
  for (const [key, fields] of Object.entries(TALKS)) await create(key, fields, admin, true)
  await create('secret', { title: 'Secret fastify roadmap', description: 'Plone internals' }, admin, false)
  await create('draft', { title: 'Mia draft about fastify', description: 'Plone draft' }, mia, false)
  await pushToSolr(app.app)

  /** GET @search as `token` (anonymous by default): status, engine, body, result keys. */
  const search = async (query: string, token?: string): Promise<{ status: number, engine: unknown, body: any, keys: string[] }> => {
    const res = await call('GET', `/@search?${query}`, undefined, token)
    const body = res.json()
    return { status: res.statusCode, engine: res.headers['x-search-engine'], body, keys: res.statusCode === 200 ? body.items.map((i: { '@id': string }) => keyOf.get(i['@id']) ?? i['@id']) : [] }
  }
  const text = (words: string): string => `SearchableText=${encodeURIComponent(words)}`
  const found = async (query: string, token?: string): Promise<string[]> => {
    const res = await search(query, token)
    if (res.status !== 200 || res.engine !== 'solr') throw new Error(`${query}: ${res.status} ${String(res.engine)} ${JSON.stringify(res.body)}`)
    return res.keys.sort()
  }

  await t.test('a talk is found by words of its title, description, details and speaker, accents and case folded', async t => {
    const cases: Array<[string, string[], string]> = [
      ['routing', ['routing'], 'title'],
      ['handler', ['routing'], 'description'],
      ['middleware', ['routing'], 'the text of details'],
      ['steele', ['keynote'], 'speaker'],
      ['Müller', ['fastify'], 'as written'],
      ['muller', ['fastify'], 'without accent'],
      ['MÜLLER', ['fastify'], 'upper case'],
      ['zoe odegard', ['cpp'], 'ë and Ø'],
      ['STRASSE', ['strasse'], 'ß'],
      ['oeuvres', ['strasse'], 'œ'],
      ['fast', ['fastify', 'routing'], 'words are also prefixes (search_pattern: (w* OR w))'],
      ['"plone keynote"', ['keynote'], 'a phrase'],
      ['"keynote plone"', [], 'a phrase in the wrong order'],
      ['steele OR muller', ['fastify', 'keynote'], 'OR'],
      ['plone -keynote', ['fastify'], '-word'],
      ['published', [], 'not the workflow state']
    ]
    for (const [words, expected, why] of cases) t.same(await found(text(words)), expected.sort(), `${why}: ${words}`)
    const ranked = await search(text('fastify'))
    t.same(ranked.keys, ['fastify', 'routing'], 'relevance: the title match first')
  })

  await t.test('the catalogue\'s shapes: summaries, metadata, full objects, batching', async t => {
    for (const query of ['portal_type=talk&sort_on=created&metadata_fields=_all', 'portal_type=talk&sort_on=sortable_title&fullobjects=1', 'sort_on=start&sort_order=reverse&b_size=2&b_start=2']) {
      const fromSolr = await search(`${query}&use_solr=1`, admin)
      const fromCatalogue = await search(`${query}&use_solr=0`, admin)
      t.equal(fromSolr.engine, 'solr')
      t.equal(fromCatalogue.engine, 'catalogue')
      t.ok(fromSolr.body.items.length > 0, query)
      t.same(fromSolr.body.items, fromCatalogue.body.items, `the same items as the catalogue: ${query}`)
      t.equal(fromSolr.body.items_total, fromCatalogue.body.items_total, `and total: ${query}`)
    }
    const page = await search('portal_type=talk&use_solr=1&sort_on=created&b_size=2&b_start=2', admin)
    t.same(page.keys, ['keynote', 'cpp'])
    t.equal(page.body.items_total, 8)
    t.same(page.body.batching, {
      '@id': `${BASE}/@search?portal_type=talk&use_solr=1&sort_on=created&b_size=2&b_start=2`,
      first: `${BASE}/@search?b_start=0&portal_type=talk&use_solr=1&sort_on=created&b_size=2`,
      last: `${BASE}/@search?b_start=6&portal_type=talk&use_solr=1&sort_on=created&b_size=2`,
      prev: `${BASE}/@search?b_start=0&portal_type=talk&use_solr=1&sort_on=created&b_size=2`,
      next: `${BASE}/@search?b_start=4&portal_type=talk&use_solr=1&sort_on=created&b_size=2`
    }, 'batching links as the catalogue\'s')
    t.equal(page.body['@id'], `${BASE}/@search?portal_type=talk&use_solr=1`)
  })

  await t.test('criteria: path, keywords, field and date ranges, UID, sorting, sort_limit', async t => {
    const cases: Array<[string, string[], string]> = [
      ['path.query=/talks&path.depth=0', ['folder'], 'depth 0'],
      ['path.query=/talks/plone-keynote', ['keynote'], 'a path'],
      ['Subject.query=nodejs&Subject.query=plone&Subject.operator=and', ['fastify'], 'keywords ANDed'],
      ['Subject=nodejs', ['fastify', 'routing'], 'one keyword'],
      ['audience=Advanced', ['keynote'], 'a type\'s keyword index'],
      ['room:list=101&room:list=Auditorium', ['fastify', 'keynote'], 'a type\'s field index, ORed'],
      ['speaker=Eric Steele', ['keynote'], 'the whole value of a field index'],
      ['speaker=Eric', [], 'not part of it'],
      ['start.query=2026-10-02T09:00:00Z&start.range=min', ['cpp', 'routing', 'strasse'], 'date min, bound included'],
      ['start.query=2026-10-01T09:30:00Z&start.query=2026-10-02T09:00:00Z&start.range=min:max', ['fastify', 'routing'], 'date min:max'],
      [`UID=${uids.keynote}&UID=not-a-uid`, ['keynote'], 'UID'],
      ['UID=not-a-uid', [], 'a malformed UID'],
      ['type_of_talk=Keynote&review_state=published', ['keynote'], 'type_of_talk and review_state']
    ]
    for (const [query, expected, why] of cases) t.same(await found(`${query}&use_solr=1`), expected.sort(), `${why}: ${query}`)
    t.same((await search('portal_type=talk&use_solr=1&sort_on=sortable_title&sort_order=descending')).keys, ['routing', 'keynote', 'fastify', 'strasse', 'cpp'], 'sortable_title descending')
    t.same((await search('portal_type=talk&use_solr=1&sort_on=start&sort_limit=2')).keys, ['keynote', 'fastify'], 'sort_limit')
    t.equal((await search('portal_type=talk&use_solr=1&sort_on=start&sort_limit=2')).body.items_total, 2, 'sort_limit caps the total')
    // Volto's folder contents sorts by position, its listings by path: both engines give the same order.
    const visible = (key: string): boolean => Object.hasOwn(TALKS, key) && TALKS[key].expires === undefined
    const byPath = [...keyOf].filter(([, key]) => visible(key)).sort(([a], [b]) => a < b ? -1 : 1).map(([, key]) => key)
    const expected: Record<string, string[]> = { path: byPath, getObjPositionInParent: Object.keys(TALKS).filter(visible) }
    for (const [sortOn, order] of Object.entries(expected)) {
      for (const direction of ['ascending', 'descending']) {
        const query = `portal_type=talk&sort_on=${sortOn}&sort_order=${direction}`
        const viaSolr = await search(`${query}&use_solr=1`)
        const viaCatalogue = await search(query)
        t.same([viaSolr.engine, viaCatalogue.engine], ['solr', 'catalogue'])
        t.same(viaSolr.keys, direction === 'ascending' ? order : [...order].reverse(), `Solr: ${query}`)
        t.same(viaCatalogue.keys, viaSolr.keys, `the catalogue: ${query}`)
      }
    }
    for (const query of ['nosuch=1', 'sort_on=Subject', 'created.query=x&created.range=min', 'facet.field=nosuch', 'hl=true&hl.fl=nosuch']) {
      const res = await search(`${query}&${text('plone')}`)
      t.equal(res.status, 400, `${query}: 400 as from the catalogue`)
      t.equal(res.body.type, 'BadRequest')
    }
  })

  await t.test('facets and highlighting in the REST response', async t => {
    const faceted = await search(`${text('plone')}&facet=true`, admin)
    t.same(faceted.body.facets, { portal_type: { talk: 5 }, review_state: { published: 3, private: 2 } }, 'the default facets, over what the caller may see')
    t.same((await search(`${text('plone')}&facet=true`)).body.facets, { portal_type: { talk: 2 }, review_state: { published: 2 } }, 'anonymous counts')
    t.same((await search(`${text('plone')}&facet.field=room&facet.field=audience&b_size=1`)).body.facets,
      { room: { 101: 1, Auditorium: 1 }, audience: { Beginner: 2, Advanced: 1 } }, 'named fields imply facet=true, counted over all results')
    t.notOk('facets' in (await search(text('plone'))).body, 'none unless asked')
    const lit = await search(`${text('keynote')}&hl=true`)
    t.same(lit.body.highlighting, { [`${BASE}/talks/plone-keynote`]: { Title: ['Plone [keynote]'] } }, 'hl=true: snippets by @id, the settings\' markers, Title and Description by default')
    const fields = await search(`${text('plone')}&hl=true&hl.fl=Description&sort_on=sortable_title`)
    t.same(fields.body.highlighting, {
      [`${BASE}/talks/fastify-for-plone-people`]: {},
      [`${BASE}/talks/plone-keynote`]: { Description: ['The state of [Plone]'] }
    }, 'hl.fl; every item of the page has an entry')
    t.notOk('highlighting' in (await search(text('plone'))).body, 'none unless asked')
  })

  await t.test('anonymous never receives a private or expired talk from Solr', async t => {
    const queries = ['use_solr=1', 'use_solr=1&review_state=private', 'use_solr=1&show_inactive=true', text('secret'), text('roadmap'), text('expired'),
      text('*:* OR allowedRolesAndUsers:Manager'), text('roadmap) OR (*:*'), text('allowedRolesAndUsers:Anonymous OR secret'), text('"secret" OR review_state:private'),
      `use_solr=1&UID=${uids.secret}`, `use_solr=1&UID=${uids.expired}`, 'use_solr=1&path=/talks/secret-fastify-roadmap', 'use_solr=1&fullobjects=1', `${text('fastify')}&facet=true`]
    for (const query of queries) {
      const res = await search(query)
      t.equal(res.status, 200, query)
      t.equal(res.engine, 'solr', query)
      t.notOk(res.keys.some(k => ['secret', 'draft', 'expired'].includes(k)), `anonymous: ${query}`)
    }
    t.same(await found(text('roadmap'), mia), [], 'nor a member who did not write it')
    t.same(await found(text('roadmap'), admin), ['secret'], 'a Manager does')
    t.same(await found(text('expired'), admin), ['expired'], 'a Manager sees expired content')
    t.same(await found(text('draft'), mia), ['draft'], 'the owner finds her private draft (user$mia)')
  })

  await t.test('escaping: hostile input finds itself and injects nothing', async t => {
    t.same(await found(text(HOSTILE)), ['cpp'], 'the title finds its talk')
    t.same((await search(`title=${encodeURIComponent(HOSTILE)}&use_solr=1`)).status, 400, 'title is no index')
    t.same(await found(`Title=${encodeURIComponent(HOSTILE)}&use_solr=1`), ['cpp'], 'as a Title criterion too')
    for (const hostile of ['"', '\\', '\\"', '*:*', '{!lucene}*:*', '[* TO *]', 'foo:*', 'a && b || !c', 'x'.repeat(3000), `${'y'.repeat(3000)}*`, ':', '(', ')', '-', 'TO', '😀', '\u0007']) {
      const res = await search(text(hostile))
      t.equal(res.status, 200, JSON.stringify(hostile.slice(0, 20)))
      t.equal(res.engine, 'solr', 'answered by Solr, not by the fallback')
    }
    t.same(await found(`speaker=${encodeURIComponent('Eric Steele" OR speaker:"Zoë Ødegård')}&use_solr=1`), [], 'a quote in a field value cannot close the phrase')
  })

  await t.test('search settings, changed through @controlpanels, apply at once', async t => {
    t.same(await found(text('stack')), ['fastify'], 'before: a description word')
    await patchSettings(app, { search_pattern: '+Title:{value}' })
    t.same(await found(text('stack')), [], 'search_pattern: only titles now')
    t.same(await found(text('keynote')), ['keynote'])
    await patchSettings(app, { search_pattern: '+(Title:{value} OR SearchableText:({base_value}))' })
    t.same(await found(text('fast')), ['fastify'], '{value} has the prefix (a title), {base_value} has not (the details of "routing")')
    t.same(await found(text('fastify')), ['fastify', 'routing'], 'both match whole words')
    await patchSettings(app, { search_pattern: '' })
    t.same(await found(text('stack')), ['fastify'], 'no pattern: SearchableText itself')

    t.same(await found(text('kenote')), [], 'a typo finds nothing …')
    await patchSettings(app, { levenshtein_distance: 1 })
    t.same(await found(text('kenote')), ['keynote'], '… with levenshtein_distance 1 it does')
    t.same(await found(text('kynte')), [], 'two edits away: still nothing')
    await patchSettings(app, { levenshtein_distance: 2 })
    t.same(await found(text('kynte')), ['keynote'], 'with distance 2 it does')
    await patchSettings(app, { levenshtein_distance: 0 })

    t.equal((await search('portal_type=talk')).engine, 'catalogue', 'required: no SearchableText, the catalogue')
    await patchSettings(app, { required: ['speaker'] })
    t.equal((await search('speaker=Eric Steele')).engine, 'solr', 'required: speaker now sends the query to Solr')
    t.equal((await search(text('plone'))).engine, 'catalogue', 'and SearchableText no longer does')
    await patchSettings(app, { required: ['SearchableText'] })

    t.same((await search(`${text('plone')}&facet=true`)).body.facets, { portal_type: { talk: 2 }, review_state: { published: 2 } })
    await patchSettings(app, { facets: ['room'] })
    t.same((await search(`${text('plone')}&facet=true`)).body.facets, { room: { 101: 1, Auditorium: 1 } }, 'facets: the default facet fields')
    await patchSettings(app, { facets: ['portal_type', 'review_state'] })

    const all = await search(text('plone'), admin)
    t.equal(all.body.items.length, 5)
    await patchSettings(app, { max_results: 3 })
    const capped = await search(`${text('plone')}&b_size=25`, admin)
    t.equal(capped.body.items.length, 3, 'max_results caps the rows of a page')
    t.equal(capped.body.items_total, 5, 'not the total')
    t.equal(capped.body.batching.next, `${BASE}/@search?b_start=3&${text('plone')}&b_size=25`, 'the batching links follow the capped page')
    await patchSettings(app, { max_results: 5 })
    t.equal((await search(`${text('plone')}&b_size=25`, admin)).body.items.length, 5, 'at the cap: all')
    await patchSettings(app, { max_results: 500 })

    await patchSettings(app, { highlight_fields: ['Description'], highlight_formatter_pre: '<em>', highlight_formatter_post: '</em>' })
    t.same((await search(`${text('state')}&hl=true`)).body.highlighting, { [`${BASE}/talks/plone-keynote`]: { Description: ['The <em>state</em> of Plone'] } }, 'highlight_fields and the markers')
    const fragment = async (): Promise<string> => String((await search(`${text('oeuvres')}&hl=true`)).body.highlighting[`${BASE}/talks/die-strasse-der-ideen`].Description[0])
    t.equal(await fragment(), 'Ein Vortrag über <em>Œuvres</em>. Die Ideen der Straße, lang und breit erklärt.', 'highlight_fragsize 100: the whole description')
    await patchSettings(app, { highlight_fragsize: 1 })
    t.equal(await fragment(), 'Ein Vortrag über <em>Œuvres</em>. ', 'highlight_fragsize 1: the matching sentence only')
    await patchSettings(app, { highlight_fields: [], highlight_formatter_pre: '[', highlight_formatter_post: ']', highlight_fragsize: 100 })

    await patchSettings(app, { exclude_user: true })
    t.same(await found(text('draft'), mia), [], 'exclude_user: the owner\'s user$ grant no longer counts')
    await patchSettings(app, { exclude_user: false })
    t.same(await found(text('draft'), mia), ['draft'])

    t.same(await found(text('keynote')), ['keynote'], 'default effective_steps: published in 2026, found')
    await patchSettings(app, { effective_steps: 1_000_000_000 })
    // Steps round "now" up for effective (issue 14: what is already effective is always found), so even a step of ~32 years keeps it.
    t.same(await found(text('keynote')), ['keynote'], 'effective_steps of ~32 years: an effective talk is still found')
    // The step lets in the talk that expired in 2020; it is left out by UID, so not even a count on another page shows it.
    const firstOfTwo = await search(`${text('keynote')}&sort_on=sortable_title&sort_order=reverse&b_size=1`)
    t.same([firstOfTwo.keys, firstOfTwo.body.items_total], [['keynote'], 1], 'effective_steps of ~32 years: the expired talk is neither shown nor counted')
    await patchSettings(app, { effective_steps: 60 })

    const ranked = async (query: string): Promise<string[]> => (await search(query)).keys
    const either = text('stack OR keynote')
    t.same(await ranked(either), ['fastify', 'keynote'], 'relevance: "stack" in a short description outweighs "keynote" in the title')
    await patchSettings(app, { boost_rules: { Title: 1000 } })
    t.same(await ranked(either), ['keynote', 'fastify'], 'boost_rules, a field boost: the title match first')
    for (const [room, first] of [['101', 'fastify'], ['Auditorium', 'keynote']]) {
      await patchSettings(app, { boost_rules: { [`room:${room}`]: 1000 } })
      t.equal((await ranked(text('plone')))[0], first, `boost_rules, a document boost: room ${room} first`)
    }
    t.same(await found(text('plone')), ['fastify', 'keynote'], 'boosts change the order, never what is found')
    for (const rules of [{ nosuch: 2 }, { 'room:': 2 }, { Title: 0 }, { Title: 'high' }]) {
      const res = await call('PATCH', '/@controlpanels/solr-controlpanel', { boost_rules: rules }, admin)
      t.equal(res.statusCode, 400, `boost_rules ${JSON.stringify(rules)} refused`)
      t.match(res.json(), { type: 'BadRequest', errors: [{ field: 'boost_rules' }] }, 'in the error shape, naming the setting')
    }
    t.same(app.app.solrSettings.current.boost_rules, { 'room:Auditorium': 1000 }, 'a refused change changes nothing')
    await patchSettings(app, { boost_rules: {} })
  })

  await t.test('settings seen only in the request to Solr: filter_queries, field_list, slow_query_threshold', async t => {
    const parser = new QueryParser(name => app.app.catalogSearch.index(name))
    const translator = new SolrQueryTranslator(new Set(solrFields(app.app.contentTypes).map(f => f.name)))
    const lines: string[] = []
    const log = { debug: () => {}, info: (_: object, message: string) => { lines.push(message) } } as unknown as FastifyBaseLogger
    const select = async (settings = app.app.solrSettings.current, port = solr.port): Promise<any> => {
      const client = new Solr(() => ({ ...settings, port }))
      t.teardown(() => { client.close() })
      const query = parser.parse({
        criteria: { portal_type: 'talk', SearchableText: 'plone' }, sortOn: [], descending: false, start: 0, size: 10, principals: ['Anonymous'], showInactive: false
      })
      const { params } = translator.translate({ ...query, neededFields: ['UID', 'path_string'] }, settings)
      return await runSelect(client, params, settings, log)
    }
    const echoed = async (settings = app.app.solrSettings.current): Promise<any> => (await select(settings)).responseHeader.params
    t.match((await echoed()).fq, ['allowedRolesAndUsers:("Anonymous")', /effective/, '(portal_type:("talk"))'], 'filter_queries: portal_type in its own fq (Solr echoes it)')
    t.notMatch((await echoed()).q, /portal_type/, 'and not in q')
    await patchSettings(app, { filter_queries: [] })
    t.match((await echoed()).q, /\+\(portal_type:\("talk"\)\)/, 'without filter_queries it stays in q')
    t.equal((await select()).response.numFound, 2, 'the same results either way')
    await patchSettings(app, { filter_queries: ['portal_type'] })

    t.same(Object.keys((await select()).response.docs[0]).sort(), ['UID', 'path_string'], 'field_list empty: only what the answer needs')
    await patchSettings(app, { field_list: ['Title'] })
    t.same(Object.keys((await select()).response.docs[0]).sort(), ['Title', 'UID', 'path_string'], 'field_list, plus what the answer needs')
    await patchSettings(app, { field_list: [] })

    const slow = await slowProxy(t, solr.port, 60)
    await select({ ...app.app.solrSettings.current, slow_query_threshold: 0 }, slow)
    t.same(lines, [], 'threshold 0: no slow-query log')
    await select({ ...app.app.solrSettings.current, slow_query_threshold: 10_000 }, slow)
    t.same(lines, [], 'a query faster than the threshold: none')
    await select({ ...app.app.solrSettings.current, slow_query_threshold: 30 }, slow)
    t.match(lines, [/^slow Solr query: \d+\/\d+ ms for /], 'a slower query is logged with Solr\'s QTime and the elapsed time')
  })
})
