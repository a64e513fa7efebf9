import { RangeNotSatisfiable } from '../../core/errors.js'

/** A run of bytes of a file, both ends included (as `Content-Range` writes them). */
export interface ByteRange { start: number, end: number }

/**
 * The bytes a `Range` header asks of a file of `size` bytes (RFC 9110,
 * 14.1.2): `bytes=a-b`, `bytes=a-`, `bytes=-n` (the last n). Null for the
 * whole file: no header, one this service does not read (another unit,
 * several ranges, a malformed one: a server may answer those whole). A range
 * no byte of the file lies in is 416.
 */
export function byteRange (header: string | undefined, size: number): ByteRange | null {
  const match = header === undefined ? null : /^bytes=(\d{0,16})-(\d{0,16})$/.exec(header.trim())
  if (match === null || (match[1] === '' && match[2] === '')) return null
  if (match[1] === '') {
    const last = Number(match[2])
    if (last === 0 || size === 0) throw RangeNotSatisfiable(size)
    return { start: Math.max(0, size - last), end: size - 1 }
  }
  const start = Number(match[1])
  const end = match[2] === '' ? size - 1 : Number(match[2])
  if (end < start) return null
  if (start >= size) throw RangeNotSatisfiable(size)
  return { start, end: Math.min(end, size - 1) }
}
