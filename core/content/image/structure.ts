import { Pacer } from '../../pacing.js'
import { checkGif } from './gif.js'
import { checkJpeg } from './jpeg.js'
import { PNG_SIGNATURE, checkPng } from './png.js'
import { NotAnImage } from './refusal.js'
import { checkWebp } from './webp.js'

export { MAX_PIXELS, NotAnImage } from './refusal.js'

export interface ImageStructure { contentType: string, width: number, height: number }

interface Format {
  contentType: string
  /** The format's signature: only the first bytes, which tell the format, not that the image is whole. */
  matches: (bytes: Buffer) => boolean
  /** Walks the whole file, yielding between slices (core/pacing.ts); refuses it (NotAnImage) unless whole, and returns its size. */
  check: (bytes: Buffer, pacer: Pacer) => Promise<{ width: number, height: number }>
}

const startsWith = (bytes: Buffer, prefix: string | Buffer, at = 0): boolean =>
  bytes.subarray(at, at + prefix.length).equals(typeof prefix === 'string' ? Buffer.from(prefix, 'latin1') : prefix)

/**
 * The formats every browser displays, and so Volto, which shows the original
 * and its scales (made in the original's format): PNG, JPEG, GIF, WebP. Others are
 * refused rather than walked: TIFF and HEIF show in Safari only; BMP and ICO
 * are no web image formats for a talk (uncompressed pixels, a favicon) and
 * each has several variants to walk; AVIF's container (ISO BMFF items,
 * properties and their locations) is a format of its own to check whole,
 * and Pillow, which Plone scales images with, reads it only since 2025.
 * SVG can carry scripts.
 */
const FORMATS: Format[] = [
  { contentType: 'image/png', matches: bytes => startsWith(bytes, PNG_SIGNATURE), check: checkPng },
  { contentType: 'image/jpeg', matches: bytes => startsWith(bytes, Buffer.from([0xff, 0xd8, 0xff])), check: checkJpeg },
  { contentType: 'image/gif', matches: bytes => startsWith(bytes, 'GIF8'), check: checkGif },
  { contentType: 'image/webp', matches: bytes => startsWith(bytes, 'RIFF') && startsWith(bytes, 'WEBP', 8), check: checkWebp }
]

/**
 * Checks that bytes are a whole image of an accepted format, walking its
 * structure to its end without decoding its pixels (except PNG's, inflated
 * and counted), and returns its content type and size. Throws NotAnImage,
 * whose message says what is wrong. The walk is linear in the bytes and
 * lets other requests run between slices: a file of a million tiny chunks
 * or segments costs its walk, not a hold of the process.
 */
export async function checkImageStructure (bytes: Buffer, pacer = new Pacer()): Promise<ImageStructure> {
  const format = FORMATS.find(f => f.matches(bytes))
  if (format === undefined) throw new NotAnImage('The data is not a PNG, JPEG, GIF or WebP image.')
  const { width, height } = await format.check(bytes, pacer)
  return { contentType: format.contentType, width, height }
}
