import { foldText } from '../catalog/folding.js'
import type { LocalRoles } from '../security/roles.js'
import type { LockRow } from './locks.js'
import type { ContentType } from './registry.js'

/** An object as the `content` table stores it: what traversal, security and the workflow need, and every field in `data`. */
export interface ContentRow {
  uid: string
  parent_uid: string | null
  id: string
  path: string
  portal_type: string
  review_state: string | null
  owner: string | null
  creators: string[]
  local_roles: LocalRoles
  /** Plone's `__ac_local_roles_block__`: local roles above this object do not count on it and below (absent: false). */
  local_roles_block?: boolean
  position: number
  created: Date
  modified: Date
  data: Record<string, unknown>
}

/** An object with its ancestors, root first (itself last): what permission checks need. */
export interface Located {
  obj: ContentRow
  lineage: ContentRow[]
  type: ContentType
  /** The object's live lock when it was read with the object (null: none); absent when it was not read. */
  lock?: LockRow | null
}

/** What traversal found: the object, or null and the nearest existing ancestor's lineage. */
export interface Traversal<T extends Located> { found: T | null, nearest: ContentRow[] }

/** The object with `changes` made to its row, in itself and as the last of its lineage. */
export function withChanges (located: Located, changes: Partial<ContentRow>): Located {
  const obj = { ...located.obj, ...changes }
  return { ...located, obj, lineage: [...located.lineage.slice(0, -1), obj] }
}

/** One step of an object's workflow history. */
export interface HistoryEntry { action: string | null, actor: string | null, comments: string, review_state: string, time: Date }

export const CONTENT_COLUMNS = 'uid, parent_uid, id, path, portal_type, review_state, owner, creators, local_roles, position, created, modified, data, local_roles_block'

/** Plone's URL normaliser, for ids made from titles: ASCII, lower case, dashes. */
export function idFromTitle (title: string): string {
  const id = foldText(title).replace(/['"]/g, '').replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 200).replace(/-+$/, '')
  return id === '' ? 'item' : id
}
