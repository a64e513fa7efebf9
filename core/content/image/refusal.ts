/** Why bytes are not a whole image of an accepted format: its message is the client's. */
export class NotAnImage extends Error {}

/** Refuses an image of `format` for `reason` ("chunk IDAT has a wrong CRC"). */
export function refuse (format: string, reason: string): never {
  throw new NotAnImage(`The data is not a whole, valid ${format} image: ${reason}.`)
}

export const byteCount = (n: number): string => n === 1 ? '1 byte' : `${n} bytes`

/**
 * The most pixels an image may declare: 50 megapixels. Every photo that fits
 * within IMAGE_MAX_BYTES' 8 MiB is well below it (a 50-megapixel camera JPEG
 * weighs 15 to 25 MB), and so is an 8K frame (33 MP). Beyond it an image costs
 * a browser, or any future thumbnailer, more than 200 MB to decode (4 bytes
 * per pixel), and the size bounds what a PNG's pixel data may inflate to
 * (at most 8 bytes per pixel: 400 MB, streamed), so that a decompression bomb
 * — a few kilobytes that declare billions of pixels — is refused, not decoded.
 */
export const MAX_PIXELS = 50_000_000

export function checkPixels (format: string, width: number, height: number): void {
  if (width === 0 || height === 0) refuse(format, `it declares a size of ${width} × ${height} pixels`)
  if (width * height > MAX_PIXELS) {
    throw new NotAnImage(`The ${format} image is ${width} × ${height} pixels; at most ${MAX_PIXELS / 1e6} megapixels are accepted.`)
  }
}
