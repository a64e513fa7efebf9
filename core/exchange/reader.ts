// One concern over 350 lines: reading an export is one pass of checks (paths, JSON, types, ids, UIDs, dates,
// blobs, roles, versions) whose reports must agree with what is written; its parts that stand alone are
// apart already (export-dir.ts, left-out.ts, versions.ts, mapping.ts, root.ts).
import type { ContentType, ContentTypeRegistry } from '../content/registry.js'
import type { HistoryEntry } from '../content/rows.js'
import { stateOf } from '../security/workflow.js'
import { userPrincipal, type LocalRoles } from '../security/roles.js'
import { ExportDir, ExportFileProblem } from './export-dir.js'
import { ExchangeReport } from './report.js'
import { Pacer } from '../pacing.js'
import { dashedUid, isObject, SITE_ROOT_UID, uidLinksDashed } from './format.js'
import { COMMENTS_KEY, commentsByUid, LEFT_OUT_FILES, LEFT_OUT_KEYS, LEFT_OUT_METADATA, reportLeftOut } from './left-out.js'
import { readVersions, VERSIONS_KEY, type ExportedHistory } from './versions.js'
import { makesBlocks, mappedField, mappedType, NO_MAPPING, richTextBlocks, type ImportMapping } from './mapping.js'

/** How much of an export is read: a JSON file's bytes, the objects, and the binaries' sizes (the service's own limits). */
export interface ReadLimits { jsonMaxBytes: number, maxObjects: number, imageMaxBytes: number, fileMaxBytes: number }

export interface ExportedBlob { field: string, kind: 'image' | 'file', path: string, size: number, filename: string | null, contentType: string }

/** What an object's data.json holds beyond its place: read again when the object is written (`ExportedObject.load`). */
export interface ExportedContent {
  /** Its fields as a create's body (binaries apart, in `blobs`). */
  fields: Record<string, unknown>
  history: HistoryEntry[]
  versions: ExportedHistory
}

/**
 * One object of an export, checked, as the reader keeps it until it is
 * written: its place, owner, dates, state, roles and blobs; its content
 * (`load`) is read again from its data.json then, so that an import holds a
 * few hundred bytes an object, not the whole export.
 */
export interface ExportedObject {
  uid: string
  /** null: the site root is its parent. */
  parentUid: string | null
  id: string
  type: ContentType
  blobs: ExportedBlob[]
  owner: string | null
  creators: string[]
  created: Date
  modified: Date
  reviewState: string | null
  localRoles: LocalRoles
  /** Plone's `block`: local roles granted above do not count here. */
  blockRoles: boolean
  /** The data file it came from, for reports. */
  source: string
  /** Its content, read and checked again (null: its data.json changed since it was read first). */
  load: () => ExportedContent | null
}

/** The exported site root's own fields (its blocks: Volto's home page) and the local roles granted on it. */
export interface ExportedRoot { type: ContentType, fields: Record<string, unknown>, localRoles: LocalRoles, source: string }

/**
 * `sitePath`: the exported site's own path (its root's `@id`: `/Plone`), '' when the export does not say;
 * `root`: the site root's data.json (null: an export of a subtree, or one without it).
 */
export interface ReadExport { objects: ExportedObject[], root: ExportedRoot | null, principals: unknown, redirects: Record<string, string>, sitePath: string, report: ExchangeReport }

/** Keys of a data.json that are no field but say where and what the object is, or what Plone computes. */
const NOT_FIELDS = new Set(['@id', '@type', 'UID', 'id', 'parent', 'created', 'modified', 'review_state', 'creators', 'workflow_history',
  'is_folderish', 'type_title', 'layout', 'lock', 'version', 'working_copy', 'working_copy_of', 'language', 'allow_discussion',
  'exportimport.constrains', 'exportimport.conversation', VERSIONS_KEY, 'changeNote', 'changeActor', 'contributors', 'rights', 'exclude_from_nav',
  'preview_caption', 'preview_image', 'items', 'items_total', 'previous_item', 'next_item', 'batching', '@components', 'table_of_contents'])
/** A Plone id as the service accepts one (core/content/validation.ts). */
const ID = /^[a-z0-9][a-z0-9._-]{0,254}$/i
const PLONE_SITE = 'Plone Site'
/**
 * What `__metadata__.json` may hold per object the import takes: its data file's name, its
 * blobs' (a few), its place and its local roles; this service's export writes about 220 bytes.
 */
const METADATA_BYTES_PER_OBJECT = 400

const date = (value: unknown): Date | null => {
  if (typeof value !== 'string') return null
  const d = new Date(value)
  return Number.isNaN(d.getTime()) || d.getUTCFullYear() < 1 || d.getUTCFullYear() > 9999 ? null : d
}

const strings = (value: unknown): string[] => Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : []

/**
 * Reads and checks a plone.exportimport export (its `content/` folder and
 * the JSON files beside it) without writing anything: each object whose
 * file, type, parent, id, UID, dates or blobs are wrong is left out with its
 * subtree and counted in the report with why. Answers the objects parents
 * first, siblings in their exported order.
 */
export async function readExport (path: string, types: ContentTypeRegistry, limits: ReadLimits, mapping: ImportMapping = NO_MAPPING): Promise<ReadExport> {
  const report = new ExchangeReport()
  let dir: ExportDir
  try {
    dir = await ExportDir.open(path)
  } catch (err) {
    report.problem('unreadable export', path, (err as Error).message)
    return { objects: [], root: null, principals: null, redirects: {}, sitePath: '', report }
  }
  // The JSON of a file, or null with the problem reported; a file the export may leave out (principals.json, …) is null when it does.
  const json = (file: string, { maxBytes = limits.jsonMaxBytes, optional = false } = {}): unknown => {
    try {
      return dir.json(file, maxBytes)
    } catch (err) {
      if (!(err instanceof ExportFileProblem)) throw err
      if (err.kind !== 'missing file' || !optional) report.problem(err.kind, err.file, err.message)
      return null
    }
  }
  const optional = (file: string, maxBytes?: number): unknown => json(file, { maxBytes, optional: true })
  // The metadata names every object (its data file, place, roles): its bound grows with the objects an import may hold.
  const metadata = optional('content/__metadata__.json', Math.max(limits.jsonMaxBytes, limits.maxObjects * METADATA_BYTES_PER_OBJECT))
  const meta = isObject(metadata) ? metadata : {}
  const dataFiles = strings(meta._data_files_)
  if (dataFiles.length > limits.maxObjects) {
    report.problem('unreadable export', 'content/__metadata__.json', `${dataFiles.length} objects; at most ${limits.maxObjects} are imported at once.`)
    return { objects: [], root: null, principals: null, redirects: {}, sitePath: '', report }
  }
  const ordering = isObject(meta.ordering) ? meta.ordering : {}
  const localRoles = isObject(meta.local_roles) ? meta.local_roles : {}

  const byUid = new Map<string, ExportedObject & { position: number }>()
  let rootUid: string | null = null
  let root: ExportedRoot | null = null
  let sitePath = ''
  // What the service has nothing for is counted, never dropped silently: the files beside content/, then the metadata's.
  const beside: Record<string, unknown> = {}
  for (const [file, leftOut] of Object.entries(LEFT_OUT_FILES)) reportLeftOut(leftOut, beside[file] = optional(file), file, report)
  for (const [key, leftOut] of Object.entries(LEFT_OUT_METADATA)) reportLeftOut(leftOut, meta[key], 'content/__metadata__.json', report)
  const context: CheckContext = { types, dir, report, limits, ordering, localRoles, mapping, discussed: commentsByUid(beside['discussions.json']) }
  // Checked in their sorted order: the first of two that collide wins. The reads are synchronous (export-dir.ts): the loop lets others run between slices.
  const pacer = new Pacer()
  for (const file of [...dataFiles].sort()) {
    await pacer.pace()
    const data = json(`content/${file}`)
    if (data === null) continue
    if (!isObject(data)) { report.problem('malformed object', file, 'A data.json holds one JSON object.'); continue }
    if (data['@type'] === PLONE_SITE) {
      rootUid = typeof data.UID === 'string' ? data.UID : rootUid
      sitePath = typeof data['@id'] === 'string' ? pathOf(data['@id']) : sitePath
      root = checkedRoot(file, data, context)
      continue
    }
    const object = checkedObject(file, data, context)
    if (object === null) continue
    if (byUid.has(object.uid)) { report.problem('duplicate UID', file, `The UID ${object.uid} is also ${byUid.get(object.uid)!.source}'s.`); continue }
    byUid.set(object.uid, withoutContent(object, context))
  }

  // Parents first, from the root down, without recursion; what no path from the root reaches is counted, never written.
  const children = new Map<string | null, Array<ExportedObject & { position: number }>>()
  for (const object of byUid.values()) {
    const parent = object.parentUid === rootUid || object.parentUid === SITE_ROOT_UID ? null : object.parentUid
    object.parentUid = parent
    const siblings = children.get(parent)
    if (siblings === undefined) children.set(parent, [object])
    else siblings.push(object)
  }
  const objects: ExportedObject[] = []
  // Walked by index: shift() moves the rest of the queue each time (5 s for 100 000 objects).
  const queue: Array<string | null> = [null]
  for (let next = 0; next < queue.length; next++) {
    const parent = queue[next]
    const siblings = (children.get(parent) ?? []).sort((a, b) => a.position - b.position || (a.id < b.id ? -1 : 1))
    children.delete(parent)
    const ids = new Set<string>()
    for (const object of siblings) {
      if (ids.has(object.id)) { report.problem('duplicate id', object.source, `Another object in the same folder has the id '${object.id}'.`); continue }
      if (parent !== null && !byUid.get(parent)!.type.folderish) { report.problem('parent not a folder', object.source, `Its parent is a ${byUid.get(parent)!.type.name}, which holds nothing here.`); continue }
      ids.add(object.id)
      objects.push(object)
      queue.push(object.uid)
    }
  }
  for (const orphans of children.values()) for (const object of orphans) report.problem('parent not imported', object.source, 'Its parent is not in the export or was left out.')

  const redirects = optional('redirects.json')
  return {
    objects,
    root,
    principals: optional('principals.json'),
    redirects: isObject(redirects) ? Object.fromEntries(Object.entries(redirects).filter((e): e is [string, string] => typeof e[1] === 'string')) : {},
    sitePath,
    report
  }
}

/** The path of an `@id` (a path, or a URL as older exports write it), without a trailing slash: '' for the root. */
function pathOf (id: string): string {
  let path = id
  try {
    if (/^https?:\/\//i.test(id)) path = new URL(id).pathname
  } catch {
    return ''
  }
  return path.replace(/\/+$/, '')
}

/** `discussed`: the objects (by exported UID) whose comments discussions.json holds, counted once from there. */
interface CheckContext { types: ContentTypeRegistry, dir: ExportDir, report: ExchangeReport, limits: ReadLimits, ordering: Record<string, unknown>, localRoles: Record<string, unknown>, mapping: ImportMapping, discussed: Map<string, number> }

/** One data.json as an object to write, or null (and the report says why). */
function checkedObject (file: string, data: Record<string, unknown>, context: CheckContext): (Omit<ExportedObject, 'load'> & ExportedContent & { position: number }) | null {
  const { types, report, ordering, localRoles, mapping } = context
  const typeName = data['@type']
  const mapped = typeof typeName === 'string' ? mappedType(mapping, typeName) : undefined
  if (mapped === null) {
    report.problem(`type left out by the mapping: ${String(typeName).slice(0, 100)}`, file, 'The mapping file maps this type to nothing; the object and what it holds are left out.')
    return null
  }
  const type = mapped !== undefined ? typeNamed(types, mapped) : undefined
  if (type === undefined || type === types.siteRoot) {
    report.problem(`type not in this service: ${String(typeName).slice(0, 100)}`, file, 'The service has no such content type; the object and what it holds are left out.')
    return null
  }
  const uid = typeof data.UID === 'string' ? dashedUid(data.UID) : null
  const parent = isObject(data.parent) && typeof data.parent.UID === 'string' ? data.parent.UID : null
  const parentUid = parent === null ? null : parent === SITE_ROOT_UID ? parent : dashedUid(parent)
  if (uid === null || (parent !== null && parentUid === null)) { report.problem('bad UID', file, 'A UID is 32 hexadecimal digits (or a UUID).'); return null }
  if (typeof data.id !== 'string' || !ID.test(data.id)) { report.problem('bad id', file, 'An id is 1 to 255 letters, digits, dots, dashes or underscores.'); return null }
  const created = date(data.created)
  const modified = date(data.modified) ?? created
  if (created === null || modified === null) { report.problem('bad date', file, 'created and modified must be ISO 8601 dates (years 1 to 9999).'); return null }

  const read = fieldsOf(type, file, data, context)
  if (read === null) return null
  const { fields, blobs } = read
  const versions = readVersions(data, file, report, version => fieldValues(type, file, version, context, 'version').fields, date)
  for (const [key, leftOut] of Object.entries(LEFT_OUT_KEYS)) if (key !== COMMENTS_KEY || !context.discussed.has(data.UID as string)) reportLeftOut(leftOut, data[key], file, report)
  const state = typeof data.review_state === 'string' ? data.review_state : null
  const history = workflowHistory(data.workflow_history)
  const reviewState = type.workflow === null ? null : state !== null && stateOf(type.workflow, state) !== undefined ? state : type.workflow.initial
  if (type.workflow !== null && reviewState !== state) report.problem('workflow state not kept', file, `'${String(state)}' is no state of the ${type.name} workflow here; the object is '${reviewState}'.`)

  const roles = rolesOf(localRoles, data.UID as string)
  const { owner, granted } = ownerAndRoles(isObject(roles.local_roles) ? roles.local_roles : {})
  const creators = strings(data.creators)
  const position = typeof ordering[data.UID as string] === 'number' ? ordering[data.UID as string] as number : Number.MAX_SAFE_INTEGER
  return {
    uid,
    parentUid,
    id: data.id,
    type,
    fields,
    blobs,
    owner: owner ?? creators[0] ?? null,
    creators,
    created,
    modified,
    reviewState,
    history,
    versions,
    localRoles: granted,
    blockRoles: roles.block === 1 || roles.block === true,
    source: file,
    position
  }
}

/**
 * An object as the reader keeps it: its content left out, read again from
 * its data.json by `load` (checked as it was, its problems reported the
 * first time only; the same object, or null).
 */
function withoutContent (object: Omit<ExportedObject, 'load'> & ExportedContent & { position: number }, context: CheckContext): ExportedObject & { position: number } {
  const { fields, history, versions, ...kept } = object
  // The closure holds the names only: the content read first is the collector's.
  const { source, uid, type } = object
  const load = (): ExportedContent | null => {
    let again: unknown
    try {
      again = context.dir.json(`content/${source}`, context.limits.jsonMaxBytes)
    } catch (err) {
      if (err instanceof ExportFileProblem) return null
      throw err
    }
    const checked = isObject(again) ? checkedObject(source, again, { ...context, report: new ExchangeReport() }) : null
    if (checked === null || checked.uid !== uid || checked.type !== type) return null
    return { fields: checked.fields, history: checked.history, versions: checked.versions }
  }
  return { ...kept, load }
}

/**
 * The site root's data.json: its fields the service's root has (title,
 * description, blocks), checked as an object's are, and the local roles
 * granted on it (its Owner stays the service's). Null when a field is unreadable.
 */
function checkedRoot (file: string, data: Record<string, unknown>, context: CheckContext): ExportedRoot | null {
  const type = context.types.siteRoot
  const read = fieldsOf(type, file, data, context)
  if (read === null) return null
  const roles = { ...rolesOf(context.localRoles, SITE_ROOT_UID), ...rolesOf(context.localRoles, String(data.UID)) }
  return { type, fields: read.fields, localRoles: ownerAndRoles(isObject(roles.local_roles) ? roles.local_roles : {}).granted, source: file }
}

/** `__metadata__.json`'s local roles of an object (by its exported UID). */
const rolesOf = (localRoles: Record<string, unknown>, uid: string): Record<string, unknown> => Object.hasOwn(localRoles, uid) && isObject(localRoles[uid]) ? localRoles[uid] as Record<string, unknown> : {}

/** An empty value loses nothing where the type has no field for it (Plone writes `subjects: []` of every object). */
const isEmpty = (value: unknown): boolean => value === '' || (Array.isArray(value) && value.length === 0) || (isObject(value) && Object.keys(value).length === 0)

/**
 * A data.json's fields as a write of `type` takes them (renamed or left out
 * by the mapping, links by UID in the service's spelling) and its blobs,
 * checked on disk; what the type has no field for is reported. Null when a
 * blob is missing or wrong: the object is left out.
 */
function fieldsOf (type: ContentType, file: string, data: Record<string, unknown>, context: CheckContext): { fields: Record<string, unknown>, blobs: ExportedBlob[] } | null {
  const { fields, binaries } = fieldValues(type, file, data, context, 'object')
  const blobs: ExportedBlob[] = []
  for (const { field, kind, value } of binaries) {
    const blob = checkedBlob(field, kind, value, context.dir, context.limits, context.report, file)
    if (blob === null) return null
    blobs.push(blob)
  }
  return { fields, blobs }
}

/**
 * The fields of an object (or of one of its older versions) and its image
 * and file fields apart. A field the type lacks is reported for the object,
 * counted for a version (whose binaries are the object's: left out).
 */
function fieldValues (type: ContentType, file: string, data: Record<string, unknown>, { report, mapping }: CheckContext, of: 'object' | 'version'):
{ fields: Record<string, unknown>, binaries: Array<{ field: string, kind: 'image' | 'file', value: unknown }> } {
  const typeName = String(data['@type'])
  const fields: Record<string, unknown> = {}
  const binaries: Array<{ field: string, kind: 'image' | 'file', value: unknown }> = []
  for (const [exported, value] of Object.entries(data)) {
    if (NOT_FIELDS.has(exported) || value === null) continue
    const key = mappedField(mapping, typeName, exported)
    if (key === null) { report.count('fields left out by the mapping'); continue }
    // A field the mapping sends to `blocks` (an exported `blocks` is blocks already).
    if (exported !== key && makesBlocks(key) && type.fields.get(key)?.kind === 'blocks') {
      const made = richTextBlocks(value, String(data.UID))
      if (made === null) { report.problem('no rich text for blocks', file, `${exported} holds no rich text to make blocks of; it is not imported.`); continue }
      Object.assign(fields, made)
      continue
    }
    const field = type.fields.get(key)
    if (field === undefined) {
      if (isEmpty(value)) continue
      if (of === 'object') report.problem(`field not in this service: ${type.name}.${key.slice(0, 100)}`, file, 'The type here has no such field; its value is not imported.')
      else report.count('fields of versions not in this service')
      continue
    }
    if (field.kind === 'image' || field.kind === 'file') {
      if (of === 'object') binaries.push({ field: key, kind: field.kind, value })
      continue
    }
    fields[key] = uidLinksDashed(value)
  }
  return { fields, binaries }
}

/** The service's type of a Plone type name: the same name, else the one name that differs only in case (Plone's `Folder`, the service's `folder`). */
export function typeNamed (types: ContentTypeRegistry, name: string): ContentType | undefined {
  const named = types.get(name)
  if (named !== undefined) return named
  const alike = [...types.types.values()].filter(type => type.name.toLowerCase() === name.toLowerCase())
  return alike.length === 1 ? alike[0] : undefined
}

/** An image or file field's blob, checked on disk: inside the export, a regular file, as long as the export says, within the service's limit. */
function checkedBlob (field: string, kind: 'image' | 'file', value: unknown, dir: ExportDir, limits: ReadLimits, report: ExchangeReport, file: string): ExportedBlob | null {
  if (!isObject(value) || typeof value.blob_path !== 'string') { report.problem('bad blob', file, `${field} names no blob_path.`); return null }
  try {
    const { path, size } = dir.file(`content/${value.blob_path}`)
    if (typeof value.size === 'number' && value.size !== size) { report.problem('truncated blob', file, `${field} is ${size} bytes on disk, ${value.size} in the export.`); return null }
    const max = kind === 'image' ? limits.imageMaxBytes : limits.fileMaxBytes
    if (size > max) { report.problem('blob too large', file, `${field} is ${size} bytes; at most ${max} are accepted.`); return null }
    return { field, kind, path, size, filename: typeof value.filename === 'string' ? value.filename : null, contentType: typeof value['content-type'] === 'string' ? value['content-type'] : 'application/octet-stream' }
  } catch (err) {
    if (!(err instanceof ExportFileProblem)) throw err
    report.problem(err.kind === 'missing file' ? 'missing blob' : err.kind, file, `${field}: ${err.message}`)
    return null
  }
}

/** Plone's `workflow_history` (by workflow id) as one list, oldest first. */
function workflowHistory (value: unknown): HistoryEntry[] {
  if (!isObject(value)) return []
  const entries: HistoryEntry[] = []
  for (const list of Object.values(value)) {
    if (!Array.isArray(list)) continue
    for (const entry of list) {
      const time = isObject(entry) ? date(entry.time) : null
      if (time === null || typeof entry.review_state !== 'string') continue
      entries.push({ action: typeof entry.action === 'string' ? entry.action : null, actor: typeof entry.actor === 'string' ? entry.actor : null, comments: typeof entry.comments === 'string' ? entry.comments : '', review_state: entry.review_state, time })
    }
  }
  return entries.sort((a, b) => a.time.getTime() - b.time.getTime())
}

/** Plone's local roles (principal → roles): its Owner is the service's owner column, the rest kept by principal. */
function ownerAndRoles (roles: Record<string, unknown>): { owner: string | null, granted: LocalRoles } {
  let owner: string | null = null
  const granted: LocalRoles = {}
  for (const [principal, list] of Object.entries(roles).sort(([a], [b]) => a < b ? -1 : 1)) {
    const kept = strings(list).filter(role => role !== 'Owner')
    if (owner === null && strings(list).includes('Owner')) owner = principal
    if (kept.length > 0) granted[userPrincipal(principal)] = kept
  }
  return { owner, granted }
}
