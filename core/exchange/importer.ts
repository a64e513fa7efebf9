import { createReadStream } from 'node:fs'
import { open } from 'node:fs/promises'
import { keepBinary } from '../content/blobs.js'
import { writeBatch } from '../content/batch-write.js'
import { newObject, storedData, type NewObject } from '../content/new-object.js'
import { withChanges, type HistoryEntry, type Located } from '../content/rows.js'
import type { ContentStore, Write } from '../content/store.js'
import { checkWrite, type CheckedWrite, type WriteContext } from '../content/validation.js'
import type { Queryable } from '../db/db.js'
import { ApiError } from '../errors.js'
import { Pacer } from '../pacing.js'
import type { ImportMapping } from './mapping.js'
import type { ExportedBlob, ExportedContent, ExportedObject, ReadExport } from './reader.js'
import { refusal } from './report.js'
import { keepVersions } from './versions.js'

/** Objects a transaction writes at most, and the image bytes it holds at most (images are checked whole, as a create's). */
const BATCH_OBJECTS = 200
const BATCH_IMAGE_BYTES = 64 * 1024 * 1024
/** Bytes of a file a statement appends to its large object: what the import holds of a file at a time. */
const FILE_SLICE_BYTES = 1024 * 1024
/**
 * Batches under way at once, each on a connection of its own: while one
 * waits for PostgreSQL another is read, checked or written, and PostgreSQL
 * works on several transactions with several cores. On the project's 2-core
 * machines (100 000 objects, docs/performance-history.md): 2 writers 1 140
 * objects/s, 3 1 241, 4 1 240 — the machine's cores are busy from 3 on.
 */
export const DEFAULT_WRITERS = 3

export interface ImportOptions {
  /** What validation reads besides the body (core/content/validation.ts), as a create's. */
  writeContext: Omit<WriteContext, 'mode' | 'stored'>
  progress?: (done: number, total: number) => void
  /** Types and fields of the export mapped onto the service's (core/exchange/mapping.ts). */
  mapping?: ImportMapping
  /** Called after each committed batch: a test's way to stop an import between two. */
  afterBatch?: (written: number) => void
  /** Objects a transaction writes at most (BATCH_OBJECTS unless said: a test's small batches). */
  batchObjects?: number
  /** Batches under way at once, each being read and checked or written (DEFAULT_WRITERS unless said). */
  writers?: number
}

class BlobChanged extends Error {}

/**
 * Writes the objects of an export (core/exchange/reader.ts), parents first,
 * in batches of up to BATCH_OBJECTS objects (the children of several small
 * folders share one): each batch in one transaction with its rows,
 * histories, images, files (streamed from disk into large objects),
 * catalogue rows and index operations (the outbox, as every write), so that
 * an interrupted import leaves whole objects only, and a second run takes up
 * where it stopped. An object whose UID the site has is updated where it is
 * (never duplicated). What cannot be written is counted in the report, with
 * everything below it.
 *
 * Up to `writers` batches are under way at once, each read and checked, then
 * written in a transaction of its own once those it depends on are
 * (`batchDependencies`).
 */
export async function importContent (read: ReadExport, content: ContentStore, options: ImportOptions): Promise<void> {
  const { report } = read
  const left = new Set<string>()
  let done = 0
  const all = [...batches(read.objects, options.batchObjects ?? BATCH_OBJECTS)]
  const waitsFor = batchDependencies(all)
  const written: Array<Promise<void>> = []
  // A failure other than a refusal (PostgreSQL gone, a test's stop): no batch is begun or written after it, and it is thrown once those under way have ended.
  const failures: unknown[] = []
  const writeOne = async (k: number): Promise<void> => {
    const batch = all[k]
    try {
      const checked = await checkedBatch(batch, options, read, left)
      await Promise.allSettled(waitsFor[k].map(j => written[j]))
      if (failures.length > 0) return
      try {
        report.count('objects imported', await writeObjects(batch, checked, content, options, read, left))
      } catch (err) {
        if (!(err instanceof ApiError) && !(err instanceof BlobChanged)) throw err
        for (const object of batch) left.add(object.uid)
        report.problem('batch not written', batch[0].source, `${batch.length} object(s) from here on: ${err.message}`)
      }
      done += batch.length
      options.progress?.(done, read.objects.length)
      options.afterBatch?.(done)
    } catch (err) {
      failures.push(err)
    }
  }
  // While batches wait for PostgreSQL another is read and checked: the command's work and PostgreSQL's overlap.
  const running = new Set<Promise<void>>()
  for (let k = 0; k < all.length && failures.length === 0; k++) {
    const task = writeOne(k).finally(() => running.delete(task))
    written[k] = task
    running.add(task)
    while (running.size >= (options.writers ?? DEFAULT_WRITERS)) await Promise.race(running)
  }
  await Promise.all(running)
  if (failures.length > 0) throw failures[0]
}

/**
 * Which earlier batches each batch waits for before it is written: those
 * holding its objects' folders (they must be there), and the one before it
 * when both hold children of one folder (positions are taken in the
 * export's order). The reader gives a folder's children one after another,
 * after the folder.
 */
function batchDependencies (all: ExportedObject[][]): number[][] {
  const batchOf = new Map<string, number>()
  return all.map((batch, k) => {
    const waits = new Set<number>()
    for (const object of batch) {
      const holder = object.parentUid === null ? undefined : batchOf.get(object.parentUid)
      if (holder !== undefined) waits.add(holder)
    }
    if (k > 0 && all[k - 1].at(-1)!.parentUid === batch[0].parentUid) waits.add(k - 1)
    for (const object of batch) batchOf.set(object.uid, k)
    return [...waits]
  })
}

/**
 * The objects (parents first, siblings together, as the reader gives them)
 * in batches of at most `most` objects and BATCH_IMAGE_BYTES of images, a
 * folder's children in one batch where they fit: batches that share no
 * folder are written side by side (`batchDependencies`).
 */
function * batches (objects: ExportedObject[], most: number): Generator<ExportedObject[]> {
  let batch: ExportedObject[] = []
  let imageBytes = 0
  const fits = (count: number, bytes: number): boolean => batch.length + count <= most && imageBytes + bytes <= BATCH_IMAGE_BYTES
  for (const group of siblingGroups(objects, object => object)) {
    const sizes = group.map(imageBytesOf)
    if (batch.length > 0 && !fits(group.length, sizes.reduce((sum, bytes) => sum + bytes, 0))) { yield batch; batch = []; imageBytes = 0 }
    // A folder with more children than a batch holds: its batches follow each other.
    for (const [i, object] of group.entries()) {
      if (batch.length > 0 && !fits(1, sizes[i])) { yield batch; batch = []; imageBytes = 0 }
      batch.push(object)
      imageBytes += sizes[i]
    }
  }
  if (batch.length > 0) yield batch
}

const imageBytesOf = (object: ExportedObject): number => object.blobs.filter(b => b.kind === 'image').reduce((sum, b) => sum + b.size, 0)

/** Items in runs of one parent's children. */
function * siblingGroups<T> (items: T[], objectOf: (item: T) => ExportedObject): Generator<T[]> {
  let group: T[] = []
  for (const item of items) {
    if (group.length > 0 && objectOf(group[0]).parentUid !== objectOf(item).parentUid) { yield group; group = [] }
    group.push(item)
  }
  if (group.length > 0) yield group
}

/** An object with its content, read again to be written. */
type Loaded = ExportedObject & ExportedContent
type Checked = Array<{ object: Loaded, write: CheckedWrite }>

/**
 * A batch's objects read again and checked as a create of their type
 * (core/content/validation.ts): one that fails, or whose data.json changed,
 * is left out and reported; what is inside an object left out is not read.
 */
async function checkedBatch (batch: ExportedObject[], options: ImportOptions, read: ReadExport, left: Set<string>): Promise<Checked> {
  const checked: Checked = []
  const pacer = new Pacer()
  for (const object of batch) {
    await pacer.pace()
    if (object.parentUid !== null && left.has(object.parentUid)) continue
    const content = object.load()
    if (content === null) {
      left.add(object.uid)
      read.report.problem('changed while imported', object.source, 'Its data.json is gone or holds another object than when the import began.')
      continue
    }
    const loaded = { ...object, ...content }
    try {
      checked.push({ object: loaded, write: await checkedWrite(loaded, options.writeContext) })
    } catch (err) {
      if (!(err instanceof ApiError)) throw err
      left.add(object.uid)
      read.report.problem('invalid object', object.source, refusal(err))
    }
  }
  return checked
}

/**
 * One batch in one transaction, a folder's children after another's (a
 * folder written earlier in it is found there): the new objects through the
 * bulk import's write, those the site has updated in place; what its
 * parent's absence leaves out is reported. Answers how many were written.
 */
async function writeObjects (batch: ExportedObject[], checked: Checked, content: ContentStore, options: ImportOptions, read: ReadExport, left: Set<string>): Promise<number> {
  await content.write(async write => {
    for (const group of siblingGroups(checked, ({ object }) => object)) {
      const parentUid = group[0].object.parentUid
      if (parentUid !== null && left.has(parentUid)) continue
      const parent = parentUid === null ? (await content.locate('/', write.tx)).found! : (await content.locateMany([parentUid], write.tx)).get(parentUid)!
      await writeGroup(write, parent, group, content, options, read, left)
    }
  })
  for (const object of batch) {
    if (object.parentUid === null || !left.has(object.parentUid) || left.has(object.uid)) continue
    left.add(object.uid)
    read.report.problem('parent not imported', object.source, 'Its parent could not be written.')
  }
  return batch.filter(object => !left.has(object.uid)).length
}

/** A folder's children of a batch, in its transaction. An id the folder holds under another UID: that object is left out, not the batch (the site's own stays). */
async function writeGroup ({ tx, reindexMany }: Write, parent: Located, checked: Checked, content: ContentStore, options: ImportOptions, read: ReadExport, left: Set<string>): Promise<void> {
  const { rows } = await tx.query<{ uid: string, parent_uid: string | null }>('SELECT uid, parent_uid FROM content WHERE uid = ANY($1::uuid[])', [checked.map(c => c.object.uid)])
  const existing = new Map(rows.map(r => [r.uid, r.parent_uid]))
  const ids = checked.filter(({ object }) => !existing.has(object.uid)).map(({ object }) => object.id)
  const { rows: taken } = await tx.query<{ id: string }>('SELECT id FROM content WHERE parent_uid = $1 AND id = ANY($2::text[])', [parent.obj.uid, ids])
  const takenIds = new Set(taken.map(r => r.id))
  for (const { object } of checked) {
    if (existing.has(object.uid) || !takenIds.has(object.id)) continue
    left.add(object.uid)
    read.report.problem('id taken in the site', object.source, `The site has another object at '${object.id}' in this folder.`)
  }
  const fresh = checked.filter(({ object }) => !existing.has(object.uid) && !takenIds.has(object.id))
  const known = checked.filter(({ object }) => existing.has(object.uid))
  const made = fresh.map(({ object, write }) => newOne(parent, object, write))
  if (made.length > 0) await writeBatch(tx, reindexMany, parent, made)
  const located = await content.locateMany(known.map(({ object }) => object.uid), tx)
  const updated: Located[] = []
  for (const { object, write } of known) {
    if (existing.get(object.uid) !== parent.obj.uid) read.report.problem('not moved', object.source, 'The site has this UID in another folder: it is updated there.')
    updated.push(await updateOne(tx, located.get(object.uid)!, object, write))
  }
  // An object keeps its UID (a taken id is a 409, never a rename): its files go under it.
  for (const { object } of [...fresh, ...known]) for (const blob of object.blobs) if (blob.kind === 'file') await streamFile(tx, object.uid, blob)
  if (updated.length > 0) await reindexMany(updated)
  const written = new Map([...made.map(m => m.located), ...updated].map(({ obj }) => [obj.uid, obj.data]))
  await keepVersions(tx, [...fresh, ...known].map(({ object }) => ({ ...object, data: written.get(object.uid)! })), content.versionsKept, options.writeContext, read.report)
}

/** The object's fields as a create's body, its image read (bounded by the reader), its file named but streamed later. */
async function checkedWrite (object: Loaded, ctx: ImportOptions['writeContext']): Promise<CheckedWrite> {
  const body: Record<string, unknown> = { ...object.fields, id: object.id }
  for (const blob of object.blobs) {
    const data = blob.kind === 'image' ? (await readWhole(blob)).toString('base64') : ''
    body[blob.field] = { data, encoding: 'base64', filename: blob.filename, 'content-type': blob.contentType }
  }
  const write = await checkWrite(object.type, body, { ...ctx, mode: 'create', stored: {} })
  for (const blob of object.blobs) {
    if (blob.kind !== 'file') continue
    // The file's bytes go from disk to its large object in the write (streamFile), never whole in memory.
    write.binaries.delete(blob.field)
    write.values[blob.field] = { ...(write.values[blob.field] as object), size: blob.size }
  }
  return write
}

async function readWhole (blob: ExportedBlob): Promise<Buffer> {
  const handle = await open(blob.path, 'r')
  try {
    const buffer = Buffer.alloc(blob.size)
    const { bytesRead } = await handle.read(buffer, 0, blob.size, 0)
    if (bytesRead !== blob.size) throw new BlobChanged(`${blob.path} changed while the import ran.`)
    return buffer
  } finally {
    await handle.close()
  }
}

/** A new object as the export has it: its UID, owner, creators, dates, state, history and local roles. */
function newOne (parent: Located, object: Loaded, write: CheckedWrite): NewObject {
  const who = { userId: object.owner, fullname: null, roles: [] }
  const located = withChanges(newObject(parent, object.type, write, who, object.created), {
    uid: object.uid, creators: object.creators, modified: object.modified, review_state: object.reviewState, local_roles: object.localRoles, local_roles_block: object.blockRoles
  })
  return { located, write, history: historyOf(object) }
}

/** The exported history, or (none exported) the creation in the object's state, as Plone would have recorded it. */
function historyOf (object: Loaded): HistoryEntry[] {
  if (object.type.workflow === null) return []
  if (object.history.length > 0) return object.history
  return [{ action: null, actor: object.owner, comments: '', review_state: object.reviewState!, time: object.created }]
}

/** An object the site has: its row, history and images as the export has them now. */
async function updateOne (tx: Queryable, current: Located, object: Loaded, write: CheckedWrite): Promise<Located> {
  const data = storedData(write)
  const next = withChanges(current, { data, review_state: object.reviewState, owner: object.owner, creators: object.creators, local_roles: object.localRoles, local_roles_block: object.blockRoles, created: object.created, modified: object.modified })
  await tx.query('UPDATE content SET data = $2, review_state = $3, owner = $4, creators = $5, local_roles = $6, local_roles_block = $9, created = $7, modified = $8 WHERE uid = $1',
    [object.uid, JSON.stringify(data), object.reviewState, object.owner, object.creators, JSON.stringify(object.localRoles), object.created, object.modified, object.blockRoles])
  await tx.query('DELETE FROM workflow_history WHERE uid = $1', [object.uid])
  for (const [seq, h] of historyOf(object).entries()) {
    await tx.query('INSERT INTO workflow_history (uid, seq, action, actor, comments, review_state, time) VALUES ($1, $2, $3, $4, $5, $6, $7)', [object.uid, seq, h.action, h.actor, h.comments, h.review_state, h.time])
  }
  for (const [field, binary] of write.binaries) {
    if ('bytes' in binary) await tx.query(keepBinary(binary.store, '(SELECT $1::uuid AS uid) AS written', '$2::text', '$3::bytea'), [object.uid, field, binary.bytes])
  }
  return next
}

/** A file from disk into a new large object, a slice a statement, then the object's file (the one it replaces is unlinked by its trigger). */
async function streamFile (tx: Queryable, uid: string, blob: ExportedBlob): Promise<void> {
  const { rows: [{ oid }] } = await tx.query<{ oid: number }>('SELECT lo_create(0) AS oid')
  let at = 0
  for await (const chunk of createReadStream(blob.path, { highWaterMark: FILE_SLICE_BYTES }) as AsyncIterable<Buffer>) {
    if (at + chunk.length > blob.size) break
    await tx.query('SELECT lo_put($1, $2, $3)', [oid, at, chunk])
    at += chunk.length
  }
  if (at !== blob.size) throw new BlobChanged(`${blob.path} is no longer ${blob.size} bytes long.`)
  await tx.query(`INSERT INTO files (uid, field, oid, size) VALUES ($1, $2, $3, $4)
    ON CONFLICT (uid, field) DO UPDATE SET oid = EXCLUDED.oid, size = EXCLUDED.size`, [uid, blob.field, oid, blob.size])
}
