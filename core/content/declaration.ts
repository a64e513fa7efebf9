import type { TObject, TSchema } from 'typebox'
import type { FieldError } from '../errors.js'
import type { PermissionName } from '../security/roles.js'
import type { IndexKind } from '../query/index-kinds.js'
import type { Workflow } from '../security/workflow.js'

export type { IndexKind } from '../query/index-kinds.js'

/**
 * Annotations a content type puts on a field's TypeBox schema (as extra
 * schema options). Everything else about the field (type, limits, required,
 * formats) is plain JSON Schema from TypeBox.
 */
export interface FieldAnnotations {
  /** Catalogue index for this field (and its Solr field). */
  index?: IndexKind
  /** Index name when it differs from the field name (e.g. `subjects` → `Subject`). */
  indexName?: string
  /** Whether the index is also returned as result metadata (default true). */
  metadata?: boolean
  /**
   * For an RFC 5545 recurrence: the date fields (each a `date` index) that
   * recur by it, anchored on the date field `anchor` (its DTSTART). A range
   * over their indexes then finds every occurrence (Plone's DateRecurringIndex).
   */
  recurs?: { dates: string[], anchor: string }
  /** Part of `SearchableText`. */
  searchable?: boolean
  /** Permission needed to change the value (others may send the stored value back). */
  writePermission?: PermissionName
  /** Named vocabulary the value (or each item) must come from. */
  vocabulary?: string
  /** Named vocabulary of suggestions for a free value (tags: `plone.app.vocabularies.Keywords`). */
  suggestions?: string
  /** Rich text (HTML, sanitised), an image, a file, Volto's blocks and their layout (core/content/blocks.ts): values with their own rules. */
  kind?: 'richtext' | 'image' | 'file' | 'blocks' | 'blocks_layout'
  /** For rich text: most characters of text (markup not counted). */
  maxTextLength?: number
}

/** The JSON Schema keywords the service reads from a field. */
interface SchemaKeywords { type?: string, format?: string, pattern?: string, default?: unknown }

export type Field = TSchema & FieldAnnotations & SchemaKeywords

/** A check over several fields (Plone's invariants), run on the merged object. */
export type Invariant = (data: Record<string, unknown>) => FieldError[]

/** A reusable set of fields with its invariants (Plone's behaviors). */
export interface Behavior {
  name: string
  schema: TObject
  invariants?: Invariant[]
  /** The fieldset of `@types` its fields go in, when Plone names it otherwise than by the behavior (`volto.blocks`: `layout`). */
  fieldset?: { id: string, title: string }
}

export interface VocabularyTerm { token: string, title: string | null }
export interface VocabularyDeclaration {
  title: string
  terms: readonly VocabularyTerm[]
  /** Managers may replace the terms (kept in the database). */
  editable?: boolean
}

export interface ContentTypeDeclaration {
  /** `@type` value, e.g. `talk`. */
  name: string
  title: string
  description?: string
  folderish: boolean
  /** For folderish types: the types addable inside; omitted = every globally addable type. */
  allowedTypes?: string[]
  /** Addable in any folder that does not restrict its types (default true). */
  globalAllow?: boolean
  behaviors: Behavior[]
  /** The type's own fields; `Type.Optional` marks optional ones. */
  schema: TObject
  invariants?: Invariant[]
  /** Defaults to the simple publication workflow; null = no workflow (always visible). */
  workflow?: Workflow | null
  vocabularies?: Record<string, VocabularyDeclaration>
  /** Default view name reported as `layout`. */
  layout?: string
  /**
   * The folder this type's items live in, below the site root, created at
   * first start (published). `localRoles` are granted on it: the talk's
   * `{Authenticated: ['Contributor']}` lets every logged-in user submit talks.
   */
  container?: ContainerDeclaration
  /**
   * For a type whose GET lists the results of a query its object stores
   * (plone.app.contenttypes' Collection): that query from the object's data,
   * in `@querystring-search`'s terms. The results are the reader's (their
   * access in the query), batched by the GET's `b_start` and `b_size`.
   */
  storedQuery?: (data: Record<string, unknown>) => StoredQuery
}

/** A query an object stores, as `@querystring-search` takes it (core/catalog/querystring.ts). */
export interface StoredQuery { query: unknown, sort_on?: unknown, sort_order?: unknown, limit?: unknown }

export interface ContainerDeclaration {
  id: string
  title: string
  /** The folder's content type. */
  type: string
  localRoles?: Record<string, string[]>
}

/** Identity function that gives a declaration its type: the one thing a content-type folder exports. */
export function defineContentType (declaration: ContentTypeDeclaration): ContentTypeDeclaration {
  return declaration
}

export function defineBehavior (behavior: Behavior): Behavior {
  return behavior
}
