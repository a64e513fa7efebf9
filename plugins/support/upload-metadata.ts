import { BadRequest } from '../../core/errors.js'
import type { UploadMetadata } from '../../core/content/uploads.js'

/** The keys of `Upload-Metadata` plone.restapi reads; others are dropped (a client's own, never stored). */
const KNOWN = new Set(['filename', 'content-type', '@type', 'fieldname'])
/** A value's characters at most: what a file name or a content type may hold (the File field's bounds). */
const MAX_VALUE = 255
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/
const utf8 = new TextDecoder('utf-8', { fatal: true })

/**
 * `Upload-Metadata` as the TUS protocol writes it: comma-separated pairs of a
 * key and its value in base64, separated by a space (a key alone has the
 * empty value). Keys are compared lower-cased, as plone.restapi does; a key
 * twice, a value that is not base64 of UTF-8 text, or text holding a control
 * character (NUL, a line break: it would reach a file name and a header) is a 400.
 */
export function uploadMetadata (header: string | undefined): UploadMetadata {
  const metadata: UploadMetadata = {}
  const seen = new Set<string>()
  for (const pair of (header ?? '').split(',')) {
    if (pair.trim() === '') continue
    const [rawKey, encoded = '', ...rest] = pair.trim().split(/ +/)
    const key = rawKey.toLowerCase()
    if (rest.length > 0 || !BASE64.test(encoded)) throw BadRequest('Upload-Metadata must be comma-separated pairs of a key and its value in base64.')
    if (seen.has(key)) throw BadRequest(`Upload-Metadata names '${key.slice(0, 40)}' twice.`)
    seen.add(key)
    if (!KNOWN.has(key)) continue
    let value: string
    try {
      value = utf8.decode(Buffer.from(encoded, 'base64'))
    } catch {
      throw BadRequest(`The Upload-Metadata value of '${key}' is not UTF-8 text.`)
    }
    // eslint-disable-next-line no-control-regex
    if (value.length > MAX_VALUE || /[\u0000-\u001f\u007f]/.test(value)) throw BadRequest(`The Upload-Metadata value of '${key}' must be at most ${MAX_VALUE} characters, with no control character.`)
    metadata[key] = value
  }
  return metadata
}
