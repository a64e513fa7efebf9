import t from 'tap'
import type tap from 'tap'
import { talkBody } from '../helper.js'
import { buildWithSolr, patchSettings, PUSHED, pushToSolr, slowProxy, startSolr } from './helper.js'

/**
 * Routing between Solr and the catalogue (docs/search.md): the active switch,
 * rules 1–3, the X-Search-Engine header, and rule 4, the fallback to the
 * catalogue when Solr is down or too slow (X-Search-Fallback), never a 500.
 * "fast" tells the engines apart: Solr's search_pattern makes words prefixes,
 * the catalogue does not (plone.restapi adds no `*`).
 */
const BASE = 'http://localhost:80'

t.test('routing', async t => {
  const solr = await startSolr(t)
  const app = await buildWithSolr(t, solr, { ...PUSHED, SOLR_ACTIVE: undefined })
  const admin = await app.tokenFor('admin')
  for (const title of ['Fastify for Plone people', 'Plone keynote']) {
    const created = await app.call('POST', '/talks', talkBody({ title, description: 'A talk', effective: '2020-01-10T00:00:00Z' }), admin)
    t.equal(created.statusCode, 201, created.body)
    t.equal((await app.call('POST', `/talks/${created.json().id}/@workflow/publish`, {}, admin)).statusCode, 200)
  }
  await pushToSolr(app.app)

  /** The engine that answered, the fallback header and the titles found (anonymous). */
  const route = async (query: string): Promise<{ status: number, engine: unknown, fallback: unknown, titles: string[], body: any }> => {
    const res = await app.call('GET', `/@search?${query}`)
    const body = res.json()
    return {
      status: res.statusCode,
      engine: res.headers['x-search-engine'],
      fallback: res.headers['x-search-fallback'],
      body,
      titles: res.statusCode === 200 ? body.items.map((i: { title: string }) => i.title).sort() : []
    }
  }
  const expectEngine = async (t: Pick<typeof tap, 'equal'>, cases: Array<[string, 'solr' | 'catalogue', string]>): Promise<void> => {
    for (const [query, engine, why] of cases) {
      const res = await route(query)
      t.equal(res.status, 200, query)
      t.equal(res.engine, engine, `${why}: ${query}`)
      t.equal(res.fallback, undefined, `no fallback: ${query}`)
    }
  }

  await t.test('Solr inactive (the default): the catalogue answers everything', async t => {
    await expectEngine(t, [['SearchableText=fast', 'catalogue', 'active off'], ['use_solr=1', 'catalogue', 'even use_solr']])
    t.same((await route('SearchableText=fast')).titles, [], 'no automatic prefix in the catalogue')
  })

  await patchSettings(app, { active: true })

  await t.test('rules 1–3 with Solr active', async t => {
    await expectEngine(t, [
      ['SearchableText=fast', 'solr', 'rule 1: a required field with a value'],
      ['SearchableText=fast&portal_type=talk', 'solr', 'rule 1, with other criteria'],
      ['SearchableText.query=fast', 'solr', 'rule 1, as a record'],
      ['SearchableText=', 'catalogue', 'rule 1: an empty value does not count'],
      ['SearchableText=%20%20', 'catalogue', 'nor blanks'],
      ['portal_type=talk', 'catalogue', 'rule 2: no required field'],
      ['', 'catalogue', 'rule 2: no criteria at all'],
      ['portal_type=talk&use_solr=1', 'solr', 'rule 3: use_solr=1'],
      ['use_solr=True', 'solr', 'rule 3: True'],
      ['use_solr=yes', 'solr', 'rule 3: yes'],
      ['use_solr=please', 'solr', 'rule 3: any truthy value'],
      ['use_solr=0', 'catalogue', 'use_solr=0 does not force'],
      ['use_solr=False', 'catalogue', 'nor False'],
      ['SearchableText=fast&use_solr=false', 'solr', 'use_solr=false does not prevent rule 1']
    ])
    t.same((await route('SearchableText=fast')).titles, ['Fastify for Plone people'], 'Solr answered: words are prefixes')
    t.same((await route('use_solr=1&portal_type=talk')).titles, ['Fastify for Plone people', 'Plone keynote'], 'use_solr without text: everything visible')
  })

  await t.test('the required setting', async t => {
    await patchSettings(app, { required: ['speaker', 'Subject'] })
    await expectEngine(t, [
      ['Subject=plone', 'solr', 'any one of the required fields'],
      ['SearchableText=fast', 'catalogue', 'SearchableText is no longer required']
    ])
    await patchSettings(app, { required: [] })
    await expectEngine(t, [['', 'solr', 'an empty list sends every query to Solr (collective.solr)'], ['portal_type=talk', 'solr', 'every query']])
    await patchSettings(app, { required: ['SearchableText'] })
    await expectEngine(t, [['portal_type=talk', 'catalogue', 'back to the default']])
  })

  await t.test('rule 4: Solr stopped → the catalogue answers, never a 500', async t => {
    await solr.stop()
    for (const query of ['SearchableText=fastify', 'SearchableText=fastify', 'use_solr=1&portal_type=talk&facet=true', 'SearchableText=fastify&hl=true&fullobjects=1']) {
      const res = await route(query)
      t.equal(res.status, 200, `${query}: 200`)
      t.equal(res.engine, 'catalogue', 'answered by the catalogue')
      t.equal(res.fallback, 'catalogue', 'X-Search-Fallback: catalogue')
      t.ok(res.titles.includes('Fastify for Plone people'), 'with the catalogue\'s results')
      t.equal(res.body['@id'], `${BASE}/@search?${query}`, 'in the usual shape')
    }
    t.same((await route('SearchableText=fast')).titles, [], 'the catalogue\'s semantics (no automatic prefix)')
    const bad = await route('SearchableText=fastify&sort_on=Subject')
    t.equal(bad.status, 400, 'a bad query is still a 400, not a fallback')
    await solr.start()
    const back = await route('SearchableText=fast')
    t.equal(back.engine, 'solr', 'Solr back: it answers again')
    t.equal(back.fallback, undefined)
    t.same(back.titles, ['Fastify for Plone people'])
  })

  await t.test('rule 4: a Solr slower than search_timeout → the catalogue answers in time', async t => {
    const slow = await slowProxy(t, solr.port, 1000)
    const slowApp = await buildWithSolr(t, { port: slow }, PUSHED)
    await patchSettings(slowApp, { search_timeout: 0.2 })
    let started = Date.now()
    let res = await slowApp.call('GET', '/@search?SearchableText=plone')
    t.equal(res.statusCode, 200)
    t.equal(res.headers['x-search-engine'], 'catalogue')
    t.equal(res.headers['x-search-fallback'], 'catalogue', 'timed out: the catalogue answered')
    t.ok(Date.now() - started < 900, `within the timeout, not after Solr's 1 s (${Date.now() - started} ms)`)
    await patchSettings(slowApp, { search_timeout: 5 })
    started = Date.now()
    res = await slowApp.call('GET', '/@search?SearchableText=plone')
    t.equal(res.headers['x-search-engine'], 'solr', 'a timeout longer than Solr\'s delay: Solr answers')
    t.equal(res.headers['x-search-fallback'], undefined)
    t.ok(Date.now() - started >= 1000, 'after its delay')
  })
})
