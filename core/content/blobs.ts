import type { Queryable } from '../db/db.js'

/** Image bytes, kept in `blobs` apart from the object's `data` so that reading an object does not load them. */
export async function readImage (q: Queryable, uid: string, field: string): Promise<Buffer | null> {
  const { rows } = await q.query<{ bytes: Uint8Array }>('SELECT bytes FROM blobs WHERE uid = $1 AND field = $2', [uid, field])
  return rows[0] === undefined ? null : Buffer.from(rows[0].bytes)
}
