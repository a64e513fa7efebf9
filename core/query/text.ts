/**
 * What a full-text search (`SearchableText`) asks for, parsed once: the
 * catalogue renders it to a PostgreSQL tsquery (core/catalog/search.ts), Solr
 * to Lucene syntax through the search pattern (core/solr/lucene.ts).
 *
 * The syntax is Plone's: words are all required, `OR` joins its neighbours
 * (binding tighter than the implicit AND), `NOT word` and `-word` exclude,
 * `"a phrase"` keeps word order (an unclosed quote runs to the end),
 * `word*` is a prefix. Operators are case-insensitive. Every other character
 * is text, never syntax: each engine escapes or drops it.
 */

/**
 * One searched thing. `text` is what the user typed (without the quotes of a
 * phrase or the `*` of a prefix): each engine folds and splits it its own way.
 * - `word`: letters and digits only;
 * - `prefix`: letters and digits followed by `*`;
 * - `phrase`: what stood between quotes;
 * - `token`: anything else that holds a letter or digit (`C++`, `foo:bar`):
 *   punctuation the engine's own analyser splits on.
 */
export interface TextTerm {
  kind: 'word' | 'prefix' | 'phrase' | 'token'
  text: string
  negated: boolean
}

/** Clauses that are all required; each clause is one or more terms of which any may match. */
export type FullText = TextTerm[][]

/** Control characters other than tab, CR and LF are blanks (as in collective.solr). */
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/g

const hasWord = (text: string): boolean => /[\p{L}\p{N}]/u.test(text)

function termOf (body: string, negated: boolean): TextTerm {
  if (body.startsWith('"')) return { kind: 'phrase', text: body.replace(/^"|"$/g, '').trim(), negated }
  if (/^[\p{L}\p{N}]+\*$/u.test(body)) return { kind: 'prefix', text: body.slice(0, -1), negated }
  if (/^[\p{L}\p{N}]+$/u.test(body)) return { kind: 'word', text: body, negated }
  return { kind: 'token', text: body, negated }
}

/** Parses SearchableText; an empty result (nothing searchable) finds nothing. */
export function parseFullText (input: string): FullText {
  const tokens = input.replace(CONTROL, ' ').match(/-?"[^"]*"?|\S+/g) ?? []
  const clauses: FullText = []
  let or = false
  let not = false
  for (const token of tokens) {
    const operator = token.toLowerCase()
    if (operator === 'or') { or = clauses.length > 0; continue }
    if (operator === 'and') continue
    if (operator === 'not') { not = true; continue }
    const minus = token.length > 1 && token.startsWith('-')
    const body = minus ? token.slice(1) : token
    if (!hasWord(body)) continue
    const term = termOf(body, not || minus)
    if (or) clauses[clauses.length - 1].push(term)
    else clauses.push([term])
    or = false
    not = false
  }
  return clauses
}
