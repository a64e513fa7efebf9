import { INDEX_KINDS, type IndexKind } from '../query/index-kinds.js'
import { imageValue, imageVersion, type ImageMeta } from '../content/image/scales.js'
import { pathDepth, pathParents } from '../content/paths.js'
import { foldText } from './folding.js'

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
  /** Its type's image fields that hold an image, in declaration order. */
  imageFields: string[]
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
  /**
   * The content column whose copy it is, when the statement that writes an
   * object may compute that column (a create takes its position from the
   * folder's counter in the same statement): the catalogue row written with
   * it reads the value from the row written (Catalog.upsertFrom).
   */
  fromRow?: string
  /**
   * For a date that recurs (an event's start and end): the index of its
   * further occurrences, null for a date that does not. A range over this
   * index matches an object whose own value or any further occurrence lies
   * within it; sorts read its own value, the first occurrence.
   */
  occurrences?: IndexDefinition
  /** `core` or the content types that declare it. */
  declaredBy: string[]
}

const base = (name: string, kind: IndexKind, value: (o: IndexableObject) => unknown,
  opts: Partial<Pick<IndexDefinition, 'multiValued' | 'indexed' | 'metadata' | 'sortable' | 'fromRow'>> = {}): IndexDefinition => ({
  name,
  kind,
  value,
  fromRow: opts.fromRow,
  multiValued: opts.multiValued ?? INDEX_KINDS[kind].multiValued,
  indexed: opts.indexed ?? true,
  metadata: opts.metadata ?? true,
  sortable: opts.sortable ?? INDEX_KINDS[kind].sortable,
  declaredBy: ['core']
})

/** Plone's "Date": the publishing date when there is one, else the modification date. */
const plonesDate = (o: IndexableObject): unknown => o.data.effective ?? o.modified

/** Sorts titles case- and accent-insensitively, numbers padded so that 2 < 10. */
export function sortableTitle (title: unknown): string {
  const text = foldText(typeof title === 'string' ? title : '')
  return text.replace(/\d+/g, n => n.padStart(6, '0')).slice(0, 40 + 30)
}

/** `image_scales` as Plone keeps it: per image field, a list of its one image's serialization, addresses relative to the object. */
export function imageScales (o: Pick<IndexableObject, 'uid' | 'modified' | 'data' | 'imageFields'>): Record<string, unknown> | null {
  if (o.imageFields.length === 0) return null
  return Object.fromEntries(o.imageFields.map(field => {
    const meta = o.data[field] as ImageMeta
    return [field, [imageValue(meta, field, imageVersion(o.uid, meta, o.modified), '@@images/')]]
  }))
}

/**
 * The indexes every object has, whatever its type: the index schema of the
 * original description (docs/search.md, "Query translation") minus the fields that behaviors declare (Title, Description,
 * Subject, effective, expires come from plone.dublincore).
 */
export const coreIndexes: IndexDefinition[] = [
  base('UID', 'uuid', o => o.uid),
  base('getId', 'field', o => o.id),
  base('id', 'field', o => o.id, { metadata: false }),
  // The tree position, as in collective.solr's schema: `path` queries use these three.
  // Indexed so that results sort by it (`sort_on=path`); its queries are `path`'s, below.
  base('path_string', 'field', o => o.path),
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
  base('getObjPositionInParent', 'long', o => o.position, { metadata: false, fromRow: 'position' }),
  base('object_provides', 'keyword', o => [`type:${o.portal_type}`], { metadata: false }),
  base('Language', 'field', () => 'en'),
  base('getIcon', 'field', () => null, { indexed: false }),
  // A Link's target (its `remoteUrl`), which Volto's listings link a Link to, as Plone's catalogue keeps it.
  base('getRemoteUrl', 'field', o => typeof o.data.remoteUrl === 'string' ? o.data.remoteUrl : null, { indexed: false }),
  // Plone 6's image metadata, which Volto's listings and teasers show images from: the first image field, and
  // every image field's serialization with addresses relative to the object (`@@images/…`).
  base('image_field', 'field', o => o.imageFields[0] ?? null, { indexed: false }),
  base('image_scales', 'json', imageScales, { indexed: false })
]
