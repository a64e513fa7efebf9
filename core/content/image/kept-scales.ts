import type { Queryable } from '../../db/db.js'
import type { CacheFigures } from '../../kept.js'
import { OneAtATime } from '../../one-at-a-time.js'
import { imageVersion, makeScale, type ImageMeta } from './scales.js'

/** The read of a kept scale, the statement of every request for one: kept prepared. */
const KEPT_READ = { prepared: true }

/**
 * Scales of images, made on first request and kept in `image_scales`
 * (infra/migrations/016_image_scales.sql) for every process. A crowd asking
 * for the same new scale at once makes it once in this process: the others
 * wait for it and read it kept.
 */
export class KeptScales {
  private readonly making = new OneAtATime()
  /** Scales found kept (hits) and made (misses) by this process's requests, for the metrics; the entries are a table every process shares. */
  private readonly counts = { hits: 0, misses: 0 }

  constructor (private readonly db: Queryable) {}

  /** Its look-ups, for the metrics. */
  figures (): CacheFigures { return { ...this.counts } }

  /** The bytes of a scale of an image field at this version; null when the object has no such image at this version (deleted or changed meanwhile). */
  async scale (uid: string, field: string, scale: string, version: string, meta: ImageMeta): Promise<Buffer | null> {
    return await this.making.run(`${uid}/${field}/${scale}`, async () => {
      const { rows: [kept] } = await this.db.query<{ bytes: Uint8Array }>(
        'SELECT bytes FROM image_scales WHERE uid = $1 AND field = $2 AND scale = $3 AND version = $4', [uid, field, scale, version], KEPT_READ)
      // pg's bytea is a Buffer already (the embedded database's a Uint8Array): not copied again.
      if (kept !== undefined) {
        this.counts.hits++
        return Buffer.isBuffer(kept.bytes) ? kept.bytes : Buffer.from(kept.bytes)
      }
      this.counts.misses++
      // The original as it is now: if it is not this version's (changed since the request read the object), no scale of it is this version's.
      const { rows: [original] } = await this.db.query<{ bytes: Uint8Array, modified: Date, meta: ImageMeta | null }>(
        'SELECT b.bytes, c.modified, c.data -> $2 AS meta FROM blobs b JOIN content c USING (uid) WHERE b.uid = $1 AND b.field = $2', [uid, field])
      if (original?.meta == null || imageVersion(uid, original.meta, original.modified) !== version) return null
      const bytes = await makeScale(Buffer.from(original.bytes), meta, scale)
      // Another process may have made it meanwhile, or an older version be kept: the row ends as this version's.
      await this.db.query(`INSERT INTO image_scales (uid, field, scale, version, content_type, bytes)
        SELECT uid, $2, $3, $4, $5, $6 FROM content WHERE uid = $1
        ON CONFLICT (uid, field, scale) DO UPDATE SET version = EXCLUDED.version, content_type = EXCLUDED.content_type, bytes = EXCLUDED.bytes
        WHERE image_scales.version <> EXCLUDED.version`, [uid, field, scale, version, meta['content-type'], bytes])
      return bytes
    })
  }
}
