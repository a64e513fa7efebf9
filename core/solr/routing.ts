import { values } from '../query/search-params.js'
import { parseBoolean } from '../query/zope.js'
import type { SolrSettings } from './settings.js'

/** A criterion with something to search for: `SearchableText=` (or only blanks) is none. */
const hasValue = (value: unknown): boolean => {
  const query = typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>).query : value
  return (Array.isArray(query) ? query : query === undefined ? [] : [query]).some(v => String(v).trim() !== '')
}

/** `use_solr`: any value but Zope's false spellings forces Solr (collective.solr: "any truthy value"). */
const truthy = (value: unknown): boolean => {
  const first = values(value, 'use_solr')[0] ?? ''
  try { return parseBoolean(first, 'use_solr') } catch { return true }
}

/**
 * Routing rules 1–3 (docs/search.md, with Solr active): `use_solr` forces
 * Solr; otherwise a required field with a value sends the query there
 * (an empty `required` list sends every query, as in collective.solr).
 * Rule 4 — the catalogue answers when Solr cannot — is the search route's.
 */
export function routesToSolr (settings: SolrSettings, query: Record<string, unknown>, criteria: Record<string, unknown>): boolean {
  if (!settings.active) return false
  if (query.use_solr !== undefined && truthy(query.use_solr)) return true
  if (settings.required.length === 0) return true
  return settings.required.some(name => hasValue(criteria[name]))
}
