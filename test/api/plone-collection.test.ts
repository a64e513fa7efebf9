import t from 'tap'
import { build, talkBody } from '../helper.js'

/**
 * The Collection (content-types/collection): a stored query whose GET lists
 * its results as plone.restapi serializes a collection, each reader's own.
 * The oracle is `@querystring-search` run with the same query by the same
 * reader: a collection must answer exactly what it answers.
 */
t.test('Collection', async t => {
  const { call, tokenFor } = await build(t)
  const admin = await tokenFor('admin')
  const jane = await tokenFor('jane')
  const titles = ['Alpha rest', 'Bravo rest', 'Charlie rest', 'Delta rest', 'Echo rest']
  for (const [i, title] of titles.entries()) {
    const created = await call('POST', '/talks', talkBody({ title, type_of_talk: i % 2 === 0 ? 'Keynote' : 'Talk' }), jane)
    t.equal(created.statusCode, 201)
    if (i < 3) t.equal((await call('POST', `${new URL(created.json()['@id']).pathname}/@workflow/publish`, {}, admin)).statusCode, 200)
  }
  const talks = [{ i: 'portal_type', o: 'plone.app.querystring.operation.selection.any', v: ['talk'] }]
  const create = async (fields: Record<string, unknown>): Promise<string> => {
    const res = await call('POST', '/', { '@type': 'Collection', title: 'Talks', ...fields }, admin)
    t.equal(res.statusCode, 201, res.body)
    t.equal((await call('POST', `${new URL(res.json()['@id']).pathname}/@workflow/publish`, {}, admin)).statusCode, 200)
    return new URL(res.json()['@id']).pathname
  }
  const titlesOf = (body: { items: Array<{ title: string }> }): string[] => body.items.map(i => i.title)

  t.test('its GET lists what @querystring-search answers the same reader, batched', async t => {
    const path = await create({ id: 'all-talks', query: talks, sort_on: 'sortable_title' })
    const searches: Array<[string, Record<string, unknown>]> = [
      ['anonymous', {}], ['the owner', { token: jane }], ['a Manager', { token: admin }]
    ]
    for (const [who, { token }] of searches as Array<[string, { token?: string }]>) {
      const collection = await call('GET', path, undefined, token)
      t.equal(collection.statusCode, 200)
      const oracle = (await call('POST', '/@querystring-search', { query: talks, sort_on: 'sortable_title', limit: 1000 }, token)).json()
      t.same(titlesOf(collection.json()), titlesOf(oracle), who)
      t.equal(collection.json().items_total, oracle.items_total, who)
    }
    t.same(titlesOf((await call('GET', path)).json()), ['Alpha rest', 'Bravo rest', 'Charlie rest'], 'anonymous sees the published talks only')
    t.equal((await call('GET', path, undefined, admin)).json().items_total, 5, 'a Manager sees every talk')
    const page = (await call('GET', `${path}?b_size=2&b_start=2`, undefined, admin)).json()
    t.same(titlesOf(page), ['Charlie rest', 'Delta rest'])
    t.match(page, { items_total: 5, batching: { '@id': `http://localhost:80${path}?b_size=2&b_start=2`, next: `http://localhost:80${path}?b_start=4&b_size=2` } })
    t.match((await call('GET', path)).json(), { '@type': 'Collection', query: talks, sort_on: 'sortable_title', limit: 1000, item_count: 30 })
  })

  t.test('the answer to a write that returns the object lists as its GET does (Volto shows a collection it saved at once)', async t => {
    const created = await call('POST', '/', { '@type': 'Collection', title: 'Fresh', query: talks, sort_on: 'sortable_title' }, admin)
    t.equal(created.statusCode, 201, created.body)
    const path = new URL(created.json()['@id']).pathname
    t.same(titlesOf(created.json()), titlesOf((await call('GET', path, undefined, admin)).json()))
    t.equal(created.json().items_total, 5)
    const patched = await call('PATCH', path, { sort_reversed: true, limit: 1 }, admin, { prefer: 'return=representation' })
    t.equal(patched.statusCode, 200, patched.body)
    t.same(titlesOf(patched.json()), ['Echo rest'])
    const folder = await call('POST', '/', { '@type': 'Document', title: 'A page' }, admin)
    t.match(folder.json(), { items: [], items_total: 0 }, 'a folderish object lists its (no) items')
  })

  t.test('sort_reversed and limit are the stored query\'s', async t => {
    const path = await create({ query: talks, sort_on: 'sortable_title', sort_reversed: true, limit: 2 })
    const body = (await call('GET', path, undefined, admin)).json()
    t.same(titlesOf(body), ['Echo rest', 'Delta rest'])
    t.equal(body.items_total, 2)
  })

  t.test('numbers as Volto\'s number widget sends them (the text typed) are read as plone.restapi reads them; other text is refused', async t => {
    const path = await create({ query: talks, sort_on: 'sortable_title', limit: ' 3 ', item_count: '+2' })
    const body = (await call('GET', path, undefined, admin)).json()
    t.match(body, { limit: 3, item_count: 2 }, 'kept as numbers')
    t.equal(body.items_total, 3, 'the limit applies')
    for (const wrong of ['3x', '1.5', '', '0x10', '9'.repeat(16), '1e3']) {
      const res = await call('PATCH', path, { limit: wrong }, admin)
      t.same([res.statusCode, res.json().errors?.[0]?.field], [400, 'limit'], JSON.stringify(wrong))
    }
    t.same([(await call('PATCH', path, { item_count: '0' }, admin)).statusCode], [400], 'read, then checked as any number (minimum 1)')
    t.equal((await call('GET', path, undefined, admin)).json().limit, 3, 'nothing refused was written')
  })

  t.test('a query of several criteria', async t => {
    const query = [...talks, { i: 'type_of_talk', o: 'plone.app.querystring.operation.selection.any', v: ['Keynote'] }, { i: 'SearchableText', o: 'plone.app.querystring.operation.string.contains', v: 'rest' }]
    const path = await create({ query, sort_on: 'sortable_title' })
    t.same(titlesOf((await call('GET', path, undefined, admin)).json()), ['Alpha rest', 'Charlie rest', 'Echo rest'])
  })

  t.test('without a query it lists nothing', async t => {
    const path = await create({})
    t.match((await call('GET', path, undefined, admin)).json(), { items: [], items_total: 0 })
  })

  t.test('a query @querystring-search would refuse is refused when written, nothing written', async t => {
    const path = await create({ id: 'kept', query: talks })
    const refused: Array<[unknown, RegExp]> = [
      [[{ i: 'portal_type', o: 'plone.app.querystring.operation.no.such' }], /Unknown operation/],
      [[{ i: 'bogus', o: 'plone.app.querystring.operation.selection.any', v: ['x'] }], /Unknown index 'bogus'/],
      [[{ i: 'created', o: 'plone.app.querystring.operation.date.lessThan', v: 'garbage' }], /as a date/],
      [[{ i: 'portal_type' }], /must have required properties o|o/],
      [['portal_type'], /object/],
      [[{ i: '', o: 'x' }], /characters/]
    ]
    for (const [query, message] of refused) {
      const res = await call('PATCH', path, { query }, admin)
      t.equal(res.statusCode, 400, JSON.stringify(query))
      t.match(res.json(), { type: 'BadRequest', errors: [{ message }] }, JSON.stringify(query))
    }
    const unsortable = await call('PATCH', path, { sort_on: 'no_such_index' }, admin)
    t.equal(unsortable.statusCode, 400, 'a sort index that does not exist')
    t.match(unsortable.json(), { errors: [{ message: /stored query cannot run/ }] })
    t.equal((await call('PATCH', path, { query: Array.from({ length: 51 }, () => talks[0]) }, admin)).statusCode, 400, 'at most 50 criteria')
    t.same((await call('GET', path, undefined, admin)).json().query, talks, 'the stored query is as it was')
  })

  t.test('@types/Collection offers Volto\'s query widget', async t => {
    const schema = (await call('GET', '/@types/Collection', undefined, admin)).json()
    t.match(schema.properties, { query: { type: 'array', factory: 'List', widget: 'querystring' }, sort_reversed: { type: 'boolean' }, limit: { default: 1000 } })
    t.notOk('anyOf' in schema.properties.query, 'described as Plone declares it: the criteria')
    t.notOk('maxItems' in schema.properties.query, 'Volto would check it against the object its form writes')
  })

  t.test('the query as Volto 18\'s form writes it (its querystring widget\'s value) is kept as sent and runs', async t => {
    // What Volto's content form sends for a field named `query`: the listing block's querystring widget.
    const written = { query: talks, sort_on: 'sortable_title', sort_order: 'descending', sort_order_boolean: true, limit: '2', b_size: '10' }
    const path = await create({ query: written })
    const body = (await call('GET', path, undefined, admin)).json()
    t.same(body.query, written, 'kept as sent: Volto\'s form shows it again')
    t.same(titlesOf(body), ['Echo rest', 'Delta rest'], 'its sorting and limit are the query\'s')
    const unsorted = await create({ query: { query: talks }, sort_on: 'sortable_title', limit: 3 })
    t.same(titlesOf((await call('GET', unsorted, undefined, admin)).json()), ['Alpha rest', 'Bravo rest', 'Charlie rest'], 'without them, the collection\'s own fields')
    const refused: Array<[unknown, RegExp]> = [
      [{ query: [{ i: 'portal_type', o: 'plone.app.querystring.operation.no.such' }] }, /Unknown operation/],
      [{ query: talks, sort_on: 'no_such_index' }, /stored query cannot run/],
      [{ query: Array.from({ length: 51 }, () => talks[0]) }, /./],
      [{ query: talks, limit: 'many' }, /./],
      [{ query: talks, surprise: 1 }, /./]
    ]
    for (const [query, message] of refused) {
      const res = await call('PATCH', path, { query }, admin)
      t.equal(res.statusCode, 400, JSON.stringify(query).slice(0, 80))
      t.match(res.json(), { errors: [{ message }] })
    }
    t.same((await call('GET', path, undefined, admin)).json().query, written, 'nothing written')
  })
})
