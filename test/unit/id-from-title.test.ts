import t from 'tap'
import { idFromTitle } from '../../core/content/rows.js'

// Ids made from titles (docs/api.md): ASCII-folded, lower case, non-word runs → `-`.
// The `-1`, `-2` suffixes on clashes need the database: test/api/content.test.ts.
const cases: Array<[string, string, string]> = [
  ['My Document', 'my-document', 'lower case, spaces become a dash'],
  ['Ünïcode: Café & Crème!', 'unicode-cafe-creme', 'accents are folded, punctuation runs collapse'],
  ['Straße in Ærø, Łódź', 'strasse-in-aero-lodz', 'letters without a decomposition are transliterated'],
  ["Don't \"quote\" me", 'dont-quote-me', 'quotes are dropped, not turned into dashes'],
  ['  --Leading and trailing--  ', 'leading-and-trailing', 'no dash at either end'],
  ['Plone 6.1 release', 'plone-6-1-release', 'digits are kept'],
  ['a  --  b', 'a-b', 'runs collapse to one dash'],
  ['!!!', 'item', 'a title without letters still gives an id']
]

for (const [title, id, why] of cases) t.equal(idFromTitle(title), id, `${why}: ${JSON.stringify(title)}`)

t.test('every id is a valid path segment, however long the title', async t => {
  const long = idFromTitle(`${'word '.repeat(100)}end`)
  t.ok(long.length <= 255, `at most 255 characters (${long.length})`)
  t.ok(`${'word-'.repeat(100)}end`.startsWith(long), 'the id of the whole title, cut')
  t.notMatch(long, /-$/, 'not cut into a trailing dash')
  for (const title of ['Ω mega', '日本語のトーク', '🎉 Party 🎉', 'tab\there', 'emoji🎉inside']) {
    t.match(idFromTitle(title), /^[a-z0-9]+(-[a-z0-9]+)*$/, JSON.stringify(title))
  }
})
