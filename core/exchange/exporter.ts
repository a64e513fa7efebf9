import { createWriteStream } from 'node:fs'
import { mkdir, readdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { pipeline } from 'node:stream/promises'
import { fileOf, fileStream, readImage } from '../content/blobs.js'
import type { ContentTypeRegistry } from '../content/registry.js'
import { CONTENT_COLUMNS, type ContentRow } from '../content/rows.js'
import type { Db } from '../db/db.js'
import { BadRequest } from '../errors.js'
import { isObject, ploneUid, SITE_ROOT_UID, stableJson, uidLinksPlone } from './format.js'
import { exportRedirects } from './redirects.js'
import { exportPrincipals } from './principals.js'
import { exportedVersions, versionsOf } from './versions.js'

/** Objects read a statement: an export of any size holds a page of rows at a time (and each object's ordering entry). */
const PAGE = 500
/** A blob's file name on disk: the one it was uploaded with, when it is a plain name. */
const PLAIN_NAME = /^[A-Za-z0-9][A-Za-z0-9._ -]{0,200}$/

export interface ExportOptions { path?: string, progress?: (done: number) => void }

/**
 * Writes the site (or the subtree at `path`) in plone.exportimport's layout
 * into `target`, an empty or new folder: `content/<uid>/data.json` with its
 * blobs beside, `content/__metadata__.json` (the files, local roles, each
 * object's place among its siblings), `principals.json`, `redirects.json` and
 * the files this service has nothing for, empty. Keys are sorted and objects go in path
 * order: the same content gives the same bytes.
 */
/** Answers the objects exported (the site root's data.json apart) and their blobs. */
export async function exportSite (db: Db, types: ContentTypeRegistry, target: string, options: ExportOptions = {}): Promise<{ objects: number, blobs: number }> {
  const base = options.path ?? '/'
  await mkdir(join(target, 'content'), { recursive: true })
  if ((await readdir(join(target, 'content'))).length > 0) throw BadRequest(`${target} holds an export already; export into a new folder.`)
  const { rows: [top] } = await db.query<ContentRow>(`SELECT ${CONTENT_COLUMNS} FROM content WHERE path = $1`, [base])
  if (top === undefined) throw BadRequest(`Nothing at ${base} to export.`)

  const dataFiles: string[] = []
  const blobFiles: string[] = []
  const localRoles: Record<string, unknown> = {}
  // The whole site's export carries the root's own fields (Volto's home page) and the roles granted on it.
  if (base === '/') {
    await mkdir(join(target, 'content', SITE_ROOT_UID))
    await writeFile(join(target, 'content', SITE_ROOT_UID, 'data.json'), stableJson(rootData(top)))
    dataFiles.push(`${SITE_ROOT_UID}/data.json`)
    if (Object.keys(top.local_roles).length > 0) localRoles[SITE_ROOT_UID] = { local_roles: exportedRoles(top) }
  }
  const siblings: Array<{ parent: string, position: number, uid: string }> = []
  // The site's objects below the root, or the subtree's top and what it holds.
  const prefix = base === '/' ? '/' : `${base}/`
  let after = base === '/' ? '/' : ''
  for (;;) {
    // Keyset pages in path order: a parent's row comes before its children's.
    const { rows } = await db.query<ContentRow>(`SELECT ${CONTENT_COLUMNS} FROM content WHERE path COLLATE "C" > $1 AND (path = $3 OR starts_with(path, $2)) ORDER BY path COLLATE "C" LIMIT ${PAGE}`, [after, prefix, base])
    if (rows.length === 0) break
    after = rows[rows.length - 1].path
    const paths = [...new Set(rows.map(r => r.path.slice(0, r.path.lastIndexOf('/')) || '/'))]
    const { rows: parents } = await db.query<ContentRow>(`SELECT ${CONTENT_COLUMNS} FROM content WHERE path = ANY($1)`, [paths])
    const parentOf = new Map(parents.map(p => [p.uid, p]))
    const history = await historiesOf(db, rows.map(r => r.uid))
    const versions = await versionsOf(db, rows.map(r => r.uid))
    for (const obj of rows) {
      const folder = ploneUid(obj.uid)
      await mkdir(join(target, 'content', folder), { recursive: true })
      const data = { ...objectData(obj, parentOf.get(obj.parent_uid!)!, base === '/' ? obj.parent_uid === top.uid : obj.path === base, history.get(obj.uid) ?? [], types), ...exportedVersions(obj, types.get(obj.portal_type), versions.get(obj.uid) ?? []) }
      for (const [field, value] of Object.entries(data)) {
        if (!isObject(value) || typeof value.blob_path !== 'string') continue
        await mkdir(join(target, 'content', folder, field), { recursive: true })
        await writeBlob(db, obj.uid, field, join(target, 'content', value.blob_path))
        blobFiles.push(value.blob_path)
      }
      await writeFile(join(target, 'content', folder, 'data.json'), stableJson(data))
      dataFiles.push(`${folder}/data.json`)
      const roles = exportedRoles(obj)
      if (obj.owner !== null) roles[obj.owner] = [...new Set([...(roles[obj.owner] ?? []), 'Owner'])].sort()
      if (Object.keys(roles).length > 0 || obj.local_roles_block === true) localRoles[folder] = { ...(obj.local_roles_block === true ? { block: 1 } : {}), local_roles: roles }
      siblings.push({ parent: obj.parent_uid!, position: obj.position, uid: folder })
    }
    options.progress?.(dataFiles.length)
  }

  const ordering: Record<string, number> = {}
  siblings.sort((a, b) => a.parent < b.parent ? -1 : a.parent > b.parent ? 1 : a.position - b.position)
  siblings.forEach((s, i) => { ordering[s.uid] = i === 0 || siblings[i - 1].parent !== s.parent ? 0 : ordering[siblings[i - 1].uid] + 1 })
  await writeFile(join(target, 'content', '__metadata__.json'), stableJson({
    __version__: '1.0.0', _blob_files_: blobFiles, _data_files_: dataFiles, default_page: {}, local_permissions: {}, local_roles: localRoles, ordering
  }))
  await writeFile(join(target, 'principals.json'), stableJson(await exportPrincipals(db)))
  await writeFile(join(target, 'redirects.json'), stableJson(await exportRedirects(db, base)))
  for (const [file, empty] of [['relations.json', []], ['translations.json', []], ['discussions.json', {}]] as const) {
    await writeFile(join(target, file), stableJson(empty))
  }
  return { objects: dataFiles.length - (base === '/' ? 1 : 0), blobs: blobFiles.length }
}

/** Each object's workflow history, oldest first. */
async function historiesOf (db: Db, uids: string[]): Promise<Map<string, Array<Record<string, unknown>>>> {
  const { rows } = await db.query<{ uid: string, action: string | null, actor: string | null, comments: string, review_state: string, time: Date }>(
    'SELECT uid, action, actor, comments, review_state, time FROM workflow_history WHERE uid = ANY($1::uuid[]) ORDER BY uid, seq', [uids])
  const byUid = new Map<string, Array<Record<string, unknown>>>()
  for (const { uid, time, ...entry } of rows) {
    const entries = byUid.get(uid)
    if (entries === undefined) byUid.set(uid, [{ ...entry, time: time.toISOString() }])
    else entries.push({ ...entry, time: time.toISOString() })
  }
  return byUid
}

/** The local roles granted on an object, by principal as Plone names them (a user by its id). */
const exportedRoles = (obj: ContentRow): Record<string, string[]> => Object.fromEntries(Object.entries(obj.local_roles).map(([principal, r]) => [principal.replace(/^user:/, ''), r]))

/**
 * The site root's data.json: its fields, under plone.exportimport's site
 * root UID (which a Plone site's import takes for its own root), without
 * dates (a root's are the site's, not the content's).
 */
function rootData (root: ContentRow): Record<string, unknown> {
  return { ...(uidLinksPlone(root.data) as Record<string, unknown>), '@id': '/', '@type': root.portal_type, UID: SITE_ROOT_UID, is_folderish: true, review_state: null }
}

/** An object's data.json: what plone.exportimport writes of it that the service has. */
function objectData (obj: ContentRow, parent: ContentRow, topLevel: boolean, history: Array<Record<string, unknown>>, types: ContentTypeRegistry): Record<string, unknown> {
  const type = types.get(obj.portal_type)
  const data: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(obj.data)) {
    const kind = type?.fields.get(key)?.kind
    if ((kind === 'image' || kind === 'file') && isObject(value)) {
      const name = typeof value.filename === 'string' && PLAIN_NAME.test(value.filename) && !value.filename.startsWith('.') ? value.filename : key
      data[key] = { blob_path: `${ploneUid(obj.uid)}/${key}/${name}`, 'content-type': value['content-type'], filename: value.filename ?? null, size: value.size, ...(kind === 'image' ? { height: value.height, width: value.width } : {}) }
    } else data[key] = uidLinksPlone(value)
  }
  return {
    ...data,
    '@id': obj.path,
    '@type': obj.portal_type,
    UID: ploneUid(obj.uid),
    id: obj.id,
    // The top of a subtree's export goes to the site root of wherever it is imported.
    parent: { '@id': topLevel ? '/' : parent.path, '@type': topLevel ? 'Plone Site' : parent.portal_type, UID: topLevel ? SITE_ROOT_UID : ploneUid(parent.uid) },
    created: obj.created.toISOString(),
    modified: obj.modified.toISOString(),
    creators: obj.creators,
    review_state: obj.review_state,
    is_folderish: type?.folderish ?? false,
    workflow_history: history.length > 0 && type?.workflow != null ? { [type.workflow.id]: history } : {}
  }
}

/** A blob's bytes into its file: an image whole (as it is kept), a file streamed from its large object. */
async function writeBlob (db: Db, uid: string, field: string, path: string): Promise<void> {
  const image = await readImage(db, uid, field)
  if (image !== null) return await writeFile(path, image)
  const file = await fileOf(db, uid, field)
  if (file === null) return await writeFile(path, Buffer.alloc(0))
  await pipeline(fileStream(db, file.oid, 0, file.size), createWriteStream(path))
}
