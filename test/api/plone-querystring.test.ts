import t from 'tap'
import { build, talkBody } from '../helper.js'

/**
 * `@querystring` and `@querystring-search` against plone.restapi's
 * examples (querystring_get, querystringsearch_post, querystringsearch_get).
 */
const BASE = 'http://localhost:80'
const OP = 'plone.app.querystring.operation.'

t.test('@querystring and @querystring-search', async t => {
  const { call, tokenFor } = await build(t)
  const admin = await tokenFor('admin')
  const owner = await tokenFor('olga')
  const titles = ['Beta talk', 'Alpha talk', 'Gamma keynote']
  for (const title of titles) {
    const res = await call('POST', '/talks', talkBody({ title, type_of_talk: title.includes('keynote') ? 'Keynote' : 'Talk', subjects: ['plone'] }), owner)
    const path = new URL(res.json()['@id']).pathname
    if (title !== 'Gamma keynote') await call('POST', `${path}/@workflow/publish`, undefined, admin)
  }

  await t.test('@querystring: the catalogue\'s indexes with their operations and values', async t => {
    const body = (await call('GET', '/@querystring')).json()
    t.equal(body['@id'], `${BASE}/@querystring`)
    t.match(body.indexes.portal_type, {
      title: 'Type',
      group: 'Metadata',
      enabled: true,
      sortable: true,
      operations: [`${OP}selection.any`],
      values: { talk: { title: 'Talk' }, folder: { title: 'Folder' } }
    })
    t.notOk('Plone Site' in body.indexes.portal_type.values)
    t.match(body.indexes.portal_type.operators[`${OP}selection.any`], { title: 'Matches any of', widget: 'MultipleSelectionWidget', operation: 'plone.app.querystring.queryparser._contains' })
    t.match(body.indexes.Subject, { vocabulary: 'plone.app.vocabularies.Keywords', operations: [`${OP}selection.any`, `${OP}selection.all`] })
    t.match(body.indexes.type_of_talk, { title: 'Type of talk', values: { Keynote: { title: 'Keynote' } } })
    t.match(body.indexes.review_state.values, { published: { title: 'Published' }, private: { title: 'Private' } })
    t.same(body.indexes.SearchableText.operations, [`${OP}string.contains`])
    t.same(body.indexes.path.operations, [`${OP}string.absolutePath`, `${OP}string.relativePath`, `${OP}string.path`])
    t.ok(body.indexes.effective.operations.includes(`${OP}date.between`))
    t.notOk('allowedRolesAndUsers' in body.indexes, 'security indexes are not offered')
    t.ok('sortable_title' in body.sortable_indexes && 'effective' in body.sortable_indexes)
    t.notOk('Subject' in body.sortable_indexes)
  })

  const titlesOf = (res: { json: () => { items: Array<{ title: string }> } }): string[] => res.json().items.map(i => i.title)

  await t.test('POST: a listing block\'s query, sorted, limited, with the caller\'s access', async t => {
    const query = { query: [{ i: 'portal_type', o: `${OP}selection.any`, v: ['talk'] }], sort_on: 'sortable_title', sort_order: 'ascending' }
    const anonymous = await call('POST', '/@querystring-search', query)
    t.equal(anonymous.statusCode, 200, anonymous.body)
    t.equal(anonymous.json()['@id'], `${BASE}/@querystring-search`)
    t.same(titlesOf(anonymous), ['Alpha talk', 'Beta talk'], 'anonymous sees the published talks only')
    t.match(anonymous.json().items[0], { '@id': `${BASE}/talks/alpha-talk`, '@type': 'talk', review_state: 'published', type_title: 'Talk' })
    t.same(titlesOf(await call('POST', '/@querystring-search', { ...query, sort_order: 'descending' }, owner)), ['Gamma keynote', 'Beta talk', 'Alpha talk'])
    const limited = await call('POST', '/@querystring-search', { ...query, limit: 2 }, owner)
    t.equal(limited.json().items_total, 2)
    const paged = await call('POST', '/@querystring-search', { ...query, b_size: 1, b_start: 1 }, owner)
    t.same(titlesOf(paged), ['Beta talk'])
    t.equal(paged.json().items_total, 3)
    const full = await call('POST', '/@querystring-search', { ...query, fullobjects: true, b_size: 1 }, owner)
    t.equal(full.json().items[0].type_of_talk, 'Talk')
    const meta = await call('POST', '/@querystring-search', { ...query, metadata_fields: '_all', b_size: 1 }, owner)
    t.ok('Subject' in meta.json().items[0])
  })

  await t.test('operations: selection, text, paths, dates, the current user', async t => {
    const search = async (query: unknown[], token = owner): Promise<string[]> => titlesOf(await call('POST', '/talks/@querystring-search', { query, sort_on: 'sortable_title' }, token))
    t.same(await search([{ i: 'type_of_talk', o: `${OP}selection.any`, v: ['Keynote'] }]), ['Gamma keynote'])
    // Volto's search block facets send list.contains: any of the values.
    t.same(await search([{ i: 'type_of_talk', o: `${OP}list.contains`, v: ['Keynote', 'Nothing of the kind'] }]), ['Gamma keynote'], 'list.contains, as a facet sends it')
    t.same(await search([{ i: 'SearchableText', o: `${OP}string.contains`, v: 'alpha' }]), ['Alpha talk'])
    t.same(await search([{ i: 'Subject', o: `${OP}selection.all`, v: ['plone'] }, { i: 'review_state', o: `${OP}selection.any`, v: ['private'] }]), ['Gamma keynote'])
    t.same(await search([{ i: 'path', o: `${OP}string.absolutePath`, v: '/talks::1' }, { i: 'portal_type', o: `${OP}selection.any`, v: 'talk' }]), ['Alpha talk', 'Beta talk', 'Gamma keynote'])
    t.same(await search([{ i: 'path', o: `${OP}string.relativePath`, v: '..::1' }, { i: 'portal_type', o: `${OP}selection.any`, v: 'folder' }]), ['Talks'], 'relative to the context')
    t.same(await search([{ i: 'Creator', o: `${OP}string.currentUser` }]), ['Alpha talk', 'Beta talk', 'Gamma keynote'])
    t.same(await search([{ i: 'Creator', o: `${OP}string.currentUser` }], admin), ['Talks'], 'the site\'s folders are admin\'s')
    const talks = { i: 'portal_type', o: `${OP}selection.any`, v: ['talk'] }
    t.same(await search([talks, { i: 'effective', o: `${OP}date.largerThanRelativeDate`, v: '1' }]), ['Alpha talk', 'Beta talk'], 'published within the last day')
    t.same(await search([{ i: 'created', o: `${OP}date.beforeToday` }]), [])
  })

  await t.test('GET with the query as URL-encoded JSON, as plone.restapi', async t => {
    const json = JSON.stringify({ query: [{ i: 'portal_type', o: `${OP}selection.any`, v: ['talk'] }], sort_on: 'sortable_title' })
    const res = await call('GET', `/@querystring-search?query=${encodeURIComponent(encodeURIComponent(json))}`)
    t.equal(res.statusCode, 200, res.body)
    t.same(titlesOf(res), ['Alpha talk', 'Beta talk'])
    t.equal((await call('GET', '/@querystring-search?query=%7Bnot-json')).statusCode, 400)
    const proto = await call('GET', `/@querystring-search?query=${encodeURIComponent(encodeURIComponent('{"__proto__": {"x": 1}, "query": []}'))}`)
    t.equal(proto.statusCode, 400, 'prototype keys are refused')
    t.equal(proto.json().type, 'BadRequest')
  })

  await t.test('bad queries are 400 in the contract\'s shape', async t => {
    for (const body of [
      {},
      { query: [] },
      { query: [{ i: 'portal_type', o: 'no.such.operation', v: 'talk' }] },
      { query: [{ i: 'no_such_index', o: `${OP}selection.any`, v: 'x' }] },
      { query: [{ i: 'portal_type', o: `${OP}selection.any`, v: 'talk' }], sort_on: 'Subject' },
      { query: [{ i: 'effective', o: `${OP}date.lessThan`, v: 'not a date' }] },
      { query: [{ i: 'portal_type', o: `${OP}selection.any`, v: 'talk' }], b_size: 'x' }
    ]) {
      const res = await call('POST', '/@querystring-search', body)
      t.equal(res.statusCode, 400, JSON.stringify(body))
      t.equal(res.json().type, 'BadRequest')
    }
  })
})
