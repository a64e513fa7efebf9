import { randomUUID } from 'node:crypto'
import type { Queryable } from '../db/db.js'

/**
 * Resumable uploads (the TUS protocol, as plone.restapi's `@tus-upload` and
 * `@tus-replace`): an upload is opened with its length, its bytes arrive in
 * any number of PATCHes, each appended at the offset the client says it has
 * reached, and the upload ends into a content object (created, or changed by
 * `replace`) in that object's own write statement (core/content/store.ts).
 *
 * Its bytes go straight into a PostgreSQL large object, a slice a statement,
 * each statement checking and advancing the offset: what a dropped
 * connection delivered is kept (the client asks where to go on with HEAD),
 * two PATCHes of one upload never interleave (the second finds the offset
 * moved: 409), and the service never holds more than a slice of a file.
 * infra/migrations/018_uploads.sql keeps no large object without an upload or a file.
 */

export type UploadMode = 'create' | 'replace'

/** What the client said of the upload when it opened it (`Upload-Metadata`): names lower-cased, values decoded. */
export type UploadMetadata = Record<string, string>

export interface Upload {
  id: string
  /** The object the upload was opened on: the folder it creates in, or the object it replaces a file of. */
  context: string
  mode: UploadMode
  owner: string
  length: number
  received: number
  metadata: UploadMetadata
  expires: Date
}

interface UploadRow { id: string, context: string, mode: UploadMode, owner: string, length: string, received: string, metadata: UploadMetadata, expires: Date }

const uploadOf = (row: UploadRow): Upload => ({ ...row, length: Number(row.length), received: Number(row.received) })

/** Bytes a statement appends at most: what the service holds of an upload at a time. */
export const UPLOAD_SLICE_BYTES = 1024 * 1024

export class Uploads {
  constructor (private readonly db: Queryable, private readonly lifetimeSeconds: number) {}

  /**
   * Opens an upload, after ending those whose time is up (as plone.restapi
   * does when one is opened: no sweeper to run). Answers null when `owner`
   * already has `maxOpen` uploads under way.
   */
  async open (upload: Pick<Upload, 'context' | 'mode' | 'owner' | 'length' | 'metadata'>, maxOpen: number): Promise<Upload | null> {
    await this.db.query('DELETE FROM uploads WHERE expires < now()')
    const { rows: [row] } = await this.db.query<UploadRow>(`INSERT INTO uploads (id, context, mode, owner, length, metadata, oid, expires)
      SELECT $1, $2, $3, $4, $5, $6, lo_create(0), now() + make_interval(secs => $7)
      WHERE (SELECT count(*) FROM uploads WHERE owner = $4) < $8
      RETURNING id, context, mode, owner, length, received, metadata, expires`,
    [randomUUID(), upload.context, upload.mode, upload.owner, upload.length, JSON.stringify(upload.metadata), this.lifetimeSeconds, maxOpen])
    return row === undefined ? null : uploadOf(row)
  }

  /** The upload, while it has not ended or expired. */
  async get (id: string): Promise<Upload | null> {
    const { rows: [row] } = await this.db.query<UploadRow>(`SELECT id, context, mode, owner, length, received, metadata, expires
      FROM uploads WHERE id = $1 AND expires >= now()`, [id])
    return row === undefined ? null : uploadOf(row)
  }

  /**
   * Appends `bytes` at `offset`, in one statement, when the upload has
   * received exactly `offset` bytes and they fit its length; its time starts
   * again. Answers the offset reached, or null when the upload was elsewhere
   * (another PATCH moved it, or it ended or expired).
   */
  async append (id: string, offset: number, bytes: Buffer): Promise<number | null> {
    const { rows: [row] } = await this.db.query<{ received: string }>(`WITH appended AS (
        UPDATE uploads SET received = received + $3, expires = now() + make_interval(secs => $5)
        WHERE id = $1 AND received = $2 AND received + $3 <= length AND expires >= now()
        RETURNING oid, received)
      SELECT received, lo_put(oid, $2, $4) FROM appended`, [id, offset, bytes.length, bytes, this.lifetimeSeconds])
    return row === undefined ? null : Number(row.received)
  }

  /**
   * Claims a finished upload for the request that ends it: one request at a
   * time (a claim lapses after a minute, so that a process that died ending
   * it does not lose the upload). False when it is not finished or is claimed.
   */
  async claim (id: string): Promise<boolean> {
    const { rowCount } = await this.db.query(`UPDATE uploads SET claimed = now()
      WHERE id = $1 AND received = length AND (claimed IS NULL OR claimed < now() - interval '1 minute')`, [id])
    return rowCount === 1
  }

  /** Gives up a claim whose write was refused: the client may end the upload again. */
  async unclaim (id: string): Promise<void> {
    await this.db.query('UPDATE uploads SET claimed = NULL WHERE id = $1', [id])
  }

  /** The whole of a finished upload (an image, bounded by IMAGE_MAX_BYTES before it was opened). */
  async bytes (id: string): Promise<Buffer> {
    const { rows: [row] } = await this.db.query<{ bytes: Uint8Array }>('SELECT lo_get(oid) AS bytes FROM uploads WHERE id = $1', [id])
    return Buffer.from(row.bytes)
  }

  /** Ends an upload without a file: its bytes go (the TUS termination a client may ask). */
  async remove (id: string): Promise<void> {
    await this.db.query('DELETE FROM uploads WHERE id = $1', [id])
  }
}

/**
 * The statement part that ends an upload in a write (a CTE): its row goes,
 * answering its large object and length, when the write's `source` (its
 * `changed`) changed something: a write retried after a concurrent one keeps
 * its upload for the retry.
 */
export const endUpload = (id: string, source: string): string =>
  `DELETE FROM uploads WHERE id = ${id} AND EXISTS (SELECT FROM ${source}) RETURNING oid, length`
