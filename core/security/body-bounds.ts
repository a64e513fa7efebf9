import type { Config } from '../config/config.js'

/**
 * What a route's body is, for the bounds it gets (docs/api.md, "Bounded work
 * per request"): `content` (POST and PATCH of an object, which may carry an
 * image or a file), `import` (`@import`, many objects), `bytes` (an upload's
 * PATCH: bytes streamed into the upload as they arrive, never JSON, bounded by
 * the upload's declared length: plugins/routes/tus.ts), `small` (everything
 * else: logins, users, workflow, locks, settings, queries).
 */
export type BodyKind = 'small' | 'content' | 'import' | 'bytes'

export interface BodyBounds {
  /** The largest body (bytes): 413 beyond, before it is read further. */
  bytes: number
  /** The most JSON values it may hold: 413 beyond, before it is parsed (core/security/json-body.ts). */
  values: number
}

/** No body but an object's or an import's comes near this: a query of `@querystring-search`, the Solr settings, a user. */
const SMALL_BYTES = 64 * 1024
/**
 * An object's fields besides its image, as JSON: every text at its limit
 * with every character escaped (`\uXXXX`), the rich texts at their markup
 * limit (core/content/richtext.ts), fit with room to spare.
 */
const FIELDS_BYTES = 1024 * 1024
/**
 * The values of a small body or an object's: a talk has about 20, 150 with
 * every tag; a folder read and sent back (its items, `b_size` 500) some thousands.
 */
const VALUES = 10_000
/** An imported item's values, on average over the import. */
const VALUES_PER_ITEM = 200

/** The base64 text of an image of `bytes` bytes. */
const base64Length = (bytes: number): number => Math.ceil(bytes / 3) * 4

/** The bounds of a body of this kind under this configuration; none exceeds BODY_LIMIT. */
export function bodyBounds (kind: BodyKind, config: Pick<Config, 'BODY_LIMIT' | 'IMAGE_MAX_BYTES' | 'FILE_MAX_BYTES' | 'IMPORT_MAX_ITEMS' | 'UPLOAD_MAX_BYTES'>): BodyBounds {
  const within = (bytes: number): number => Math.min(bytes, config.BODY_LIMIT)
  switch (kind) {
    case 'small': return { bytes: within(SMALL_BYTES), values: VALUES }
    case 'content': return { bytes: within(base64Length(Math.max(config.IMAGE_MAX_BYTES, config.FILE_MAX_BYTES)) + FIELDS_BYTES), values: VALUES }
    case 'import': return { bytes: config.BODY_LIMIT, values: config.IMPORT_MAX_ITEMS * VALUES_PER_ITEM }
    // No JSON value is read from it: JSON sent to it is 415 before a byte is read.
    case 'bytes': return { bytes: config.UPLOAD_MAX_BYTES, values: 0 }
  }
}
