import { asRecord, list, UUID, type CatalogQuery } from '../catalog-query.js'
import { BadRequest } from '../errors.js'
import { foldText, pathDepth, type IndexDefinition } from '../indexes.js'
import { fieldError, type SettingsCheck, type SolrSettings } from '../settings.js'
import { parseBoolean, parseDate, parseInteger } from '../zope-query.js'
import type { Solr } from './client.js'
import { solrPrincipal } from './documents.js'

export type SelectParams = Parameters<Solr['select']>[0]

/** A catalogue query plus what only Solr does: highlighting and the fields the answer needs. */
export interface SolrQuery extends CatalogQuery {
  /** `hl=true`: the fields to highlight (empty: the `highlight_fields` setting, else Title and Description). */
  highlightFields?: string[]
  /** Stored fields the response is built from (always fetched, whatever `field_list` says). */
  neededFields: string[]
}

export interface SolrRequest {
  params: SelectParams
  /** The page size after the `max_results` cap (for the batching links). */
  pageSize: number
}

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

/** Matches no document: what a criterion that can match nothing turns the whole query into. */
const NOTHING = '-*:*'

/** Control characters other than tab, CR and LF become spaces (as in collective.solr). */
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/g

const hasWord = (text: string): boolean => /[\p{L}\p{N}]/u.test(text)

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
export function searchableTextValue (input: string, distance: number): SearchableTextValue | null {
  const parts = textParts(input, distance)
  if (parts === null) return null
  const positive = (p: string[]): string[] => p.filter(v => !v.startsWith('-'))
  const group = (p: string[]): string | null => p.length === 0 ? null : p.length === 1 ? p[0] : `(${p.join(' ')})`
  return { value: group(positive(parts.values)), base: group(positive(parts.bases)), exclude: parts.values.filter(v => v.startsWith('-')).map(v => v.slice(1)) }
}

/** The parts of `{value}` and `{base_value}`, one per word, phrase or OR group; negated ones start with `-`. */
function textParts (input: string, distance: number): { values: string[], bases: string[] } | null {
  const tokens = input.replace(CONTROL, ' ').match(/-?"[^"]*"?|\S+/g) ?? []
  const values: string[] = []
  const bases: string[] = []
  let or = false
  let not = false
  for (const token of tokens) {
    const word = token.toLowerCase()
    if (word === 'or') { or = values.length > 0; continue }
    if (word === 'and') continue
    if (word === 'not') { not = true; continue }
    const minus = token.length > 1 && token.startsWith('-')
    const body = minus ? token.slice(1) : token
    if (!hasWord(body)) continue
    let value: string
    let base: string
    if (body.startsWith('"')) {
      const phrase = quote(body.replace(/^"|"$/g, '').trim())
      value = distance > 0 ? `${phrase}~${distance}` : phrase
      base = phrase
    } else if (/^[\p{L}\p{N}]+\*$/u.test(body) && body.length <= MAX_VARIANT_LENGTH + 1) {
      const folded = escapeTerm(foldText(body.slice(0, -1)))
      value = `(${folded}*)`
      base = folded
    } else if (/^[\p{L}\p{N}]+$/u.test(body) && body.length <= MAX_VARIANT_LENGTH) {
      const folded = escapeTerm(foldText(body))
      value = `(${folded}* OR ${body}${distance > 0 ? ` OR ${folded}~${distance}` : ''})`
      base = body
    } else {
      value = escapeTerm(body)
      base = value
    }
    if (not || minus) { value = `-${value}`; base = `-${base}` }
    if (or) {
      values[values.length - 1] = `(${values[values.length - 1]} OR ${value})`
      bases[bases.length - 1] = `(${bases[bases.length - 1]} OR ${base})`
    } else {
      values.push(value)
      bases.push(base)
    }
    or = false
    not = false
  }
  return values.length === 0 ? null : { values, bases }
}

/**
 * `hl.q`: any searched word in any highlighted field. Not the query itself:
 * Solr 9's highlighter (weight matches) highlights a field only where the
 * whole query matches inside it, which `+showinsearch:True` never does.
 */
function highlightQuery (input: string, distance: number, fields: string[]): string | null {
  const positive = textParts(input, distance)?.values.filter(v => !v.startsWith('-')) ?? []
  if (positive.length === 0) return null
  return fields.map(f => `${f}:(${positive.join(' OR ')})`).join(' OR ')
}

/**
 * The SearchableText clause: the `search_pattern` with `{value}`/`{base_value}`
 * (or SearchableText itself without one), minus the excluded parts anywhere
 * in the object's text.
 */
export function searchableTextClause (input: string, settings: Pick<SolrSettings, 'search_pattern' | 'levenshtein_distance'>): string | null {
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
export function boostClause (input: string, settings: Pick<SolrSettings, 'boost_rules' | 'levenshtein_distance'>): string | null {
  const rules = Object.entries(settings.boost_rules)
  const words = searchableTextValue(input, settings.levenshtein_distance)?.value ?? null
  if (rules.length === 0 || words === null) return null
  const boosts = rules.map(([key, boost]) => {
    const { field, value } = boostRule(key)
    return `${field}:${value === undefined ? words : quote(value)}^${boost}`
  })
  return ['*:*^0', ...boosts].join(' OR ')
}

/**
 * Translates the service's query (the same criteria the catalogue gets) into
 * Solr select parameters, with the catalogue's semantics for every index
 * kind, and the security and effective-date filters as `fq`.
 */
export class SolrQueryTranslator {
  /**
   * `index` resolves a query index as the catalogue does (400 for unknown ones);
   * `fieldNames` are the fields of the generated Solr schema.
   */
  constructor (private readonly index: (name: string) => IndexDefinition, private readonly fieldNames: ReadonlySet<string>) {}

  translate (query: SolrQuery, settings: SolrSettings, now: Date = new Date()): SolrRequest {
    const clauses = new Map<string, string | null>()
    let text: string | null = null
    for (const [name, raw] of Object.entries(query.criteria)) {
      if (name === 'SearchableText') {
        text = Array.isArray(raw) ? raw.join(' ') : String(asRecord(raw).query ?? '')
        clauses.set(name, searchableTextClause(text, settings))
        continue
      }
      const clause = name === 'path' ? this.pathClause(asRecord(raw)) : this.fieldClause(name, asRecord(raw))
      if (clause !== undefined) clauses.set(name, clause)
    }
    const fq = [this.securityFilter(query.principals, settings.exclude_user)]
    if (!query.showInactive) fq.push(this.activeFilter(query.showInactiveOf, settings.effective_steps, now))
    let q: string
    if ([...clauses.values()].includes(null)) {
      q = NOTHING
    } else {
      for (const group of settings.filter_queries) {
        const names = group.split(/\s+/).filter(Boolean)
        if (names.length === 0 || !names.every(n => clauses.has(n))) continue
        fq.push(names.map(n => `(${clauses.get(n)!})`).join(' AND '))
        for (const n of names) clauses.delete(n)
      }
      q = clauses.size === 0 ? '*:*' : [...clauses.values()].map(c => `+(${c!})`).join(' ')
      const boost = text !== null && clauses.has('SearchableText') ? boostClause(text, settings) : null
      if (boost !== null) q += ` +(${boost})`
    }

    if (query.sortLimit !== undefined && query.sortLimit < 1) throw BadRequest('sort_limit must be at least 1.')
    const pageSize = Math.min(query.size, settings.max_results)
    const rows = query.sortLimit !== undefined ? Math.min(pageSize, Math.max(0, query.sortLimit - query.start)) : pageSize
    const params: SelectParams = {
      q,
      fq,
      'q.op': 'AND',
      sort: this.sort(query, clauses.has('SearchableText')),
      start: query.start,
      rows,
      fl: this.fieldList(settings.field_list, query.neededFields)
    }
    if (query.facetFields !== undefined) {
      for (const name of query.facetFields) this.index(name)
      Object.assign(params, { facet: true, 'facet.field': query.facetFields, 'facet.mincount': 1, 'facet.limit': 100, 'facet.sort': 'count' })
    }
    if (query.highlightFields !== undefined) Object.assign(params, this.highlighting(query.highlightFields, settings, text))
    return { params, pageSize }
  }

  /** Clause of one index criterion; undefined when it has no value (as the catalogue ignores it), null when it matches nothing. */
  private fieldClause (name: string, record: Record<string, unknown>): string | null | undefined {
    const index = this.index(name)
    const values = list(record.query)
    if (values.length === 0) return undefined
    switch (index.kind) {
      case 'keyword':
        return `${name}:(${values.map(v => quote(String(v))).join(String(record.operator ?? 'or').toLowerCase() === 'and' ? ' AND ' : ' OR ')})`
      case 'text': {
        const words = String(values.join(' ')).split(/\s+/).filter(hasWord)
        return words.length === 0 ? undefined : `${name}:(${words.map(escapeTerm).join(' AND ')})`
      }
      case 'boolean':
        return `${name}:${String(parseBoolean(values[0], name))}`
      default: {
        const range = record.range === undefined ? undefined : String(record.range)
        // An id that is not a UUID matches nothing; as a range bound it is an error.
        const kept = index.kind === 'uuid' && range === undefined ? values.filter(v => UUID.test(String(v))) : values
        if (kept.length === 0) return null
        const term = (v: unknown): string => {
          if (index.kind === 'date') return quote(parseDate(v, name).toISOString())
          if (index.kind === 'int') return String(parseInteger(v, name))
          if (index.kind === 'uuid' && !UUID.test(String(v))) throw BadRequest(`Could not parse value '${String(v)}' of '${name}' as a UID.`)
          return quote(index.kind === 'uuid' ? String(v).toLowerCase() : String(v))
        }
        const terms = kept.map(term)
        if (range === 'min') return `${name}:[${terms[0]} TO *]`
        if (range === 'max') return `${name}:[* TO ${terms[terms.length - 1]}]`
        if (range === 'min:max' || range === 'minmax') {
          if (terms.length < 2) throw BadRequest(`The range 'min:max' of '${name}' needs two values.`)
          return `${name}:[${terms[0]} TO ${terms[1]}]`
        }
        if (range !== undefined) throw BadRequest(`Unknown range '${range}' for '${name}'; use min, max or min:max.`)
        return `${name}:(${terms.join(' OR ')})`
      }
    }
  }

  /** `path` with `depth` over path_parents and path_depth: 0 the object, n ≥ 1 down to n levels, absent or -1 everything below. */
  private pathClause (record: Record<string, unknown>): string | undefined {
    const paths = list(record.query).map(v => String(v).replace(/\/+$/, '') || '/')
    const depth = record.depth === undefined ? -1 : parseInteger(record.depth, 'path.depth')
    if (paths.length === 0) return undefined
    return paths.map(path => {
      const parents = `path_parents:${quote(path)}`
      const level = pathDepth(path)
      if (depth < 0) return parents
      return `(${parents} AND path_depth:[${depth === 0 ? level : level + 1} TO ${level + depth}])`
    }).join(' OR ')
  }

  /** The caller's principals; `exclude_user` leaves `user$<id>` out (cacheable, at the price of per-user grants). */
  private securityFilter (principals: string[], excludeUser: boolean): string {
    const tokens = principals.filter(p => !(excludeUser && p.startsWith('user:'))).map(solrPrincipal)
    return `allowedRolesAndUsers:(${tokens.map(quote).join(' OR ')})`
  }

  /**
   * Effective and not expired at "now" rounded down to `effective_steps`
   * seconds (repeated queries stay cacheable); no date means no limit, as in
   * the catalogue. The Owner asking for `show_inactive` also sees their own.
   */
  private activeFilter (creator: string | undefined, steps: number, now: Date): string {
    const step = Math.max(1, steps) * 1000
    const at = quote(new Date(Math.floor(now.getTime() / step) * step).toISOString())
    const active = `(effective:[* TO ${at}] OR (*:* -effective:[* TO *])) AND (expires:{${at} TO *] OR (*:* -expires:[* TO *]))`
    return creator === undefined ? active : `(${active}) OR Creator:${quote(creator)}`
  }

  /** The catalogue's order: sort_on (relevance = score), then relevance for text queries, then creation order. */
  private sort (query: SolrQuery, scored: boolean): string {
    const direction = query.descending ? 'desc' : 'asc'
    const terms = query.sortOn.map(name => {
      if (name === 'relevance') return scored ? 'score desc' : null
      const index = this.index(name === 'Title' ? 'sortable_title' : name)
      if (!index.sortable) throw BadRequest(`The index '${name}' cannot be sorted on.`)
      return `${index.name} ${direction}`
    }).filter((t): t is string => t !== null)
    if (terms.length === 0 && scored) terms.push('score desc')
    terms.push('created asc', 'UID asc')
    return terms.join(',')
  }

  /** `fl`: the `field_list` setting plus what the response needs; without it every stored field and the score. */
  private fieldList (fieldList: string[], needed: string[]): string {
    if (fieldList.length === 0) return '* score'
    return [...new Set([...fieldList, ...needed])].join(',')
  }

  /** `hl.*`: fields from the query, else the setting, else Title and Description; only the full-text clause is highlighted. */
  private highlighting (requested: string[], settings: SolrSettings, text: string | null): Record<string, string | number | boolean> {
    for (const name of requested) if (!this.fieldNames.has(name)) throw BadRequest(`Unknown highlight field '${name}'.`)
    const fields = requested.length > 0 ? requested : settings.highlight_fields.length > 0 ? settings.highlight_fields : ['Title', 'Description']
    const params: Record<string, string | number | boolean> = {
      hl: true,
      'hl.fl': fields.join(','),
      // collective.solr: an empty marker becomes a single space.
      'hl.simple.pre': settings.highlight_formatter_pre === '' ? ' ' : settings.highlight_formatter_pre,
      'hl.simple.post': settings.highlight_formatter_post === '' ? ' ' : settings.highlight_formatter_post,
      'hl.fragsize': settings.highlight_fragsize
    }
    const words = text === null ? null : highlightQuery(text, settings.levenshtein_distance, fields)
    if (words !== null) params['hl.q'] = words
    return params
  }
}
