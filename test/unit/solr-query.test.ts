import t from 'tap'
import Value from 'typebox/value'
import { CatalogSearch } from '../../core/catalog/search.js'
import { QueryParser, type QueryRequest } from '../../core/query/parse.js'
import { contentTypesDir } from '../../core/config/paths.js'
import { ContentTypeRegistry } from '../../core/content/registry.js'
import { DEFAULT_SEARCH_PATTERN, SolrSettingsSchema, type SolrSettings } from '../../core/solr/settings.js'
import { solrFields } from '../../core/solr/configset.js'
import { boostRulesCheck, escapeTerm, quote, searchableTextClause, searchableTextValue, type SearchableTextValue } from '../../core/solr/full-text.js'
import { SolrQueryTranslator, type SolrQuery } from '../../core/solr/lucene.js'

// What the service's query becomes in Solr's parameters. The Solr tests
// (test/solr/*.test.ts) check against solr-dev that these find the right talks.

const registry = await ContentTypeRegistry.load([contentTypesDir])
const catalogue = new CatalogSearch(registry)
const parser = new QueryParser(name => catalogue.index(name))
const translator = new SolrQueryTranslator(new Set(solrFields(registry).map(f => f.name)))
const DEFAULTS = Value.Default(SolrSettingsSchema, {}) as SolrSettings
const NOW = new Date('2026-11-22T20:39:52.123Z')
// "effective" against now rounded up, "expires" against now rounded down (by default to the minute): what is already effective is always included.
const ACTIVE = '(effective:[* TO "2026-11-22T20:40:00.000Z"] OR (*:* -effective:[* TO *])) AND (expires:{"2026-11-22T20:39:00.000Z" TO *] OR (*:* -expires:[* TO *]))'

type Params = Record<string, unknown> & { q: string, fq: string[] }
/** A query as the search route asks it (parsed first, as the route does), plus Solr's own options. */
type Request = Partial<QueryRequest> & Pick<Partial<SolrQuery>, 'highlightFields' | 'neededFields'>
const translate = ({ highlightFields, neededFields = ['UID'], ...request }: Request, settings: Partial<SolrSettings> = {}): Params => {
  const query = parser.parse({ criteria: {}, sortOn: [], descending: false, start: 0, size: 25, principals: ['Anonymous'], showInactive: false, ...request })
  return translator.translate({ ...query, highlightFields, neededFields }, { ...DEFAULTS, ...settings }, NOW).params as Params
}

t.test('escapeTerm and quote', async t => {
  t.equal(escapeTerm('C++ (advanced) "AND" foo:bar'), 'C\\+\\+\\ \\(advanced\\)\\ \\"AND\\"\\ foo\\:bar', 'every syntax character and blank escaped')
  t.equal(escapeTerm('a&&b||!c^2~1*?/[]{}\\-'), 'a\\&\\&b\\|\\|\\!c\\^2\\~1\\*\\?\\/\\[\\]\\{\\}\\\\\\-')
  t.equal(escapeTerm('AND'), '"AND"', 'a bare operator word is quoted')
  t.equal(escapeTerm('plain'), 'plain')
  t.equal(quote('say "hi" \\ bye'), '"say \\"hi\\" \\\\ bye"', 'quotes and backslashes escaped inside a phrase')
})

t.test('SearchableText: {value} and {base_value}', async t => {
  const cases: Array<[string, number, SearchableTextValue | null, string]> = [
    ['news', 0, { value: '(news* OR news)', base: 'news', exclude: [] }, 'a word: prefix or the word itself'],
    ['News', 0, { value: '(news* OR News)', base: 'News', exclude: [] }, 'the wildcard part is folded (Solr does not analyse wildcards)'],
    ['Müller', 0, { value: '(muller* OR Müller)', base: 'Müller', exclude: [] }, 'accents folded in the wildcard part'],
    ['foo bar', 0, { value: '((foo* OR foo) (bar* OR bar))', base: '(foo bar)', exclude: [] }, 'several words, grouped'],
    ['news*', 0, { value: '(news*)', base: 'news', exclude: [] }, 'a typed prefix stays a prefix'],
    ['"plone keynote"', 0, { value: '"plone keynote"', base: '"plone keynote"', exclude: [] }, 'a phrase stays quoted'],
    ['"unclosed phrase', 0, { value: '"unclosed phrase"', base: '"unclosed phrase"', exclude: [] }, 'an unclosed quote runs to the end'],
    ['kenote', 1, { value: '(kenote* OR kenote OR kenote~1)', base: 'kenote', exclude: [] }, 'levenshtein_distance adds a fuzzy term'],
    ['"plone keynote"', 2, { value: '"plone keynote"~2', base: '"plone keynote"', exclude: [] }, 'and makes a phrase a proximity search'],
    ['a OR b', 0, { value: '((a* OR a) OR (b* OR b))', base: '(a OR b)', exclude: [] }, 'OR'],
    ['a or b c', 0, { value: '(((a* OR a) OR (b* OR b)) (c* OR c))', base: '((a OR b) c)', exclude: [] }, 'or in lower case, binding tighter than AND'],
    ['plone -keynote', 0, { value: '(plone* OR plone)', base: 'plone', exclude: ['(keynote* OR keynote)'] }, '-word: set apart'],
    ['plone NOT "the keynote"', 0, { value: '(plone* OR plone)', base: 'plone', exclude: ['"the keynote"'] }, 'NOT a phrase'],
    ['-keynote', 0, { value: null, base: null, exclude: ['(keynote* OR keynote)'] }, 'only excluded words'],
    ['C++ (advanced) "AND" foo:bar', 0, { value: '(C\\+\\+ \\(advanced\\) "AND" foo\\:bar)', base: '(C\\+\\+ \\(advanced\\) "AND" foo\\:bar)', exclude: [] },
      'punctuation escaped and left to the analyser; a quoted operator is a word'],
    ['*:* OR allowedRolesAndUsers:Manager', 0, { value: 'allowedRolesAndUsers\\:Manager', base: 'allowedRolesAndUsers\\:Manager', exclude: [] }, 'no syntax survives'],
    ['title:plone^5 {!lucene}x [* TO *]', 0, { value: '(title\\:plone\\^5 \\{\\!lucene\\}x (to* OR TO))', base: '(title\\:plone\\^5 \\{\\!lucene\\}x TO)', exclude: [] }, 'boosts, local params, ranges'],
    ['bell\u0007ring', 0, { value: '((bell* OR bell) (ring* OR ring))', base: '(bell ring)', exclude: [] }, 'control characters are blanks'],
    ['x'.repeat(101), 0, { value: 'x'.repeat(101), base: 'x'.repeat(101), exclude: [] }, 'a very long word has no prefix variant (Lucene\'s automaton limit)'],
    [`${'x'.repeat(101)}*`, 0, { value: `${'x'.repeat(101)}\\*`, base: `${'x'.repeat(101)}\\*`, exclude: [] }, 'nor a very long typed prefix: a literal'],
    ['x'.repeat(100), 1, { value: `(${'x'.repeat(100)}* OR ${'x'.repeat(100)} OR ${'x'.repeat(100)}~1)`, base: 'x'.repeat(100), exclude: [] }, 'up to 100 characters it has'],
    ['a$&b', 0, { value: 'a$\\&b', base: 'a$\\&b', exclude: [] }, '$ is not special in Solr'],
    ['', 0, null, 'empty'],
    ['*', 0, null, 'a lone wildcard'],
    ['"" * () AND OR', 0, null, 'nothing searchable']
  ]
  for (const [input, distance, expected, why] of cases) t.same(searchableTextValue(input, distance), expected, `${why}: ${JSON.stringify(input)}`)
  t.equal(searchableTextClause('foo', DEFAULTS),
    '+(Title:(foo* OR foo)^5 OR Description:(foo* OR foo)^2 OR SearchableText:(foo* OR foo) OR SearchableText:(foo) OR searchwords:(foo)^1000) +showinsearch:True',
    'the default search_pattern')
  t.equal(DEFAULTS.search_pattern, DEFAULT_SEARCH_PATTERN)
  t.equal(searchableTextClause('news', { search_pattern: '(Title:{value}^5 OR getId:{value})', levenshtein_distance: 0 }),
    '(Title:(news* OR news)^5 OR getId:(news* OR news))', 'collective.solr\'s example pattern')
  t.equal(searchableTextClause('a$&b', { search_pattern: 'Title:{value}', levenshtein_distance: 0 }), 'Title:a$\\&b', '$& in the value is not a replacement pattern')
  t.equal(searchableTextClause('news', { search_pattern: '', levenshtein_distance: 0 }), 'SearchableText:(news* OR news)', 'without a pattern')
  t.equal(searchableTextClause('news -old', { search_pattern: 'Title:{value}', levenshtein_distance: 0 }), '(Title:(news* OR news)) -SearchableText:(old* OR old)',
    'excluded words: from the whole text, not per field of the pattern')
  t.equal(searchableTextClause('NOT old', { search_pattern: 'Title:{value}', levenshtein_distance: 0 }), '(*:*) -SearchableText:(old* OR old)', 'only excluded words: everything else')
})

t.test('translation of the criteria', async t => {
  const q = (criteria: Record<string, unknown>, settings: Partial<SolrSettings> = { filter_queries: [] }): unknown => translate({ criteria }, settings).q
  t.equal(q({}), '*:*', 'no criteria: everything (the filters still apply)')
  t.equal(q({ portal_type: 'talk' }), '+(portal_type:("talk"))', 'a field index: quoted values')
  t.equal(q({ portal_type: ['talk', 'folder'] }), '+(portal_type:("talk" OR "folder"))', 'lists are ORed')
  t.equal(q({ Subject: { query: ['a', 'b"c'], operator: 'and' } }), '+(Subject:("a" AND "b\\"c"))', 'keywords ANDed, quotes escaped')
  t.equal(q({ speaker: 'Ana Lima', room: '101' }), '+(speaker:("Ana Lima")) +(room:("101"))', 'clauses are all required')
  t.equal(q({ Title: 'Plone (keynote)' }), '+(Title:(Plone AND \\(keynote\\)))', 'a text index: every word')
  t.equal(q({ is_folderish: 'no' }), '+(is_folderish:false)', 'booleans in Zope spellings')
  // `start` recurs (an Event's recurrence): its own value or any further occurrence.
  t.equal(q({ start: { query: '2026-10-01T12:00:00Z', range: 'min' } }), '+((start:["2026-10-01T12:00:00.000Z" TO *] OR start_occurrences:["2026-10-01T12:00:00.000Z" TO *]))', 'date min, recurring')
  t.equal(q({ start: { query: '2026-10-01', range: 'max' } }), '+((start:[* TO "2026-10-01T00:00:00.000Z"] OR start_occurrences:[* TO "2026-10-01T00:00:00.000Z"]))', 'date max, recurring')
  t.equal(q({ effective: { query: '2026-10-01', range: 'max' } }), '+(effective:[* TO "2026-10-01T00:00:00.000Z"])', 'date max')
  t.equal(q({ created: { query: ['2020-01-01', '2021-01-01'], range: 'min:max' } }),
    '+(created:["2020-01-01T00:00:00.000Z" TO "2021-01-01T00:00:00.000Z"])', 'date min:max')
  t.equal(q({ getObjPositionInParent: { query: '3', range: 'max' } }), '+(getObjPositionInParent:[* TO 3])', 'an int range')
  t.equal(q({ room: { query: ['1', '2'], range: 'min:max' } }), '+(room:["1" TO "2"])', 'a string range, quoted')
  const uid = 'A1B2C3D4-0000-4000-8000-000000000000'
  t.equal(q({ UID: [uid, 'not-a-uid'] }), `+(UID:("${uid.toLowerCase()}"))`, 'UIDs lower-cased, malformed ones dropped')
  t.equal(q({ UID: 'not-a-uid' }), '-*:*', 'only a malformed UID: nothing')
  t.equal(q({ SearchableText: '*' }), '-*:*', 'nothing to search for finds nothing')
  t.equal(q({ SearchableText: '', portal_type: '' }), '-*:*', 'an empty SearchableText too; an empty field criterion is ignored')
  t.equal(q({ path: { query: '/talks' } }), '+(path_parents:"/talks")', 'a path: the object and everything below')
  t.equal(q({ path: { query: '/talks/', depth: 0 } }), '+((path_parents:"/talks" AND path_depth:[1 TO 1]))', 'depth 0: the object')
  t.equal(q({ path: { query: ['/a', '/b/c'], depth: 2 } }),
    '+((path_parents:"/a" AND path_depth:[2 TO 3]) OR (path_parents:"/b/c" AND path_depth:[3 TO 4]))', 'depth n, several paths ORed')
  t.equal(q({ path: { query: '/', depth: -1 } }), '+(path_parents:"/")', 'the root')
  for (const [criteria, message] of [
    [{ nosuch: 'x' }, /Unknown index 'nosuch'/],
    [{ created: { query: 'x', range: 'min' } }, /'x' of 'created'/],
    [{ created: { query: '2020-01-01', range: 'sideways' } }, /sideways/],
    [{ created: { query: '2020-01-01', range: 'min:max' } }, /needs two values/],
    [{ is_folderish: 'maybe' }, /maybe/],
    [{ path: { query: '/', depth: 'x' } }, /path.depth/],
    [{ UID: { query: 'x', range: 'min' } }, /as a UID/]
  ] as Array<[Record<string, unknown>, RegExp]>) {
    t.throws(() => q(criteria), { statusCode: 400, message }, JSON.stringify(criteria))
  }
})

t.test('filters: security, effective dates, filter_queries', async t => {
  t.same(translate({}).fq, ['allowedRolesAndUsers:("Anonymous")', ACTIVE], 'anonymous: its one principal and the effective filter')
  t.same(translate({ principals: ['Anonymous', 'Authenticated', 'user:mia', 'Member'] }).fq[0],
    'allowedRolesAndUsers:("Anonymous" OR "Authenticated" OR "user$mia" OR "Member")', 'user:<id> as user$<id>')
  t.same(translate({ principals: ['Anonymous', 'user:mia'] }, { exclude_user: true }).fq[0], 'allowedRolesAndUsers:("Anonymous")', 'exclude_user')
  t.same(translate({ showInactive: true }).fq, ['allowedRolesAndUsers:("Anonymous")'], 'who may see inactive content has no date filter')
  t.equal(translate({ showInactiveOf: 'mia' }).fq[1], `(${ACTIVE}) OR Creator:"mia"`, 'show_inactive: the owner\'s own inactive content too')
  t.match(translate({}, { effective_steps: 1 }).fq[1], /effective:\[\* TO "2026-11-22T20:39:53.000Z"\]/, 'effective_steps rounds now up for effective')
  t.match(translate({}, { effective_steps: 1 }).fq[1], /expires:\{"2026-11-22T20:39:52.000Z" TO \*\]/, 'and down for expires')
  t.match(translate({}, { effective_steps: 3600 }).fq[1], /"2026-11-22T20:00:00.000Z"/, 'to the hour')
  const moved = translate({ criteria: { portal_type: 'talk', review_state: 'published' } })
  t.equal(moved.q, '+(review_state:("published"))', 'filter_queries (default portal_type): the clause leaves q …')
  t.equal(moved.fq[2], '(portal_type:("talk"))', '… for an fq of its own')
  const group = translate({ criteria: { portal_type: 'talk', review_state: 'published' } }, { filter_queries: ['portal_type review_state'] })
  t.equal(group.q, '*:*')
  t.equal(group.fq[2], '(portal_type:("talk")) AND (review_state:("published"))', 'a group moves when all its indexes are in the query')
  t.equal(translate({ criteria: { portal_type: 'talk' } }, { filter_queries: ['portal_type review_state'] }).q, '+(portal_type:("talk"))', 'otherwise it stays')
})

t.test('sorting, paging, fields, facets, highlighting', async t => {
  t.equal(translate({}).sort, 'created asc,UID asc', 'catalogue order without sort_on')
  t.equal(translate({ criteria: { SearchableText: 'x' } }).sort, 'score desc,created asc,UID asc', 'relevance first for full text')
  t.equal(translate({ sortOn: ['Title', 'room'], descending: true }).sort, 'sortable_title desc,room desc,created asc,UID asc', 'Title sorts as sortable_title')
  t.equal(translate({ sortOn: ['relevance'] }).sort, 'created asc,UID asc', 'relevance without full text is ignored')
  t.throws(() => translate({ sortOn: ['Subject'] }), { statusCode: 400, message: /Subject/ }, 'a keyword index cannot be sorted on')
  t.throws(() => translate({ sortOn: ['nosuch'] }), { statusCode: 400, message: /nosuch/ })
  t.match(translate({ start: 50, size: 25 }), { start: 50, rows: 25 }, 'b_start and b_size')
  t.match(translate({ size: 500 }, { max_results: 100 }), { rows: 100 }, 'rows never exceed max_results')
  t.match(translate({ size: 100 }, { max_results: 100 }), { rows: 100 }, 'up to it')
  t.match(translate({ size: 99 }, { max_results: 100 }), { rows: 99 })
  t.match(translate({ start: 1, size: 10, sortLimit: 3 }), { rows: 2 }, 'sort_limit')
  t.match(translate({ start: 5, size: 10, sortLimit: 3 }), { rows: 0 }, 'sort_limit below the page')
  t.throws(() => translate({ sortLimit: 0 }), { statusCode: 400, message: /sort_limit/ })
  t.equal(translate({ neededFields: ['UID', 'Title'] }).fl, 'UID,Title', 'fl: only what the answer needs (no `*`, no score)')
  t.equal(translate({ neededFields: ['UID', 'Title'], criteria: { SearchableText: 'solr' } }).fl, 'UID,Title', 'a ranked query sorts by score without fetching it')
  t.equal(translate({ neededFields: ['UID', 'Title'] }, { field_list: ['Title', 'room'] }).fl, 'UID,Title,room', 'what the answer needs plus field_list')
  t.match(translate({ facetFields: ['audience', 'room'] }), { facet: true, 'facet.field': ['audience', 'room'], 'facet.mincount': 1 }, 'facets')
  t.throws(() => translate({ facetFields: ['nosuch'] }), { statusCode: 400, message: /nosuch/ }, 'an unknown facet field')
  t.notOk('facet' in translate({}), 'no facets unless asked')
  t.match(translate({ criteria: { SearchableText: 'solr' }, highlightFields: [] }), {
    hl: true, 'hl.fl': 'Title,Description', 'hl.simple.pre': '[', 'hl.simple.post': ']', 'hl.fragsize': 100, 'hl.q': 'Title:((solr* OR solr)) OR Description:((solr* OR solr))'
  }, 'hl: default fields and the settings\' markers; only the full-text clause is highlighted')
  t.match(translate({ highlightFields: [] }, { highlight_fields: ['description'], highlight_formatter_pre: '', highlight_formatter_post: '</b>', highlight_fragsize: 20 }), {
    'hl.fl': 'description', 'hl.simple.pre': ' ', 'hl.simple.post': '</b>', 'hl.fragsize': 20
  }, 'highlight_* settings; an empty marker is a blank')
  t.match(translate({ highlightFields: ['Title'] }, { highlight_fields: ['description'] }), { 'hl.fl': 'Title' }, 'hl.fl of the query wins')
  t.throws(() => translate({ highlightFields: ['nosuch'] }), { statusCode: 400, message: /nosuch/ })
  t.notOk('hl' in translate({}), 'no highlighting unless asked')
})

t.test('boost_rules: a clause every document matches, adding to the score where a rule applies', async t => {
  const rules = { Title: 3, 'room:C++ "x"': 1.5 }
  const q = translate({ criteria: { SearchableText: 'plone' } }, { boost_rules: rules }).q
  t.equal(q.split(' +(*:*^0 OR ')[1], 'Title:(plone* OR plone)^3 OR room:"C++ \\"x\\""^1.5)', 'field words and quoted document values')
  t.notMatch(translate({ criteria: { portal_type: 'talk' } }, { boost_rules: rules }).q, /\^0/, 'no full text, no scoring: no boosts')
  t.notMatch(translate({ criteria: { SearchableText: 'plone' } }).q, /\^0/, 'no rules, no clause')
  const check = boostRulesCheck(new Set(['Title', 'room']))
  t.same(check({ ...DEFAULTS, boost_rules: rules }), [])
  t.match(check({ ...DEFAULTS, boost_rules: { nosuch: 1, 'room:': 1 } }), [{ field: 'boost_rules', message: /unknown field 'nosuch'/ }, { field: 'boost_rules', message: /no value/ }])
})
