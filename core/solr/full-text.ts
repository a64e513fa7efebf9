import { foldText } from '../catalog/folding.js'
import { parseFullText, type FullText, type TextTerm } from '../query/text.js'
import { fieldError, type SettingsCheck, type SolrSettings } from './settings.js'

/**
 * Full text in Lucene's syntax: escaping, the `{value}` and `{base_value}` of
 * collective.solr's search pattern, the highlight query and the boost rules.
 * Every character of user text reaches Solr escaped.
 */

/** Characters with a meaning in Solr's standard query syntax, and white space. */
const SPECIAL = /[\\+\-!():^[\]"{}~*?|&/\s]/g

/** A single term with every syntax character escaped; a bare operator word is quoted instead. */
export function escapeTerm (text: string): string {
  if (/^(AND|OR|NOT|TO)$/.test(text)) return quote(text)
  return text.replace(SPECIAL, c => '\\' + c)
}

/** A phrase (or an exact value of a string field): quoted, with `\` and `"` escaped. */
export function quote (text: string): string {
  return `"${text.replace(/[\\"]/g, c => '\\' + c)}"`
}

export const hasWord = (text: string): boolean => /[\p{L}\p{N}]/u.test(text)

/** Longer words get no prefix or fuzzy variant: Lucene refuses automata of that size (and no indexed word is longer than 255). */
const MAX_VARIANT_LENGTH = 100

/** `{value}`, `{base_value}` and the excluded parts of a SearchableText query (value and base null when all parts are excluded). */
export interface SearchableTextValue { value: string | null, base: string | null, exclude: string[] }

/**
 * `{value}` and `{base_value}` of a simple SearchableText query (collective.solr's
 * `mangleSearchableText`, but always safe): each word `w` becomes `(w* OR w)`
 * (the wildcard part folded, as Solr does not analyse wildcards), `w~N` added
 * with a Levenshtein distance; `w*` typed by the user stays a prefix;
 * `"a phrase"` stays quoted (`~N` makes it a proximity search); a word with
 * punctuation (`C++`, `foo:bar`) is escaped and left to Solr's analyser, as at
 * index time. `OR` is honoured as by the catalogue; `NOT` and `-word` are set
 * apart (`exclude`): inside the pattern they would only exclude per field.
 * Every other character reaches Solr escaped. Null when nothing searchable is left.
 */
export function searchableTextValue (input: string | FullText, distance: number): SearchableTextValue | null {
  const parts = textParts(input, distance)
  if (parts === null) return null
  const positive = (p: string[]): string[] => p.filter(v => !v.startsWith('-'))
  const group = (p: string[]): string | null => p.length === 0 ? null : p.length === 1 ? p[0] : `(${p.join(' ')})`
  return { value: group(positive(parts.values)), base: group(positive(parts.bases)), exclude: parts.values.filter(v => v.startsWith('-')).map(v => v.slice(1)) }
}

/** `{value}` and `{base_value}` of one term (negated ones start with `-`). */
function termParts (term: TextTerm, distance: number): { value: string, base: string } {
  let value: string
  let base: string
  if (term.kind === 'phrase') {
    const phrase = quote(term.text)
    value = distance > 0 ? `${phrase}~${distance}` : phrase
    base = phrase
  } else if (term.kind === 'prefix' && term.text.length <= MAX_VARIANT_LENGTH) {
    const folded = escapeTerm(foldText(term.text))
    value = `(${folded}*)`
    base = folded
  } else if (term.kind === 'word' && term.text.length <= MAX_VARIANT_LENGTH) {
    const folded = escapeTerm(foldText(term.text))
    value = `(${folded}* OR ${term.text}${distance > 0 ? ` OR ${folded}~${distance}` : ''})`
    base = term.text
  } else {
    // Punctuation (and words too long for variants) reach Solr escaped, for its analyser to split as at index time.
    value = escapeTerm(term.kind === 'prefix' ? `${term.text}*` : term.text)
    base = value
  }
  return term.negated ? { value: `-${value}`, base: `-${base}` } : { value, base }
}

/** The parts of `{value}` and `{base_value}`, one per clause (an OR group grouped from the left); negated ones start with `-`. */
function textParts (input: string | FullText, distance: number): { values: string[], bases: string[] } | null {
  const clauses = typeof input === 'string' ? parseFullText(input) : input
  if (clauses.length === 0) return null
  const group = (parts: string[]): string => parts.reduce((left, right) => `(${left} OR ${right})`)
  const parts = clauses.map(clause => clause.map(term => termParts(term, distance)))
  return { values: parts.map(p => group(p.map(t => t.value))), bases: parts.map(p => group(p.map(t => t.base))) }
}

/**
 * `hl.q`: any searched word in any highlighted field. Not the query itself:
 * Solr 9's highlighter (weight matches) highlights a field only where the
 * whole query matches inside it, which `+showinsearch:True` never does.
 */
export function highlightQuery (input: FullText, distance: number, fields: string[]): string | null {
  const positive = textParts(input, distance)?.values.filter(v => !v.startsWith('-')) ?? []
  if (positive.length === 0) return null
  return fields.map(f => `${f}:(${positive.join(' OR ')})`).join(' OR ')
}

/**
 * The SearchableText clause: the `search_pattern` with `{value}`/`{base_value}`
 * (or SearchableText itself without one), minus the excluded parts anywhere
 * in the object's text.
 */
export function searchableTextClause (input: string | FullText, settings: Pick<SolrSettings, 'search_pattern' | 'levenshtein_distance'>): string | null {
  const text = searchableTextValue(input, settings.levenshtein_distance)
  if (text === null) return null
  let positive = '*:*'
  if (text.value !== null && text.base !== null) {
    const { value, base } = text
    // Functions as replacements: `$&` and friends in user text must stay literal.
    positive = settings.search_pattern.trim() === ''
      ? `SearchableText:${value}`
      : settings.search_pattern.replaceAll('{value}', () => value).replaceAll('{base_value}', () => base)
  }
  if (text.exclude.length === 0) return positive
  return `(${positive}) ${text.exclude.map(e => `-SearchableText:${e}`).join(' ')}`
}

/** A boost rule's key: `field` (a field boost) or `field:value` (a document boost). */
function boostRule (key: string): { field: string, value?: string } {
  const colon = key.indexOf(':')
  return colon < 0 ? { field: key } : { field: key.slice(0, colon), value: key.slice(colon + 1) }
}

/** The `boost_rules` setting names only fields of the Solr schema, with a value where it has a colon. */
export function boostRulesCheck (fieldNames: ReadonlySet<string>): SettingsCheck {
  return settings => Object.keys(settings.boost_rules).flatMap(key => {
    const { field, value } = boostRule(key)
    if (!fieldNames.has(field)) return [fieldError('boost_rules', `The boost rule '${key}' names the unknown field '${field}'.`)]
    if (value === '') return [fieldError('boost_rules', `The boost rule '${key}' has no value after the colon.`)]
    return []
  })
}

/**
 * The `boost_rules` as a clause that every document matches (`*:*^0`) and
 * that adds to the score where a rule applies: full-text words in a boosted
 * field, or a boosted field value. It changes the order, never the matches.
 */
export function boostClause (input: FullText, settings: Pick<SolrSettings, 'boost_rules' | 'levenshtein_distance'>): string | null {
  const rules = Object.entries(settings.boost_rules)
  const words = searchableTextValue(input, settings.levenshtein_distance)?.value ?? null
  if (rules.length === 0 || words === null) return null
  const boosts = rules.map(([key, boost]) => {
    const { field, value } = boostRule(key)
    return `${field}:${value === undefined ? words : quote(value)}^${boost}`
  })
  return ['*:*^0', ...boosts].join(' OR ')
}
