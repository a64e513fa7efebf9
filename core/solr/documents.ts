import { searchableText } from '../catalog/catalog.js'
import type { IndexableObject, IndexDefinition } from '../catalog/indexes.js'
import type { ContentType, ContentTypeRegistry } from '../content/registry.js'

/** A Solr document: field name → value (arrays for multi-valued fields). */
export type SolrDocument = Record<string, unknown>

/** Dates in UTC with `Z`, as Solr's DatePointField wants them. */
function solrValue (index: IndexDefinition | undefined, value: unknown): unknown {
  if (value === null || value === undefined) return null
  if (index?.kind === 'date') {
    const date = value instanceof Date ? value : new Date(String(value))
    return Number.isNaN(date.getTime()) ? null : date.toISOString()
  }
  if (Array.isArray(value) && value.length === 0) return null
  return value
}

/** `user:<id>` is stored as `user$<id>` in Solr (its query syntax would read the colon). */
export const solrPrincipal = (principal: string): string => principal.replace(/^user:/, 'user$')

/** Fields only Solr has, filled by the service (copyField targets are filled by Solr itself). */
const SOLR_ONLY_SOURCES = ['SearchableText', 'description', 'showinsearch']

/**
 * Builds Solr documents from the same index definitions as the catalogue,
 * plus the fields only Solr has (SearchableText as text, `description`,
 * `showinsearch`). `user:<id>` principals become `user$<id>` (Solr's query
 * syntax would read the colon). Only fields the live core knows are sent.
 */
export class SolrDocuments {
  /** Every field the service fills: the catalogue's indexes and SOLR_ONLY_SOURCES. */
  private readonly sourceFields: ReadonlySet<string>

  constructor (private readonly registry: ContentTypeRegistry) {
    this.sourceFields = new Set([...registry.indexes.keys(), ...SOLR_ONLY_SOURCES])
  }

  /** The full document; fields without a value are left out. */
  build (type: ContentType, obj: IndexableObject, knownFields: ReadonlySet<string> | null): SolrDocument {
    const text = searchableText(type, obj.data)
    const doc: SolrDocument = {}
    const put = (name: string, value: unknown): void => {
      if (value === null || value === undefined) return
      if (knownFields !== null && !knownFields.has(name)) return
      doc[name] = value
    }
    for (const index of this.registry.indexes.values()) {
      let value = solrValue(index, index.value(obj))
      if (index.name === 'allowedRolesAndUsers' && Array.isArray(value)) value = value.map(p => solrPrincipal(String(p)))
      put(index.name, value)
    }
    put('SearchableText', [text.title, text.rest].filter(Boolean).join(' ') || null)
    put('description', obj.data.description ?? null)
    put('showinsearch', true)
    return doc
  }

  /**
   * The same document as an atomic update: every field `set`, fields without
   * a value `set` to null (so a cleared field is cleared in Solr too). An
   * atomic update can never turn a document into a husk with only its UID.
   */
  atomic (type: ContentType, obj: IndexableObject, knownFields: ReadonlySet<string> | null): SolrDocument {
    const full = this.build(type, obj, knownFields)
    // Without the live schema, every field the service fills: a cleared field must be cleared all the same.
    const names = knownFields ?? this.sourceFields
    const doc: SolrDocument = { UID: full.UID }
    for (const name of names) {
      if (name === 'UID' || name === '_version_' || name === 'default') continue
      if (!this.sourceFields.has(name)) continue
      doc[name] = { set: full[name] ?? null }
    }
    return doc
  }
}
