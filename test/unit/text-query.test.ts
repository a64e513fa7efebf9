import t from 'tap'
import { textQuery } from '../../core/catalog/tsquery.js'
import { foldText, searchableWords } from '../../core/catalog/folding.js'

// What SearchableText becomes in PostgreSQL's tsquery language. The API tests
// (test/api/search-fulltext.test.ts) check that these queries find the right talks.
const cases: Array<[string, string | null, string]> = [
  ['Müller', 'muller', 'accents and case are folded'],
  ['MÜLLER', 'muller', 'upper case with accents'],
  ['Straße Ærø', 'strasse & aero', 'letters that do not decompose are folded as Solr\'s ASCII folding does'],
  ['solr plone', 'solr & plone', 'words are ANDed (q.op=AND)'],
  ['fast*', 'fast:*', 'a trailing * is a prefix search'],
  ['*fast', 'fast', 'a leading * is dropped (no suffix search)'],
  ['"plone keynote"', '(plone <-> keynote)', 'a phrase keeps word order'],
  ['"plone keyn*"', '(plone <-> keyn:*)', 'a phrase may end in a prefix'],
  ['"unbalanced phrase', '(unbalanced <-> phrase)', 'an unclosed quote runs to the end'],
  ['solr OR keynote', '(solr | keynote)', 'OR joins its neighbours'],
  ['a OR b c', '(a | b) & c', 'OR binds tighter than the implicit AND'],
  ['a or b', '(a | b)', 'operators are case-insensitive (lowercaseOperators)'],
  ['OR a', 'a', 'a leading OR is ignored'],
  ['a OR', 'a', 'a trailing OR is ignored'],
  ['fastify -solr', 'fastify & !solr', '-word excludes'],
  ['fastify NOT solr', 'fastify & !solr', 'NOT word excludes'],
  ['fastify -"advanced solr"', 'fastify & !(advanced <-> solr)', 'a phrase can be excluded'],
  ['a AND b', 'a & b', 'AND is the default anyway'],
  ['foo:bar', '(foo <-> bar)', 'punctuation inside a word makes a phrase of its parts'],
  ['C++ (advanced) "AND" foo:bar', 'c & advanced & and & (foo <-> bar)', 'syntax characters are not operators'],
  ['back\\slash \'quote\'', '(back <-> slash) & quote', 'backslashes and single quotes'],
  ['', null, 'empty'],
  ['*', null, 'a lone wildcard'],
  ['   ', null, 'blanks'],
  ['&|!:*()<->', null, 'tsquery syntax only'],
  ['NOT', null, 'an operator only'],
  ['-', null, 'a lone minus']
]

t.test('SearchableText → tsquery', async t => {
  for (const [input, expected, why] of cases) t.equal(textQuery(input), expected, `${JSON.stringify(input)}: ${why}`)
})

t.test('the indexed words and the queried words are folded the same way', async t => {
  t.equal(searchableWords('Jürgen Müller: C++, "Fastify" & Solr!'), 'jurgen muller c fastify solr')
  t.equal(foldText('ÉCOLE Straße Łódź Øre œuvre'), 'ecole strasse lodz ore oeuvre')
  t.equal(searchableWords('the 1.5 release, e-mail'), 'the 1 5 release e mail', 'numbers and hyphenated words split like the query does')
})
