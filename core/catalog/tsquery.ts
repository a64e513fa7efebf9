import { parseFullText, type FullText, type TextTerm } from '../query/text.js'
import { foldText } from './folding.js'

/** The words of a term, each reduced to letters and digits; `word*` becomes a prefix. */
const wordsOf = (text: string): string[] => (foldText(text).match(/[\p{L}\p{N}]+\*?/gu) ?? [])
  .map(w => w.endsWith('*') ? `${w.slice(0, -1)}:*` : w)

/** A term as tsquery: a word, a prefix, or the words of a phrase (or of a token with punctuation) in order. */
function tsqueryTerm (term: TextTerm): string | null {
  const words = wordsOf(term.kind === 'prefix' ? `${term.text}*` : term.text)
  if (words.length === 0) return null
  const positive = words.length === 1 ? words[0] : `(${words.join(' <-> ')})`
  return term.negated ? `!${positive}` : positive
}

/**
 * Full text as a PostgreSQL tsquery: clauses ANDed, alternatives ORed
 * (grouped from the left, as Plone's parser binds them), words reduced to
 * letters and digits, so that no input can inject tsquery syntax. Null when
 * nothing searchable is left.
 */
export function renderTsquery (text: FullText): string | null {
  const clauses = text.map(clause => clause.map(tsqueryTerm).filter((t): t is string => t !== null)
    .reduce<string | null>((group, term) => group === null ? term : `(${group} | ${term})`, null))
    .filter((c): c is string => c !== null)
  return clauses.length === 0 ? null : clauses.join(' & ')
}

/** SearchableText as a tsquery (for tests and tools): parse, then render. */
export const textQuery = (input: string): string | null => renderTsquery(parseFullText(input))
