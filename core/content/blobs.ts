import { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { BinaryCopyField } from '../db/copy-binary.js'
import type { Db, Queryable } from '../db/db.js'

/**
 * Where a binary field's bytes are kept, apart from the object's `data` so
 * that reading an object does not load them: images in `blobs` (bytea: a
 * scale is made from the whole image), files in large objects (`files`,
 * infra/migrations/017_files.sql: read in slices, never held whole).
 */
export type BinaryStore = 'blobs' | 'files'

/** The statement that keeps a binary field's bytes for each uid `source` holds (a write's CTE), replacing what it held. */
export function keepBinary (store: BinaryStore, source: string, field: string, bytes: string): string {
  return store === 'blobs'
    ? `INSERT INTO blobs (uid, field, bytes) SELECT uid, ${field}, ${bytes} FROM ${source} ON CONFLICT (uid, field) DO UPDATE SET bytes = EXCLUDED.bytes`
    // lo_from_bytea makes the large object in the same statement; the row's trigger unlinks the one it replaces.
    : `INSERT INTO files (uid, field, oid, size) SELECT uid, ${field}, lo_from_bytea(0, ${bytes}), length(${bytes}) FROM ${source}
      ON CONFLICT (uid, field) DO UPDATE SET oid = EXCLUDED.oid, size = EXCLUDED.size`
}

/**
 * The statement that makes the large object of an ended upload (`upload`, a
 * CTE of core/content/uploads.ts's `endUpload`) the file of each uid `source`
 * holds: handed over, not copied.
 */
export const keepUploadedFile = (source: string, field: string, upload: string): string =>
  `INSERT INTO files (uid, field, oid, size) SELECT uid, ${field}, ${upload}.oid, ${upload}.length FROM ${source}, ${upload}
    ON CONFLICT (uid, field) DO UPDATE SET oid = EXCLUDED.oid, size = EXCLUDED.size`

/** The statement that drops what a store keeps of these fields of each uid `source` holds (fields set to null). */
export const dropBinaries = (store: BinaryStore, source: string, fields: string): string =>
  `DELETE FROM ${store} WHERE uid IN (SELECT uid FROM ${source}) AND field = ANY(${fields}::text[])`

/** Image bytes, whole. */
export async function readImage (q: Queryable, uid: string, field: string): Promise<Buffer | null> {
  const { rows } = await q.query<{ bytes: Uint8Array }>('SELECT bytes FROM blobs WHERE uid = $1 AND field = $2', [uid, field])
  return rows[0] === undefined ? null : Buffer.from(rows[0].bytes)
}

/** A file's large object and its size in bytes, or null. */
export async function fileOf (q: Queryable, uid: string, field: string): Promise<{ oid: number, size: number } | null> {
  const { rows: [row] } = await q.query<{ oid: number, size: string }>('SELECT oid, size FROM files WHERE uid = $1 AND field = $2', [uid, field])
  return row === undefined ? null : { oid: Number(row.oid), size: Number(row.size) }
}

/** Bytes of a file read a statement when no COPY streams them (the embedded database). */
const FILE_SLICE_BYTES = 256 * 1024

/**
 * The bytes of a file from `start` (inclusive) to `end` (exclusive), at the
 * pace of the reader. On PostgreSQL one `COPY … TO STDOUT (FORMAT binary)`
 * sends its slices, read server-side with lo_get, as raw bytes: no statement
 * a slice, and no string of hex digits twice a slice's length for the
 * collector (as a SELECT of a bytea would give), which grew the process by
 * 50–112 MB over a 500 MB download (docs/performance-history.md, "The 500 MB file").
 * The embedded database reads a slice a statement, as does a download that
 * finds the connections COPY may hold all streaming (Db.copyOut).
 */
export function fileStream (db: Db, oid: number, start: number, end: number): Readable {
  // Numbers the service read from its own table, written into the text: COPY takes no parameters.
  const [o, s, e] = [oid, start, end].map(n => { if (!Number.isSafeInteger(n) || n < 0) throw new Error(`Not a file position: ${n}`); return n })
  const slices = `SELECT lo_get(${o}, at, least(${FILE_SLICE_BYTES}, ${e} - at)::int) FROM generate_series(${s}::bigint, ${e - 1}::bigint, ${FILE_SLICE_BYTES}) AS at`
  // Without COPY, or with the connections it may hold all streaming, a slice a statement (no connection held between two).
  const copy = db.copyOut?.(`COPY (${slices}) TO STDOUT (FORMAT binary)`) ?? null
  if (copy === null) return Readable.from(fileSlices(db, oid, start, end))
  const fields = new BinaryCopyField()
  // Either end's failure or close ends the other (pipeline): a reader that goes away ends the COPY.
  pipeline(copy, fields).catch(() => {})
  return fields
}

async function * fileSlices (q: Queryable, oid: number, start: number, end: number): AsyncGenerator<Buffer> {
  for (let at = start; at < end; at += FILE_SLICE_BYTES) {
    const { rows: [{ bytes }] } = await q.query<{ bytes: Uint8Array }>('SELECT lo_get($1, $2, $3) AS bytes', [oid, at, Math.min(FILE_SLICE_BYTES, end - at)])
    yield Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  }
}

/**
 * A content type as a header gives it (`type/subtype`, parameters dropped),
 * or `application/octet-stream` when what was declared is not one: the
 * declared type goes into `Content-Type` headers, where nothing else may.
 */
export function mediaType (declared: unknown): string {
  const type = typeof declared === 'string' ? declared.split(';')[0].trim().toLowerCase() : ''
  return /^[a-z0-9][a-z0-9!#$&^_.+-]{0,126}\/[a-z0-9][a-z0-9!#$&^_.+-]{0,126}$/.test(type) ? type : 'application/octet-stream'
}
