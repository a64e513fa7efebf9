import { searchableText } from '../catalog/catalog.js'
import type { IndexableObject, IndexDefinition } from '../catalog/indexes.js'
import type { ContentType, ContentTypeRegistry } from '../content/registry.js'
import { solrFields } from './configset.js'

/** A Solr document: field name → value (arrays for multi-valued fields). */
export type SolrDocument = Record<string, unknown>

/** Dates in UTC with `Z`, as Solr's DatePointField wants them; JSON values as their text (collective.solr encodes `image_scales` so). */
function solrValue (index: IndexDefinition | undefined, value: unknown): unknown {
  if (value === null || value === undefined) return null
  if (index?.kind === 'date') return solrDate(value)
  if (index?.kind === 'dates' && Array.isArray(value)) {
    const dates = value.map(solrDate).filter(date => date !== null)
    return dates.length === 0 ? null : dates
  }
  if (Array.isArray(value) && value.length === 0) return null
  if (index?.kind === 'json') return JSON.stringify(value)
  return value
}

function solrDate (value: unknown): string | null {
  const date = value instanceof Date ? value : new Date(String(value))
  return Number.isNaN(date.getTime()) ? null : date.toISOString()
}

/** `user:<id>` is stored as `user$<id>` in Solr (its query syntax would read the colon). */
export const solrPrincipal = (principal: string): string => principal.replace(/^user:/, 'user$')

/** Fields only Solr has, filled by the service (copyField targets are filled by Solr itself). */
const SOLR_ONLY_SOURCES = ['SearchableText', 'description', 'showinsearch']

/** Fields an atomic update leaves to Solr: the unique key it names, the version Solr assigns, the copyField target Solr rebuilds. */
const LEFT_TO_SOLR = new Set(['UID', '_version_', 'default'])

/**
 * Builds Solr documents from the same index definitions as the catalogue,
 * plus the fields only Solr has (SearchableText as text, `description`,
 * `showinsearch`). `user:<id>` principals become `user$<id>` (Solr's query
 * syntax would read the colon). Only fields the live core knows are sent.
 */
export class SolrDocuments {
  /** Every field the service fills: the catalogue's indexes and SOLR_ONLY_SOURCES. */
  private readonly sourceFields: ReadonlySet<string>
  /**
   * Fields of the generated configset that Solr can not give back (neither
   * stored nor docValues, `searchwords`): an atomic update loses their
   * values as a full document does, since Solr rebuilds the document from
   * what it stored.
   */
  private readonly unreadableFields: ReadonlySet<string>

  constructor (private readonly registry: ContentTypeRegistry) {
    this.sourceFields = new Set([...registry.indexes.keys(), ...SOLR_ONLY_SOURCES])
    this.unreadableFields = new Set(solrFields(registry).filter(f => !f.stored && f.docValues !== true).map(f => f.name))
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
      if (LEFT_TO_SOLR.has(name)) continue
      if (!this.sourceFields.has(name)) continue
      doc[name] = { set: full[name] ?? null }
    }
    return doc
  }

  /**
   * Whether an atomic update keeps anything the full document would drop:
   * a field of the live core that the service does not fill (another
   * writer's) and Solr can give back, or fields not known at all (the live
   * schema unread). Without
   * one — the generated configset — both leave the same document in Solr,
   * and the full one costs Solr less: it reads no stored document back (a
   * real-time get per atomic update; docs/search.md, "Atomic updates").
   */
  atomicKeepsMore (knownFields: ReadonlySet<string> | null): boolean {
    if (knownFields === null) return true
    for (const name of knownFields) {
      if (!LEFT_TO_SOLR.has(name) && !this.sourceFields.has(name) && !this.unreadableFields.has(name)) return true
    }
    return false
  }
}
