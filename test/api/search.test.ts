import t from 'tap'
import { setTimeout as sleep } from 'node:timers/promises'
import { ADMIN_PASSWORD, build, talkBody } from '../helper.js'

/**
 * `@search` on the catalogue (docs/search.md): Zope marshalling, every index
 * the talk declares, ranges, sorting, batching, metadata, facets, the
 * canonical `@id` and 400 (never 500) for bad parameters. Full text is in
 * search-fulltext.test.ts, who sees what in visibility.test.ts.
 * Over 300 lines on purpose: every subtest shares one app and one set of
 * talks, built once (the build is most of its time).
 */
const BASE = 'http://localhost:80'

/** The talks, created and (except the secret one) published in this order. */
const TALKS = {
  solr: {
    title: 'Solr deep dive',
    type_of_talk: 'Training',
    audience: ['Advanced', 'Professionals'],
    room: '201',
    speaker: 'Ana Lima',
    subjects: ['solr', 'search'],
    start: '2026-10-02T09:00:00Z',
    end: '2026-10-02T12:00:00Z',
    effective: '2020-02-10T00:00:00Z'
  },
  fastify: {
    title: 'Fastify for Plone people',
    type_of_talk: 'Talk',
    audience: ['Beginner'],
    room: '101',
    speaker: 'Jürgen Müller',
    subjects: ['fastify', 'nodejs'],
    start: '2026-10-01T10:00:00Z',
    end: '2026-10-01T11:00:00Z',
    effective: '2020-01-10T00:00:00Z'
  },
  keynote: {
    title: 'Plone keynote',
    type_of_talk: 'Keynote',
    audience: ['Beginner', 'Advanced', 'Professionals'],
    room: 'Auditorium',
    speaker: 'Eric Steele',
    subjects: ['plone'],
    start: '2026-10-01T09:00:00Z',
    end: '2026-10-01T09:45:00Z',
    effective: '2020-03-10T00:00:00Z'
  },
  lightning: {
    title: 'Lightning: C++ in five minutes',
    type_of_talk: 'Lightning Talk',
    audience: ['Beginner'],
    speaker: 'Zoë',
    start: '2026-10-03T12:00:00Z',
    end: '2026-10-03T12:05:00Z',
    effective: '2020-03-20T00:00:00Z'
  },
  secret: { title: 'Secret roadmap', type_of_talk: 'Talk', audience: ['Professionals'], subjects: ['plone'] }
}
type Key = keyof typeof TALKS | 'folder'
const ALL_TALKS: Key[] = ['solr', 'fastify', 'keynote', 'lightning', 'secret']

t.test('@search on the catalogue', async t => {
  const { call, tokenFor } = await build(t)
  const admin = await tokenFor('admin')
  const keyOf = new Map<string, Key>([[`${BASE}/talks`, 'folder']])
  const uids = {} as Record<Key, string>
  let middle = ''
  for (const [key, fields] of Object.entries(TALKS) as Array<[Key, Record<string, unknown>]>) {
    const created = await call('POST', '/talks', talkBody(fields), admin)
    t.equal(created.statusCode, 201, created.body)
    keyOf.set(created.json()['@id'], key)
    uids[key] = created.json().UID
    if (key !== 'secret') t.equal((await call('POST', `/talks/${created.json().id}/@workflow/publish`, {}, admin)).statusCode, 200)
    if (key === 'solr') {
      // A moment between the first talk and the others, for created/modified ranges.
      await sleep(5)
      middle = new Date().toISOString()
      await sleep(5)
    }
  }
  // Touch the first talk last, so that `modified` orders differently from `created`.
  await sleep(5)
  const beforePatch = new Date().toISOString()
  t.equal((await call('PATCH', '/talks/solr-deep-dive', { description: 'Relevance, facets and more' }, admin)).statusCode, 204)

  /** GET @search; `keys` are the results in order (talk keys, `folder` for /talks). */
  const search = async (query: string, token: string | null = admin, context = ''): Promise<{ status: number, body: any, keys: Key[] }> => {
    const res = await call('GET', `${context}/@search${query === '' ? '' : '?' + query}`, undefined, token ?? undefined)
    const body = res.json()
    const keys = res.statusCode === 200 ? body.items.map((i: { '@id': string }) => keyOf.get(i['@id']) ?? i['@id']) : []
    return { status: res.statusCode, body, keys }
  }
  /** One assertion per query: the result keys, in order (and their total when the query is not paged). */
  const expectKeys = async (t: Tap, cases: Array<[string, Key[], string]>, token?: string): Promise<void> => {
    for (const [query, expected, why] of cases) {
      const { status, body, keys } = await search(query, token)
      t.equal(status, 200, `${query}: ${JSON.stringify(body).slice(0, 200)}`)
      t.same(keys, expected, `${why} (${query})`)
      if (!query.includes('b_size')) t.equal(body.items_total, expected.length, `${why}: items_total`)
    }
  }
  /** The same, ignoring order (results sorted by creation: the folder, then the talks). */
  const expectSet = async (t: Tap, cases: Array<[string, Key[], string]>, token?: string): Promise<void> => {
    const created: Key[] = ['folder', ...ALL_TALKS]
    await expectKeys(t, cases.map(([q, keys, why]) => [`${q}&sort_on=created`, created.filter(k => keys.includes(k)), why]), token)
  }

  await t.test('Zope marshalling', async t => {
    await expectKeys(t, [
      ['portal_type:list=talk', ALL_TALKS, ':list'],
      ['portal_type=talk&portal_type=folder', ['folder', ...ALL_TALKS], 'repeated names are ORed'],
      ['portal_type=folder', ['folder'], 'the folder alone'],
      ['is_folderish:boolean=true', ['folder'], ':boolean true'],
      ['is_folderish:boolean=false', ALL_TALKS, ':boolean false'],
      ['is_folderish=no', ALL_TALKS, 'a boolean index reads Zope spellings without :boolean'],
      ['portal_type=talk&b_size:int=2', ['solr', 'fastify'], ':int on b_size']
    ])
  })

  await t.test('path with depth', async t => {
    await expectKeys(t, [
      ['', ['folder', ...ALL_TALKS], 'no path: the context (site root) and everything below'],
      ['path.query=/talks&path.depth=1', ALL_TALKS, 'depth 1: children only'],
      ['path.query=/talks&path.depth=0', ['folder'], 'depth 0: the object only'],
      ['path.query=/talks', ['folder', ...ALL_TALKS], 'no depth: the object and everything below'],
      ['path=/talks/plone-keynote', ['keynote'], 'a plain path'],
      ['path.query=/talks/plone-keynote&path.query=/talks/solr-deep-dive&path.depth=0', ['solr', 'keynote'], 'several paths are ORed'],
      ['path.depth=1', ['folder'], 'depth without query: below the context'],
      ['path.depth=2', ['folder', ...ALL_TALKS], 'depth 2 from the root reaches the talks'],
      ['path=/nowhere', [], 'a path with nothing below']
    ])
    const inFolder = await search('', admin, '/talks')
    t.same(inFolder.keys, ['folder', ...ALL_TALKS], 'a search on the folder includes the folder itself (Plone)')
    t.equal(inFolder.body['@id'], `${BASE}/talks/@search`)
    t.same((await search('path.depth=1', admin, '/talks')).keys, ALL_TALKS, 'depth 1 on the folder: its talks')
    t.same((await search('path.depth=0', admin, '/talks/plone-keynote')).keys, ['keynote'], 'a search on a talk')
  })

  await t.test('portal_type, review_state, Subject, UID', async t => {
    await expectSet(t, [
      ['portal_type=talk&review_state=published', ['solr', 'fastify', 'keynote', 'lightning'], 'review_state'],
      ['review_state=private', ['secret'], 'private, for a Manager'],
      ['review_state:list=private&review_state:list=published&portal_type=talk', ALL_TALKS, 'a list of states'],
      ['Subject=solr', ['solr'], 'one keyword'],
      ['Subject:list=solr&Subject:list=plone', ['solr', 'keynote', 'secret'], 'keywords ORed'],
      ['Subject.query=fastify&Subject.query=nodejs&Subject.operator=and', ['fastify'], 'keywords ANDed'],
      ['Subject.query=plone&Subject.query=nodejs&Subject.operator=and', [], 'keywords ANDed, none has both'],
      ['Subject=nosuchsubject', [], 'an unknown keyword'],
      [`UID=${uids.keynote}`, ['keynote'], 'UID'],
      [`UID=${uids.keynote}&UID=${uids.solr}`, ['solr', 'keynote'], 'UIDs ORed'],
      [`UID=${uids.keynote}&UID=not-a-uid`, ['keynote'], 'a malformed UID matches nothing'],
      ['UID=not-a-uid', [], 'only a malformed UID']
    ])
  })

  await t.test('the talk\'s own indexes', async t => {
    await expectSet(t, [
      ['type_of_talk=Keynote', ['keynote'], 'type_of_talk'],
      ['type_of_talk:list=Keynote&type_of_talk:list=Training', ['solr', 'keynote'], 'type_of_talk ORed'],
      ['audience.query=Beginner&audience.query=Advanced&audience.operator=and', ['keynote'], 'audience ANDed'],
      ['audience.query=Beginner&audience.query=Advanced&audience.operator=or', ['solr', 'fastify', 'keynote', 'lightning'], 'audience ORed'],
      ['audience=Beginner&audience=Advanced', ['solr', 'fastify', 'keynote', 'lightning'], 'audience ORed by default'],
      ['audience=Professionals', ['solr', 'keynote', 'secret'], 'one audience'],
      ['room=Auditorium', ['keynote'], 'room'],
      ['room:list=101&room:list=201', ['solr', 'fastify'], 'rooms ORed'],
      ['speaker=Ana Lima', ['solr'], 'speaker (a field index: the whole value)'],
      ['speaker=Ana', [], 'speaker: part of the value does not match'],
      ['start.query=2026-10-01T12:00:00Z&start.range=min', ['solr', 'lightning'], 'start min'],
      ['start.query=2026-10-01T12:00:00Z&start.range=max', ['fastify', 'keynote'], 'start max'],
      ['start.query=2026-10-01T09:30:00Z&start.query=2026-10-02T09:00:00Z&start.range=min:max', ['solr', 'fastify'], 'start min:max, bounds included'],
      ['end.query=2026-10-01T11:00:00Z&end.range=max', ['fastify', 'keynote'], 'end max, bound included'],
      ['end.query=2026-10-01T11:00:01Z&end.range=min', ['solr', 'lightning'], 'end min, one second after a bound']
    ])
  })

  await t.test('date ranges: created, modified, effective, Date', async t => {
    const later = ['fastify', 'keynote', 'lightning', 'secret'] as Key[]
    await expectSet(t, [
      [`created.query=${middle}&created.range=min&portal_type=talk`, later, 'created min'],
      [`created.query=${middle}&created.range=max&portal_type=talk`, ['solr'], 'created max'],
      [`created.query:list=2000-01-01&created.query:list=${middle}&created.range=min:max&portal_type=talk`, ['solr'], 'created min:max'],
      [`modified.query=${beforePatch}&modified.range=min&portal_type=talk`, ['solr'], 'modified min: the patched talk'],
      [`modified.query=${beforePatch}&modified.range=max&portal_type=talk`, later, 'modified max'],
      ['effective.query=2020-03-10T00:00:00Z&effective.range=min&portal_type=talk', ['keynote', 'lightning'], 'effective min, bound included'],
      ['effective.query=2020-03-10T00:00:00Z&effective.range=max&portal_type=talk', ['solr', 'fastify', 'keynote'], 'effective max, bound included'],
      ['effective.query=2020-02-01&effective.query=2020-03-15&effective.range=min:max', ['solr', 'keynote'], 'effective min:max'],
      ['effective.query=2020-02-10T00:00:00Z', ['solr'], 'effective, an exact date'],
      ['Date.query=2020-01-31&Date.range=max&portal_type=talk', ['fastify'], 'Date is the publishing date'],
      [`Date.query=${middle}&Date.range=min&portal_type=talk`, ['secret'], 'Date of unpublished content is its modification date'],
      ['created:date=2000-01-01&created.range=min&portal_type=talk', ALL_TALKS, 'a :date converter']
    ])
  })

  await t.test('sorting', async t => {
    const byTitle: Key[] = ['fastify', 'lightning', 'keynote', 'secret', 'solr']
    await expectKeys(t, [
      ['portal_type=talk&sort_on=sortable_title', byTitle, 'sortable_title'],
      ['portal_type=talk&sort_on=sortable_title&sort_order=ascending', byTitle, 'ascending'],
      ['portal_type=talk&sort_on=sortable_title&sort_order=descending', [...byTitle].reverse(), 'descending'],
      ['portal_type=talk&sort_on=sortable_title&sort_order=reverse', [...byTitle].reverse(), 'reverse'],
      ['portal_type=talk&sort_on=Title', byTitle, 'Title sorts as sortable_title'],
      ['portal_type=talk&sort_on=Date', ['fastify', 'solr', 'keynote', 'lightning', 'secret'], 'Date'],
      ['portal_type=talk&sort_on=effective&sort_order=reverse', ['lightning', 'keynote', 'solr', 'fastify', 'secret'], 'effective reversed, no date last'],
      ['portal_type=talk&sort_on=created', ALL_TALKS, 'created'],
      ['portal_type=talk&sort_on=created&sort_order=reverse', [...ALL_TALKS].reverse(), 'created reversed'],
      ['portal_type=talk&sort_on=modified', ['fastify', 'keynote', 'lightning', 'secret', 'solr'], 'modified'],
      ['portal_type=talk&sort_on=start', ['keynote', 'fastify', 'solr', 'lightning', 'secret'], 'start (a type\'s date index), unset last'],
      ['portal_type=talk&sort_on=end&sort_order=descending', ['lightning', 'solr', 'fastify', 'keynote', 'secret'], 'end descending'],
      ['portal_type=talk&sort_on=room', ['fastify', 'solr', 'keynote', 'lightning', 'secret'], 'room (a type\'s field index)'],
      ['portal_type=talk&sort_on=speaker', ['solr', 'keynote', 'fastify', 'lightning', 'secret'], 'speaker'],
      ['portal_type=talk&sort_on=room&sort_on=sortable_title', ['fastify', 'solr', 'keynote', 'lightning', 'secret'], 'several sort indexes'],
      ['portal_type=talk&sort_on=sortable_title&sort_limit=1', ['fastify'], 'sort_limit 1, the smallest'],
      ['portal_type=talk&sort_on=sortable_title&sort_limit=2', ['fastify', 'lightning'], 'sort_limit'],
      ['portal_type=talk&sort_on=sortable_title&sort_limit=5', byTitle, 'sort_limit equal to the results'],
      ['portal_type=talk&sort_on=sortable_title&sort_limit=2&b_size=1&b_start=1', ['lightning'], 'sort_limit with batching']
    ])
  })

  await t.test('batching', async t => {
    const page = async (query: string): Promise<{ keys: Key[], body: any }> => await search(query)
    const first = await page('portal_type=talk&b_size=2')
    t.same(first.keys, ['solr', 'fastify'])
    t.equal(first.body.items_total, 5, 'items_total counts every result')
    t.same(first.body.batching, {
      '@id': `${BASE}/@search?portal_type=talk&b_size=2`,
      first: `${BASE}/@search?b_start=0&portal_type=talk&b_size=2`,
      last: `${BASE}/@search?b_start=4&portal_type=talk&b_size=2`,
      next: `${BASE}/@search?b_start=2&portal_type=talk&b_size=2`
    }, 'first page: b_start first in the links, no prev')
    t.equal(first.body['@id'], `${BASE}/@search?portal_type=talk`, '@id without the batching parameters')
    const second = await page('portal_type=talk&b_start=2&b_size=2')
    t.same(second.keys, ['keynote', 'lightning'])
    t.equal(second.body.batching.prev, `${BASE}/@search?b_start=0&portal_type=talk&b_size=2`)
    t.equal(second.body.batching.next, `${BASE}/@search?b_start=4&portal_type=talk&b_size=2`)
    const last = await page('portal_type=talk&b_start=4&b_size=2')
    t.same(last.keys, ['secret'])
    t.notOk('next' in last.body.batching, 'last page: no next')
    t.equal(last.body.batching.prev, `${BASE}/@search?b_start=2&portal_type=talk&b_size=2`)
    const beyond = await page('portal_type=talk&b_start=10&b_size=2')
    t.same(beyond.keys, [], 'beyond the end: an empty page')
    t.equal(beyond.body.items_total, 5, 'with the real total')
    t.notOk('batching' in (await page('portal_type=talk&b_size=5')).body, 'one page exactly: no batching')
    t.ok('batching' in (await page('portal_type=talk&b_size=4')).body, 'one result more than a page: batching')
    t.notOk('batching' in (await page('portal_type=talk')).body, 'default page size 25')
  })

  await t.test('metadata_fields and fullobjects', async t => {
    const plain = await search('portal_type=talk&sort_on=created&b_size=1')
    t.same(Object.keys(plain.body.items[0]).sort(), ['@id', '@type', 'description', 'review_state', 'title', 'type_title'], 'the default summary')
    t.same(plain.body.items[0], {
      '@id': `${BASE}/talks/solr-deep-dive`, '@type': 'talk', title: 'Solr deep dive', description: 'Relevance, facets and more', review_state: 'published', type_title: 'Talk'
    })
    const named = await search('portal_type=talk&sort_on=created&b_size=1&metadata_fields=UID&metadata_fields=start&metadata_fields=audience')
    t.match(named.body.items[0], { UID: uids.solr, start: '2026-10-02T09:00:00+00:00', audience: ['Advanced', 'Professionals'] }, 'named metadata')
    const all = await search('portal_type=talk&sort_on=created&b_size=1&metadata_fields=_all')
    t.match(all.body.items[0], {
      UID: uids.solr,
      Subject: ['solr', 'search'],
      room: '201',
      speaker: 'Ana Lima',
      review_state: 'published',
      effective: '2020-02-10T00:00:00+00:00',
      created: String,
      modified: String,
      Creator: 'admin'
    }, '_all: every metadata column')
    t.equal((await search('metadata_fields=no_such_column')).status, 400, 'an unknown metadata field')
    const full = await search('portal_type=talk&sort_on=created&b_size=2&fullobjects=1')
    t.equal(full.body.items.length, 2)
    t.match(full.body.items[0], {
      '@id': `${BASE}/talks/solr-deep-dive`,
      UID: uids.solr,
      type_of_talk: 'Training',
      audience: ['Advanced', 'Professionals'],
      creators: ['admin'],
      parent: { '@id': `${BASE}/talks` },
      speaker: 'Ana Lima'
    }, 'fullobjects: whole objects')
    t.equal(full.body.items_total, 5)
  })

  await t.test('facets', async t => {
    const defaults = await search('portal_type=talk&facet=true')
    t.same(defaults.body.facets, { portal_type: { talk: 5 }, review_state: { published: 4, private: 1 } }, 'portal_type and review_state by default')
    const anonymous = await search('portal_type=talk&facet=true', null)
    t.same(anonymous.body.facets, { portal_type: { talk: 4 }, review_state: { published: 4 } }, 'facets count only what the caller may see')
    const fields = await search('portal_type=talk&facet=true&facet.field=audience&facet.field=room')
    t.same(fields.body.facets, {
      audience: { Beginner: 3, Professionals: 3, Advanced: 2 },
      room: { 101: 1, 201: 1, Auditorium: 1 }
    }, 'named fields, counts over all results, not the page')
    const paged = await search('portal_type=talk&facet=true&b_size=1')
    t.same(paged.body.facets.portal_type, { talk: 5 }, 'facets ignore batching')
    t.same((await search('portal_type=talk&facet.field=room')).body.facets, { room: { 101: 1, 201: 1, Auditorium: 1 } }, 'facet.field implies facet=true (collective.solr)')
    t.notOk('facets' in (await search('portal_type=talk&facet=false')).body, 'facet=false: no facets')
    t.notOk('facets' in (await search('portal_type=talk')).body, 'no facet parameter: no facets')
    t.equal((await search('facet=true&facet.field=nosuch')).status, 400, 'an unknown facet field')
  })

  await t.test('the canonical @id', async t => {
    t.equal((await search('portal_type=talk&b_size=2&b_start=2&sort_on=Date&sort_order=reverse&sort_limit=4')).body['@id'],
      `${BASE}/@search?portal_type=talk`, 'batching and sorting parameters are stripped, the rest kept')
    t.equal((await search('b_size:int=2&sort_on:list=Date', admin, '/talks')).body['@id'], `${BASE}/talks/@search`, 'also with converters')
    t.equal((await search('Subject=a&Subject=b')).body['@id'], `${BASE}/@search?Subject=a&Subject=b`, 'repeated parameters kept in order')
  })

  await t.test('bad parameters → 400 BadRequest, never 500', async t => {
    const cases: Array<[string, RegExp]> = [
      ['no_such_index=1', /no_such_index/],
      ['created.query=notadate&created.range=min', /notadate/],
      ['created.query=999999&created.range=min', /999999/],
      ['created.query=2026-01-01&created.range=sideways', /sideways/],
      ['created.query=2026-01-01&created.range=min:max', /min:max/],
      ['start=2026-13-45', /2026-13-45/],
      ['is_folderish=maybe', /maybe/],
      ['is_folderish:boolean=maybe', /maybe/],
      ['b_size=abc', /b_size/],
      ['b_size:int=abc', /b_size/],
      ['b_start=1.5', /b_start/],
      ['b_start=100000000000000000000', /b_start/],
      ['path.depth=x', /path.depth/],
      ['path.depth=99999999999', /path.depth/],
      ['sort_on=no_such_index', /no_such_index/],
      ['sort_on=Subject', /Subject/],
      ['sort_on=audience', /audience/],
      ['sort_limit=abc', /sort_limit/],
      ['sort_limit=0', /sort_limit/],
      ['facet=perhaps', /perhaps/],
      ['show_inactive=perhaps', /perhaps/],
      ['UID.query=not-a-uid&UID.range=min', /not-a-uid/],
      ['portal_type=%00', /NUL/],
      ['x:weird=1', /weird/]
    ]
    for (const [query, message] of cases) {
      const { status, body } = await search(query)
      t.equal(status, 400, `${query} → 400`)
      t.equal(body.type, 'BadRequest', query)
      t.match(body.message, message, `${query}: the message says what is wrong`)
    }
  })

  await t.test('anonymous never finds the private talk, whatever the query', async t => {
    for (const query of ['', 'portal_type=talk', 'review_state=private', 'Subject=plone', 'audience=Professionals', 'SearchableText=secret',
      `UID=${uids.secret}`, 'path=/talks/secret-roadmap', 'sort_on=sortable_title', 'fullobjects=1', 'metadata_fields=_all', 'show_inactive=true']) {
      const { status, keys } = await search(query, null)
      t.equal(status, 200, query)
      t.notOk(keys.includes('secret'), `anonymous: ${query || '(no parameters)'}`)
    }
    const member = await tokenFor('mia')
    t.same((await search('review_state=private', member)).keys, [], 'nor does a member who did not write it')
  })
})

t.test('every queryable index is backed by a database index of the right kind', async t => {
  const { app } = await build(t)
  const { rows } = await app.db.query<{ indexdef: string }>("SELECT indexdef FROM pg_indexes WHERE tablename = 'catalog'")
  const defs = rows.map(r => r.indexdef)
  t.ok(defs.some(d => /USING gin \(searchable\)/.test(d)), 'SearchableText: GIN over the tsvector')
  for (const index of app.contentTypes.indexes.values()) {
    if (!index.indexed || index.kind === 'boolean' || index.kind === 'text') continue
    if (index.kind === 'dates') {
      // A recurring date's further occurrences, held by few rows: an index of those rows, which a range over the date reads beside the date's own.
      t.ok(defs.some(d => d.includes('(uid) WHERE') && d.includes(`${index.name} IS NOT NULL`)), `${index.name}: the rows that hold any`)
      continue
    }
    const method = index.multiValued ? 'gin' : 'btree'
    // pg_indexes quotes only names that need it (`"UID"` but `portal_type`); a sortable index leads with its value, the tie-breakers follow.
    t.ok(defs.some(d => [index.name, `"${index.name}"`].some(name => d.includes(`USING ${method} (${name})`) || d.includes(`USING ${method} (${name},`))), `${index.name}: ${method}`)
  }
})

t.test('paths written with the site path (SITE_PATH=/Plone, as Plone\'s physical paths)', async t => {
  const { call } = await build(t, { env: { SITE_PATH: '/Plone' } })
  // The helper's tokenFor logs in at /@login, outside this site.
  const admin = (await call('POST', '/Plone/@login', { login: 'admin', password: ADMIN_PASSWORD })).json().token
  t.equal((await call('POST', '/Plone/talks', talkBody({ title: 'Under Plone' }), admin)).statusCode, 201)
  for (const path of ['/Plone/talks', '/talks']) {
    const res = await call('GET', `/Plone/@search?path.query=${path}&path.depth=1`, undefined, admin)
    t.equal(res.statusCode, 200)
    t.same(res.json().items.map((i: { '@id': string }) => i['@id']), [`${BASE}/Plone/talks/under-plone`], `path ${path}`)
  }
  const res = await call('GET', '/Plone/++api++/@search?portal_type=talk&b_size=1', undefined, admin)
  t.equal(res.json()['@id'], `${BASE}/Plone/@search?portal_type=talk`, '@id under the site path')
})

type Tap = Pick<typeof t, 'equal' | 'same'>
