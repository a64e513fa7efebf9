import { isObject } from './format.js'
import type { ExchangeReport } from './report.js'

/**
 * What a Plone export may hold that the service has nothing for: each kind
 * counted in the report, entry by entry with a few examples and why, so
 * that nothing is dropped silently (docs/moving-a-plone-site.md, "What does
 * not map").
 */
interface LeftOut {
  kind: string
  why: string
  /** The value's entries, each named for the report's examples ('' : the place alone). */
  entries: (value: unknown) => string[]
}

const list = (value: unknown): unknown[] => Array.isArray(value) ? value : []
const keys = (value: unknown): string[] => isObject(value) ? Object.keys(value) : []
const text = (value: unknown): string => typeof value === 'string' ? value.slice(0, 100) : '?'

/** The key of a data.json that holds the object's comments. */
export const COMMENTS_KEY = 'exportimport.conversation'
const COMMENTS = { kind: 'not imported: comments', why: 'The service has no comments (plone.app.discussion).' }

/**
 * The comments of discussions.json, by the exported UID of the object they
 * are on: plone.exportimport's (UID → its conversation) and
 * collective.exportimport's (a list of `{uuid, conversation}`).
 */
export function commentsByUid (value: unknown): Map<string, number> {
  const byUid = new Map<string, number>()
  const add = (uid: unknown, conversation: unknown): void => {
    const n = list(isObject(conversation) ? conversation.items : conversation).length
    if (typeof uid === 'string' && n > 0) byUid.set(uid, (byUid.get(uid) ?? 0) + n)
  }
  if (Array.isArray(value)) for (const entry of value) { if (isObject(entry)) add(entry.uuid, entry.conversation) } else if (isObject(value)) for (const uid of Object.keys(value)) add(uid, value[uid])
  return byUid
}

/** The files beside `content/` that the service reads nothing of. */
export const LEFT_OUT_FILES: Record<string, LeftOut> = {
  'relations.json': {
    kind: 'not imported: relations',
    why: 'The service has no relation fields (relatedItems): the objects are imported, the relation between them is not.',
    entries: value => list(value).map(r => isObject(r) ? `${text(r.from_attribute)} ${text(r.from_uuid)} → ${text(r.to_uuid)}` : '?')
  },
  'translations.json': {
    kind: 'not imported: translations',
    why: 'The service has no multilingual sites (plone.app.multilingual): each translation is imported as an object of its own, not linked to the others.',
    entries: value => list(value).map(group => isObject(group) ? text(group.canonical) : '?')
  },
  'discussions.json': { ...COMMENTS, entries: value => [...commentsByUid(value)].flatMap(([uid, n]) => Array<string>(n).fill(uid)) },
  'portlets.json': {
    kind: 'not imported: portlets',
    why: 'Volto has no portlets.',
    entries: value => list(value).flatMap(at => isObject(at) && isObject(at.portlets) ? Object.values(at.portlets).flatMap(assigned => list(assigned).map(() => text(at['@id']))) : [])
  }
}

/** The keys of `content/__metadata__.json` that the service reads nothing of, by the object's UID. */
export const LEFT_OUT_METADATA: Record<string, LeftOut> = {
  default_page: { kind: 'not imported: default pages', why: 'A folder here shows its own view (as in Volto); the page is imported as an object of the folder.', entries: keys },
  local_permissions: {
    kind: 'not imported: local permissions',
    why: 'Permissions here follow roles (global, local, by workflow state); a permission changed on one object is not kept.',
    entries: value => isObject(value) ? keys(value).flatMap(uid => keys(value[uid]).map(permission => `${uid} ${permission.slice(0, 100)}`)) : []
  }
}

/** The keys of a data.json that the service reads nothing of (its comments only when discussions.json did not count them). */
export const LEFT_OUT_KEYS: Record<string, LeftOut> = {
  [COMMENTS_KEY]: { ...COMMENTS, entries: value => list(value).map(() => '') },
  'exportimport.constrains': {
    kind: 'not imported: constraints of addable types',
    why: 'A folder here takes every type its type allows; the types chosen for this one are not kept.',
    entries: value => isObject(value) && Object.values(value).some(types => list(types).length > 0) ? [''] : []
  }
}

/** Counts what `value` holds of a kind the service leaves out, each entry an example at `where`. */
export function reportLeftOut (leftOut: LeftOut, value: unknown, where: string, report: ExchangeReport): void {
  for (const entry of leftOut.entries(value)) report.problem(leftOut.kind, entry === '' ? where : `${where}: ${entry}`, leftOut.why)
}
