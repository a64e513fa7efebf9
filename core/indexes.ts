import type { IndexKind } from './content-type.js'

/** What indexing sees of an object: its stored row plus what is derived from it. */
export interface IndexableObject {
  uid: string
  id: string
  path: string
  portal_type: string
  type_title: string
  folderish: boolean
  review_state: string | null
  creators: string[]
  created: Date
  modified: Date
  position: number
  data: Record<string, unknown>
  allowedRolesAndUsers: string[]
}

/**
 * One index of the catalogue (and, from the same definition, one field of the
 * Solr schema). `indexed` means it can be queried; `metadata` that it is
 * returned with results (Solr's `stored`).
 */
export interface IndexDefinition {
  name: string
  kind: IndexKind
  multiValued: boolean
  indexed: boolean
  metadata: boolean
  sortable: boolean
  value: (obj: IndexableObject) => unknown
  /** `core` or the content types that declare it. */
  declaredBy: string[]
}

const base = (name: string, kind: IndexKind, value: (o: IndexableObject) => unknown,
  opts: Partial<Pick<IndexDefinition, 'multiValued' | 'indexed' | 'metadata' | 'sortable'>> = {}): IndexDefinition => ({
  name,
  kind,
  value,
  multiValued: opts.multiValued ?? kind === 'keyword',
  indexed: opts.indexed ?? true,
  metadata: opts.metadata ?? true,
  sortable: opts.sortable ?? (kind === 'field' || kind === 'date' || kind === 'int' || kind === 'boolean' || kind === 'uuid'),
  declaredBy: ['core']
})

/** Plone's "Date": the publishing date when there is one, else the modification date. */
const plonesDate = (o: IndexableObject): unknown => o.data.effective ?? o.modified

/** Sorts titles case- and accent-insensitively, numbers padded so that 2 < 10. */
export function sortableTitle (title: unknown): string {
  const text = foldText(typeof title === 'string' ? title : '')
  return text.replace(/\d+/g, n => n.padStart(6, '0')).slice(0, 40 + 30)
}

/** Letters that Unicode does not decompose but Solr's ASCIIFoldingFilter folds all the same. */
const UNDECOMPOSABLE: Record<string, string> = { ß: 'ss', æ: 'ae', œ: 'oe', ø: 'o', ł: 'l', đ: 'd', ð: 'd', þ: 'th', ı: 'i' }

/** Lower case without accents: how both the catalogue and Solr compare words. */
export function foldText (text: string): string {
  return text.normalize('NFKD').replace(/\p{M}/gu, '').toLowerCase().replace(/[ßæœøłđðþı]/g, c => UNDECOMPOSABLE[c])
}

/**
 * The words of a text as the full-text index stores them: folded, letters and
 * digits only, so that `C++`, `e-mail` or `foo:bar` split the same way in the
 * index and in a query (PostgreSQL's parser would keep some of them whole).
 */
export function searchableWords (text: string): string {
  return (foldText(text).match(/[\p{L}\p{N}]+/gu) ?? []).join(' ')
}

/**
 * The indexes every object has, whatever its type: the seed's index schema
 * (§2.4) minus the fields that behaviors declare (Title, Description,
 * Subject, effective, expires come from plone.dublincore).
 */
export const coreIndexes: IndexDefinition[] = [
  base('UID', 'uuid', o => o.uid),
  base('getId', 'field', o => o.id),
  base('id', 'field', o => o.id, { metadata: false }),
  // The tree position, as in collective.solr's schema: `path` queries use these three.
  base('path_string', 'field', o => o.path, { indexed: false }),
  base('path_parents', 'keyword', o => pathParents(o.path), { metadata: false }),
  base('path_depth', 'int', o => pathDepth(o.path), { metadata: false }),
  base('portal_type', 'field', o => o.portal_type),
  base('Type', 'field', o => o.type_title),
  base('review_state', 'field', o => o.review_state),
  base('sortable_title', 'field', o => sortableTitle(o.data.title), { metadata: false }),
  base('created', 'date', o => o.created),
  base('modified', 'date', o => o.modified),
  base('Date', 'date', plonesDate),
  base('Creator', 'field', o => o.creators[0] ?? null),
  base('listCreators', 'keyword', o => o.creators, { indexed: false }),
  base('allowedRolesAndUsers', 'keyword', o => o.allowedRolesAndUsers, { metadata: false }),
  base('is_folderish', 'boolean', o => o.folderish),
  base('exclude_from_nav', 'boolean', () => false, { indexed: false }),
  base('getObjPositionInParent', 'int', o => o.position, { metadata: false }),
  base('object_provides', 'keyword', o => [`type:${o.portal_type}`], { metadata: false }),
  base('Language', 'field', () => 'en'),
  base('getIcon', 'field', () => null, { indexed: false }),
  base('getRemoteUrl', 'field', () => null, { indexed: false })
]

/** Catalogue column type of each kind of index. */
export const SQL_TYPE: Record<IndexKind, string> = {
  field: 'text',
  keyword: 'text[]',
  date: 'timestamptz',
  boolean: 'boolean',
  int: 'integer',
  text: 'text',
  uuid: 'uuid'
}

/** `/talks/a` → `['/', '/talks', '/talks/a']`: the object and every ancestor. */
export function pathParents (path: string): string[] {
  const parts = path.split('/').filter(Boolean)
  return ['/', ...parts.map((_, i) => '/' + parts.slice(0, i + 1).join('/'))]
}

/** Depth below the site root: `/talks` is 1, `/talks/a` is 2. */
export function pathDepth (path: string): number {
  return path.split('/').filter(Boolean).length
}
