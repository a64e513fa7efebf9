import t from 'tap'
import { build, talkBody } from '../helper.js'

/**
 * Full text over SearchableText on the catalogue (docs/search.md): which
 * fields are searchable, folding, prefixes, phrases, OR and NOT, relevance,
 * and input that must never become a 500.
 */
const BASE = 'http://localhost:80'
type Asserts = Pick<typeof t, 'same'>

/** Talks, all published; the first is created first so that only relevance can rank it below the second. */
const TALKS: Record<string, Record<string, unknown>> = {
  routing: { title: 'Routing in depth', description: 'How requests find their handler', details: '<p>We compare <b>Fastify</b> plugins with Express middleware.</p>' },
  fastify: { title: 'Fastify for Plone people', description: 'The REST API on a new stack', speaker: 'Jürgen Müller', subjects: ['nodejs'] },
  keynote: { title: 'Plone keynote', description: 'The state of Plone', speaker: 'Eric Steele', subjects: ['community'] },
  cpp: { title: 'C++ (advanced) tricks', description: 'Templates: "AND" other horrors', speaker: 'Zoë Ødegård', subjects: ['c++', 'native'] },
  straße: { title: 'Die Straße der Ideen', description: 'Ein Vortrag über Œuvres', type_of_talk: 'Keynote' }
}

t.test('SearchableText on the catalogue', async t => {
  const { call, tokenFor } = await build(t)
  const admin = await tokenFor('admin')
  const keyOf = new Map<string, string>()
  for (const [key, fields] of Object.entries(TALKS)) {
    const created = await call('POST', '/talks', talkBody(fields), admin)
    t.equal(created.statusCode, 201, created.body)
    keyOf.set(created.json()['@id'], key)
    t.equal((await call('POST', `/talks/${created.json().id}/@workflow/publish`, {}, admin)).statusCode, 200)
  }
  const secret = await call('POST', '/talks', talkBody({ title: 'Secret fastify roadmap' }), admin)
  keyOf.set(secret.json()['@id'], 'secret')

  /** The keys of the talks found by `text`, in result order, as anonymous unless a token is given. */
  const find = async (text: string, token?: string): Promise<string[]> => {
    const res = await call('GET', `/@search?SearchableText=${encodeURIComponent(text)}`, undefined, token)
    if (res.statusCode !== 200) throw new Error(`${text}: ${res.statusCode} ${res.body}`)
    return res.json().items.map((i: { '@id': string }) => keyOf.get(i['@id']) ?? i['@id'])
  }
  /** One assertion per query; `sorted` compares as sets. */
  const expectFound = async (t: Asserts, cases: Array<[string, string[], string]>, sorted = true): Promise<void> => {
    for (const [text, expected, why] of cases) {
      const found = await find(text)
      t.same(sorted ? found.sort() : found, sorted ? [...expected].sort() : expected, `${why}: ${JSON.stringify(text)}`)
    }
  }

  await t.test('what is searchable: title, description, details text, speaker, subjects', async t => {
    await expectFound(t, [
      ['routing', ['routing'], 'title'],
      ['handler', ['routing'], 'description'],
      ['middleware', ['routing'], 'the text of details'],
      ['b', [], 'not the markup of details'],
      ['steele', ['keynote'], 'speaker'],
      ['nodejs', ['fastify'], 'subjects'],
      ['native', ['cpp'], 'another subject'],
      ['published', [], 'not the workflow state'],
      ['talk', [], 'not the type']
    ])
  })

  await t.test('case and accent folding', async t => {
    await expectFound(t, [
      ['Müller', ['fastify'], 'as written'],
      ['muller', ['fastify'], 'without accent'],
      ['MÜLLER', ['fastify'], 'upper case'],
      ['MULLER', ['fastify'], 'upper case without accent'],
      ['zoe odegard', ['cpp'], 'ë and Ø'],
      ['strasse', ['straße'], 'ß'],
      ['STRASSE', ['straße'], 'ß upper case'],
      ['oeuvres', ['straße'], 'the œ ligature']
    ])
  })

  await t.test('prefixes, phrases, OR, NOT', async t => {
    await expectFound(t, [
      ['fast*', ['routing', 'fastify'], 'a prefix'],
      ['fast', [], 'no automatic prefix (plone.restapi adds no *)'],
      ['PLO*', ['fastify', 'keynote'], 'a prefix, upper case'],
      ['"plone keynote"', ['keynote'], 'a phrase'],
      ['"keynote plone"', [], 'a phrase in the wrong order'],
      ['"state of plone"', ['keynote'], 'a phrase from the description'],
      ['plone keynote', ['keynote'], 'two words, both required'],
      ['plone rest', ['fastify'], 'two words in different fields'],
      ['steele OR müller', ['fastify', 'keynote'], 'OR'],
      ['steele or muller', ['fastify', 'keynote'], 'or in lower case'],
      ['plone -keynote', ['fastify'], '-word'],
      ['plone NOT keynote', ['fastify'], 'NOT word'],
      ['plone -"plone keynote"', ['fastify'], 'NOT a phrase'],
      ['fastify OR plone -keynote', ['routing', 'fastify'], 'OR and NOT together']
    ])
  })

  await t.test('relevance: a title match ranks above a details-only match', async t => {
    await expectFound(t, [['fastify', ['fastify', 'routing'], 'the title match first although created second']], false)
    const sorted = await call('GET', '/@search?SearchableText=fastify&sort_on=sortable_title&sort_order=reverse')
    t.same(sorted.json().items.map((i: { '@id': string }) => keyOf.get(i['@id'])), ['routing', 'fastify'], 'an explicit sort_on wins over relevance')
    const relevance = await call('GET', '/@search?SearchableText=fastify&sort_on=relevance')
    t.same(relevance.json().items.map((i: { '@id': string }) => keyOf.get(i['@id'])), ['fastify', 'routing'], 'sort_on=relevance')
  })

  await t.test('empty or * SearchableText: zero items in the usual shape', async t => {
    for (const text of ['', '*', '  ', '()', '"" *']) {
      const res = await call('GET', `/@search?SearchableText=${encodeURIComponent(text)}`)
      t.equal(res.statusCode, 200, JSON.stringify(text))
      t.same(res.json(), { '@id': `${BASE}/@search?SearchableText=${new URLSearchParams({ q: text }).toString().slice(2)}`, items: [], items_total: 0 },
        `${JSON.stringify(text)}: an object with no items, not plone.restapi's bare []`)
    }
  })

  await t.test('hostile input is searched for, never a 500', async t => {
    const hostile = ['C++ (advanced) "AND" foo:bar', '"', '""', '"unclosed phrase', '\\', '\\"', "'", "o'reilly", '&|!:*()', '<->', '!!!', ':*',
      'a & b | !c', 'foo:*', 'AND', 'OR OR OR', 'NOT NOT', '- -', '-', '*:*', 'title:plone', 'plone^5', 'plone~2', '{!lucene}x', '[* TO *]',
      "'; DROP TABLE catalog; --", '%', '_', 'x'.repeat(3000), 'ж中文', '😀', '\u0007bell']
    for (const text of hostile) {
      const res = await call('GET', `/@search?SearchableText=${encodeURIComponent(text)}`)
      t.equal(res.statusCode, 200, `${JSON.stringify(text.slice(0, 40))} → 200`)
      t.ok(Array.isArray(res.json().items), 'in the usual shape')
    }
    await expectFound(t, [
      ['C++ (advanced) "AND" foo:bar', [], 'all words are required, foo and bar are in no talk'],
      ['C++ (advanced)', ['cpp'], 'punctuation is ignored, the words found'],
      ['"AND" other', ['cpp'], 'a quoted operator is a word'],
      ['title:plone', [], 'no field syntax: "title plone" is a phrase that no talk has']
    ])
  })

  await t.test('the private talk is found only by those who may see it', async t => {
    t.same((await find('roadmap')), [], 'anonymous')
    t.same((await find('roadmap', await tokenFor('mia'))), [], 'a member')
    t.same((await find('roadmap', admin)), ['secret'], 'a Manager')
  })
})
