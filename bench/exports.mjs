/**
 * Exports in plone.exportimport's layout on disk, written for the bench's
 * site exchange jobs (run.mjs's `siteExchange`): `content/__metadata__.json`
 * (`_data_files_`, `_blob_files_`, `ordering`, `local_roles`),
 * `content/<32-hex uid>/data.json` an object, its blobs beside, and
 * `principals.json`, as core/exchange/reader.ts reads them. The site is drawn
 * from a seeded generator: the same seed writes the same objects.
 */
import { createHash, randomFillSync } from 'node:crypto'
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { photo } from './media.mjs'
import { paragraph } from './pages.mjs'
import { seededRandom, talkBody, WORDS } from './talks.mjs'

/** The site's folders: sections at the root, the rest nested under them (at most NESTING deep). */
export const FOLDERS = 3000
const SECTIONS = 40
const NESTING = 4
/** Of the other objects: talks, the rest pages (Documents). */
const TALK_SHARE = 0.85
const PUBLISHED_SHARE = 0.7
/** Published objects that went through review (submitted, then published): one more history entry. */
const REVIEWED_SHARE = 0.2
/** Folders with a local role granted besides the owner's, and of those the ones blocking inherited roles. */
const SHARED_FOLDER_SHARE = 0.1
const BLOCKING_SHARE = 0.1
const EDITORS = 20
const WORKFLOW = 'simple_publication_workflow'
const ROOT_PARENT = { '@id': '/', '@type': 'Plone Site', UID: 'plone_site_root' }
/** Objects were created over these years; each is modified and published within a month of that. */
const FIRST_CREATED = Date.UTC(2019, 0, 1)
const CREATED_SPAN = 7 * 365 * 86400000
const MONTH = 30 * 86400000

const MB = 2 ** 20

const uidOf = (seed, n) => createHash('md5').update(`bench export ${seed} object ${n}`).digest('hex')
const editor = n => `editor-${n % EDITORS}`
const capitalise = text => text.charAt(0).toUpperCase() + text.slice(1)

/** The keys plone.exportimport writes of every object that the service does not keep (read and left alone). */
const PLONE_KEYS = { 'exportimport.constrains': {}, 'exportimport.conversation': [], 'exportimport.versions': {}, language: '##DEFAULT##', lock: {}, version: 'current' }

/**
 * An object's data.json around its own fields: where it is, its dates, its
 * state and the history that led there (created private; published ones
 * published by an editor, some after a submission).
 */
function dataOf ({ uid, id, type, parent, layout, folderish, owner, published, reviewed, created }, fields) {
  const publishedAt = new Date(created.getTime() + MONTH / 2)
  const history = [{ action: null, actor: owner, comments: '', review_state: 'private', time: created.toISOString() }]
  if (published && reviewed) history.push({ action: 'submit', actor: owner, comments: '', review_state: 'pending', time: new Date(created.getTime() + MONTH / 4).toISOString() })
  if (published) history.push({ action: 'publish', actor: editor(0), comments: '', review_state: 'published', time: publishedAt.toISOString() })
  return {
    ...PLONE_KEYS,
    ...fields,
    '@id': `${parent['@id'] === '/' ? '' : parent['@id']}/${id}`,
    '@type': type,
    UID: uid,
    id,
    parent,
    layout,
    is_folderish: folderish,
    created: created.toISOString(),
    modified: new Date(created.getTime() + MONTH).toISOString(),
    creators: [owner],
    review_state: published ? 'published' : 'private',
    workflow_history: { [WORKFLOW]: history },
    ...(published ? { effective: publishedAt.toISOString() } : {})
  }
}

/** A page of a title block and three to eight Slate paragraphs, its block ids drawn too. */
function pageFields (next, title) {
  const hex = () => Math.floor(next() * 2 ** 32).toString(16).padStart(8, '0')
  const ids = Array.from({ length: 4 + Math.floor(next() * 6) }, () => `${hex()}-${hex().slice(0, 4)}-4${hex().slice(0, 3)}-8${hex().slice(0, 3)}-${hex()}${hex().slice(0, 4)}`)
  const sentence = n => capitalise(Array.from({ length: n }, () => WORDS[Math.floor(next() * WORDS.length)]).join(' ')) + '.'
  const blocks = { [ids[0]]: { '@type': 'title' } }
  for (const id of ids.slice(1)) blocks[id] = paragraph(sentence(10 + Math.floor(next() * 51)))
  return { title, description: sentence(12), blocks, blocks_layout: { items: ids } }
}

/** Writes an export's files: each object's data.json (and blobs), the metadata, the principals. */
class ExportWriter {
  constructor (dir) {
    this.dir = dir
    this.dataFiles = []
    this.blobFiles = []
    this.ordering = {}
    this.localRoles = {}
    this.positions = new Map()
    mkdirSync(join(dir, 'content'), { recursive: true })
  }

  add (data, { roles = {}, block = false, blobs = {} } = {}) {
    const folder = join(this.dir, 'content', data.UID)
    mkdirSync(folder)
    writeFileSync(join(folder, 'data.json'), JSON.stringify(data, null, 2))
    this.dataFiles.push(`${data.UID}/data.json`)
    for (const [field, { name, bytes }] of Object.entries(blobs)) {
      mkdirSync(join(folder, field))
      writeFileSync(join(folder, field, name), bytes)
      this.blobFiles.push(`${data.UID}/${field}/${name}`)
    }
    const position = this.positions.get(data.parent.UID) ?? 0
    this.positions.set(data.parent.UID, position + 1)
    this.ordering[data.UID] = position
    this.localRoles[data.UID] = { ...(block ? { block: 1 } : {}), local_roles: { [data.creators[0]]: ['Owner'], ...roles } }
  }

  /**
   * The metadata in one line: indented, as the service's own exporter writes it, the
   * metadata of 100 000 objects is about 20 MiB, more than the 16 MiB the import reads of a JSON file.
   */
  finish (members) {
    writeFileSync(join(this.dir, 'content', '__metadata__.json'), JSON.stringify({
      __version__: '1.0.0', _blob_files_: this.blobFiles, _data_files_: this.dataFiles, default_page: {}, local_permissions: {}, local_roles: this.localRoles, ordering: this.ordering
    }))
    writeFileSync(join(this.dir, 'principals.json'), JSON.stringify({ groups: [], members }, null, 2))
    writeFileSync(join(this.dir, 'redirects.json'), '{}\n')
  }
}

/** The site's editors, as plone.exportimport exports users (with AuthEncoding's SSHA hash of a password of their own). */
function editors () {
  return Array.from({ length: EDITORS }, (_, n) => {
    const salt = Buffer.from(`salt${n}`)
    const hash = Buffer.concat([createHash('sha1').update(`password of ${editor(n)}`).update(salt).digest(), salt]).toString('base64')
    return { username: editor(n), email: `${editor(n)}@example.org`, fullname: `Editor ${n}`, password: `{SSHA}${hash}`, roles: ['Member'], groups: [], description: '', home_page: '', location: '' }
  })
}

/**
 * A site of `objects` objects into `dir`: FOLDERS folders (SECTIONS at the
 * root, the others nested under earlier ones), and in them talks and pages,
 * the first folders fuller than the last (a folder's share falls as its
 * number grows, as a site's older sections hold most); seven in ten
 * published, with their workflow histories; every object owned by one of
 * the editors, a tenth of the folders shared with another (some blocking
 * inherited roles). Answers how many objects it wrote.
 */
export function writeSiteExport (dir, objects, seed) {
  const next = seededRandom(seed)
  const writer = new ExportWriter(dir)
  const folders = []
  const common = n => {
    const owner = editor(Math.floor(next() * EDITORS))
    const published = next() < PUBLISHED_SHARE
    return { uid: uidOf(seed, n), owner, published, reviewed: published && next() < REVIEWED_SHARE, created: new Date(FIRST_CREATED + Math.floor(next() * CREATED_SPAN)) }
  }
  for (let n = 0; n < Math.min(FOLDERS, objects); n++) {
    let parent = n < SECTIONS ? null : folders[Math.floor(next() * n)]
    if (parent !== null && parent.depth >= NESTING) parent = parent.parent
    const id = `section-${n}`
    const object = { ...common(n), id, type: 'Folder', layout: 'listing_view', folderish: true, parent: parent === null ? ROOT_PARENT : parent.ref }
    const data = dataOf(object, { title: `${capitalise(WORDS[n % WORDS.length])} section ${n}`, description: '' })
    const shared = next() < SHARED_FOLDER_SHARE
    writer.add(data, shared ? { roles: { [editor(n + 1)]: ['Editor', 'Reviewer'] }, block: next() < BLOCKING_SHARE } : {})
    folders.push({ ref: { '@id': data['@id'], '@type': 'Folder', UID: data.UID }, depth: parent === null ? 1 : parent.depth + 1, parent })
  }
  for (let n = folders.length; n < objects; n++) {
    const folder = folders[Math.floor(next() ** 2 * folders.length)]
    const object = { ...common(n), parent: folder.ref }
    if (next() < TALK_SHARE) {
      const { '@type': _type, ...talk } = talkBody(n)
      writer.add(dataOf({ ...object, id: `talk-${n}`, type: 'talk', layout: 'talkview', folderish: false }, { ...talk, details: { ...talk.details, encoding: 'utf-8' } }))
    } else {
      writer.add(dataOf({ ...object, id: `page-${n}`, type: 'Document', layout: 'document_view', folderish: true }, pageFields(next, `Page ${n}`)))
    }
  }
  writer.finish(editors())
  return writer.dataFiles.length
}

/**
 * `files` Files of `fileBytes` random bytes each (nothing for PostgreSQL to
 * compress) and `images` photograph-like JPEGs (bench/media.mjs), published,
 * in one folder at the site's root, into `dir`. Answers the objects and the
 * bytes of their blobs.
 */
export async function writeBlobExport (dir, { files, fileBytes, images, seed, folderId }) {
  const next = seededRandom(seed)
  const writer = new ExportWriter(dir)
  const common = n => ({ uid: uidOf(seed, n), owner: editor(n), published: true, reviewed: false, created: new Date(FIRST_CREATED + Math.floor(next() * CREATED_SPAN)) })
  const folder = dataOf({ ...common(0), id: folderId, type: 'Folder', layout: 'listing_view', folderish: true, parent: ROOT_PARENT }, { title: 'Files' })
  writer.add(folder)
  const parent = { '@id': folder['@id'], '@type': 'Folder', UID: folder.UID }
  const bytes = Buffer.allocUnsafe(fileBytes)
  let total = 0
  for (let n = 1; n <= files; n++) {
    randomFillSync(bytes)
    const name = `recording-${n}.bin`
    const file = { blob_path: `${uidOf(seed, n)}/file/${name}`, 'content-type': 'application/octet-stream', filename: name, size: fileBytes }
    writer.add(dataOf({ ...common(n), id: name, type: 'File', layout: 'file_view', folderish: false, parent }, { title: `Recording ${n}`, file }), { blobs: { file: { name, bytes } } })
    total += fileBytes
  }
  for (let n = files + 1; n <= files + images; n++) {
    const { bytes: jpeg, width, height } = await photo(n)
    const name = `photo-${n}.jpg`
    const image = { blob_path: `${uidOf(seed, n)}/image/${name}`, 'content-type': 'image/jpeg', filename: name, size: jpeg.length, width, height }
    writer.add(dataOf({ ...common(n), id: name, type: 'Image', layout: 'image_view', folderish: false, parent }, { title: `Photo ${n}`, image }), { blobs: { image: { name, bytes: jpeg } } })
    total += jpeg.length
  }
  writer.finish(editors())
  return { objects: writer.dataFiles.length, bytes: total, megabytes: total / MB }
}
