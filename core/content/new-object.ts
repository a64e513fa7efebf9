import { randomUUID } from 'node:crypto'
import type { Principal } from '../security/roles.js'
import { UNPLACED } from './positions.js'
import type { ContentType } from './registry.js'
import { idFromTitle, withChanges, type ContentRow, type HistoryEntry, type Located } from './rows.js'
import type { CheckedWrite } from './validation.js'

/** One object of a bulk import (`ContentStore.createMany`): built by `newObject`, with its history from creation on, oldest first. */
export interface NewObject { located: Located, write: CheckedWrite, history: HistoryEntry[] }

/** What a new object stores of a checked write: its values, those it clears (null) left out. */
export const storedData = (write: CheckedWrite): Record<string, unknown> => Object.fromEntries(Object.entries(write.values).filter(([, v]) => v !== null))

/**
 * A new object of `type` in `parent` as a create makes it, not written yet:
 * its fields from the checked write, its id (the explicit one, else from its
 * title), the caller as owner and creator, the workflow's initial state. Its
 * position is taken by the write that creates it (core/content/positions.ts).
 */
export function newObject (parent: Located, type: ContentType, write: CheckedWrite, who: Principal, now: Date): Located {
  const data = storedData(write)
  const obj: ContentRow = {
    uid: randomUUID(),
    parent_uid: parent.obj.uid,
    id: '',
    path: '',
    portal_type: type.name,
    review_state: type.workflow?.initial ?? null,
    owner: who.userId,
    creators: who.userId !== null ? [who.userId] : [],
    local_roles: {},
    position: UNPLACED,
    created: now,
    modified: now,
    data
  }
  // Nobody can have locked an object that did not exist.
  return renamed({ obj, lineage: [...parent.lineage, obj], type, lock: null }, parent, write.id ?? idFromTitle(String(data.title ?? type.name)))
}

/** The object under another id in `parent`. */
export function renamed (located: Located, parent: Located, id: string): Located {
  return withChanges(located, { id, path: parent.obj.path === '/' ? `/${id}` : `${parent.obj.path}/${id}` })
}

/** A new object placed in `parent` as the folder is now (moved or shared anew while a write ran): its path and lineage follow it. */
export const placedIn = (located: Located, parent: Located): Located => renamed({ ...located, lineage: [...parent.lineage, located.obj] }, parent, located.obj.id)

/** The history entry of an object's creation (none without a workflow). */
export function creationEntry ({ obj, type }: Located, who: Principal): HistoryEntry | undefined {
  return type.workflow !== null ? { action: null, actor: who.userId, comments: '', review_state: type.workflow.initial, time: obj.created } : undefined
}

/** The SQL types of CONTENT_COLUMNS, in their order. */
export const CONTENT_COLUMN_TYPES = ['uuid', 'uuid', 'text', 'text', 'text', 'text', 'text', 'text[]', 'jsonb', 'bigint', 'timestamptz', 'timestamptz', 'jsonb', 'boolean']
export const CREATORS = 7
export const POSITION = 9
export const DATA = 12

/** A row's values in the order of CONTENT_COLUMNS, as parameters (JSON columns as text). */
export const contentValues = (obj: ContentRow): unknown[] => [obj.uid, obj.parent_uid, obj.id, obj.path, obj.portal_type, obj.review_state, obj.owner,
  obj.creators, JSON.stringify(obj.local_roles), obj.position, obj.created, obj.modified, JSON.stringify(obj.data), obj.local_roles_block === true]
