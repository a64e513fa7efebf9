import { createHash } from 'node:crypto'
import sharp from 'sharp'
import { MAX_PIXELS } from './refusal.js'

/**
 * Plone 6's image scales (plone.namedfile, `allowed_sizes` of a new site):
 * each fits its box, keeping the proportions, and is never larger than the
 * original. Boxes 65536 high bound the width alone.
 */
export const SCALES: ReadonlyArray<readonly [name: string, width: number, height: number]> = [
  ['huge', 1600, 65536], ['great', 1200, 65536], ['larger', 1000, 65536], ['large', 800, 65536], ['teaser', 600, 65536],
  ['preview', 400, 65536], ['mini', 200, 65536], ['thumb', 128, 128], ['tile', 64, 64], ['icon', 32, 32], ['listing', 16, 16]
]

/**
 * What an image field stores of its upload (core/content/validation.ts).
 * `digest` names the bytes (kept since images have had it; older ones have
 * none) and is not served: it is what the names of the scales follow.
 */
export interface ImageMeta { filename: string | null, 'content-type': string, size: number, width: number, height: number, digest?: string }

/** What names an image's bytes in its `digest`. */
export const imageDigest = (bytes: Buffer): string => createHash('sha256').update(bytes).digest('hex').slice(0, 32)

/** The accepted formats (core/content/image/structure.ts): each scale is in its original's, named by it. */
const FORMATS: Record<string, 'png' | 'jpeg' | 'gif' | 'webp'> = { 'image/png': 'png', 'image/jpeg': 'jpeg', 'image/gif': 'gif', 'image/webp': 'webp' }

/** The size of an image of `width` × `height` fitted in a box, never enlarged (at least a pixel each way). */
export function scaledSize (width: number, height: number, boxWidth: number, boxHeight: number): { width: number, height: number } {
  const factor = Math.min(1, boxWidth / width, boxHeight / height)
  return { width: Math.max(1, Math.round(width * factor)), height: Math.max(1, Math.round(height * factor)) }
}

/**
 * The version of an image, in the names of its scales: it changes when its
 * bytes do, so a name with it may be kept by any cache for ever, and only
 * then, so that a page that names a scale keeps showing it after the object
 * was edited or published. An image stored without a digest follows its
 * object's modification time, which every change of the image changes too.
 */
export function imageVersion (uid: string, meta: ImageMeta, modified: Date): string {
  const identity = meta.digest ?? modified.toISOString()
  return createHash('sha1').update(`${uid}/${identity}`).digest('hex').slice(0, 16)
}

/** The name of a scale (or of the original) in a URL, as Plone 6 writes it: `<field>-<width>-<version>.<extension>`. */
const scaleName = (field: string, width: number, version: string, contentType: string): string =>
  `${field}-${width}-${version}.${FORMATS[contentType] ?? 'bin'}`

/**
 * An image field as plone.restapi serializes it (Plone 6): what was stored,
 * its `download` (the original, by a name with its version) and its
 * `scales`, each `{download, width, height}`. `base` is what the names follow:
 * the object's URL and `/@@images/` for an object, `@@images/` alone in the
 * catalogue's `image_scales`, as Plone keeps it.
 */
export function imageValue (meta: ImageMeta, field: string, version: string, base: string): Record<string, unknown> {
  const scales: Record<string, unknown> = {}
  for (const [name, boxWidth, boxHeight] of SCALES) {
    const size = scaledSize(meta.width, meta.height, boxWidth, boxHeight)
    scales[name] = { download: `${base}${scaleName(field, size.width, version, meta['content-type'])}`, ...size }
  }
  const { digest, ...shown } = meta
  return { ...shown, download: `${base}${scaleName(field, meta.width, version, meta['content-type'])}`, scales }
}

/**
 * What a name of `@@images/<name>` asks of a field's image at this version:
 * the original (`<field>`, or its versioned name), a scale by its name
 * (`<field>/<scale>`), or a versioned scale by its width; null when it names
 * nothing (another version: the image changed since the name was written).
 */
export function askedScale (steps: string[], meta: ImageMeta, field: string, version: string): { scale: string | null } | null {
  if (steps.length === 1 && steps[0] === field) return { scale: null }
  if (steps.length === 2 && steps[0] === field) {
    const box = SCALES.find(([name]) => name === steps[1])
    if (box === undefined) return null
    // A scale no smaller than the original is the original, as its serialization names it.
    return { scale: scaledSize(meta.width, meta.height, box[1], box[2]).width === meta.width ? null : box[0] }
  }
  if (steps.length !== 1) return null
  const match = /^(.+)-(\d{1,5})-([0-9a-f]{16})\.[a-z]+$/.exec(steps[0])
  if (match === null || match[1] !== field || match[3] !== version) return null
  const width = Number(match[2])
  if (width === meta.width) return { scale: null }
  const scale = SCALES.find(([, boxWidth, boxHeight]) => scaledSize(meta.width, meta.height, boxWidth, boxHeight).width === width)
  return scale === undefined ? null : { scale: scale[0] }
}

/** A scale's entry in SCALES, by its name. */
const scaleBox = (name: string): readonly [string, number, number] => SCALES.find(([scale]) => scale === name)!

/**
 * A scale of an image, in its own format (sharp, in libuv's thread pool: the
 * event loop goes on meanwhile). The original was checked whole and within
 * MAX_PIXELS when it was uploaded; sharp is held to the same bound.
 */
export async function makeScale (bytes: Buffer, meta: ImageMeta, scale: string): Promise<Buffer> {
  const [, boxWidth, boxHeight] = scaleBox(scale)
  const { width, height } = scaledSize(meta.width, meta.height, boxWidth, boxHeight)
  return await sharp(bytes, { limitInputPixels: MAX_PIXELS })
    .resize(width, height, { fit: 'fill' })
    // The EXIF orientation kept: browsers turn the scale as they turn the original (whose stored size is before turning).
    .withMetadata()
    .toFormat(FORMATS[meta['content-type']] ?? 'png')
    .toBuffer()
}
