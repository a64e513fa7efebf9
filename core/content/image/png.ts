import { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { createInflate, crc32 } from 'node:zlib'
import type { Pacer } from '../../pacing.js'
import { Cursor } from './cursor.js'
import { byteCount, checkPixels, refuse } from './refusal.js'

export const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])

interface Header { width: number, height: number, bitDepth: number, colourType: number, interlaced: boolean }

/** Bit depths allowed for each colour type (grey, RGB, palette, grey+alpha, RGBA), and the samples per pixel. */
const COLOUR_TYPES: Record<number, { depths: number[], samples: number }> = {
  0: { depths: [1, 2, 4, 8, 16], samples: 1 },
  2: { depths: [8, 16], samples: 3 },
  3: { depths: [1, 2, 4, 8], samples: 1 },
  4: { depths: [8, 16], samples: 2 },
  6: { depths: [8, 16], samples: 4 }
}

/** Adam7's seven passes: first column, first row, column step, row step. */
const ADAM7 = [[0, 0, 8, 8], [4, 0, 8, 8], [0, 4, 4, 8], [2, 0, 4, 4], [0, 2, 2, 4], [1, 0, 2, 2], [0, 1, 1, 2]]
const PROGRESSIVE = [[0, 0, 1, 1]]

function parseHeader (data: Buffer): Header {
  if (data.length !== 13) refuse('PNG', `its IHDR holds ${data.length} bytes instead of 13`)
  const header = { width: data.readUInt32BE(0), height: data.readUInt32BE(4), bitDepth: data[8], colourType: data[9], interlaced: data[12] === 1 }
  if (header.width > 0x7fffffff || header.height > 0x7fffffff) refuse('PNG', 'its IHDR declares a size over 2³¹ − 1')
  if (!(COLOUR_TYPES[header.colourType]?.depths.includes(header.bitDepth) ?? false)) {
    refuse('PNG', `its IHDR declares colour type ${header.colourType} at ${header.bitDepth} bits, which does not exist`)
  }
  if (data[10] !== 0 || data[11] !== 0 || data[12] > 1) refuse('PNG', 'its IHDR declares an unknown compression, filter or interlace method')
  checkPixels('PNG', header.width, header.height)
  return header
}

/** The bytes the pixel data inflates to: for each pass, its rows, each a filter byte and its packed samples. */
function scanlineBytes ({ width, height, bitDepth, colourType, interlaced }: Header): number {
  const bitsPerPixel = bitDepth * COLOUR_TYPES[colourType].samples
  let total = 0
  for (const [x0, y0, dx, dy] of interlaced ? ADAM7 : PROGRESSIVE) {
    const columns = Math.ceil((width - x0) / dx)
    const rows = Math.ceil((height - y0) / dy)
    if (columns > 0 && rows > 0) total += rows * (1 + Math.ceil(columns * bitsPerPixel / 8))
  }
  return total
}

class Overflow extends Error {}

/**
 * Inflates the zlib stream (streamed, nothing kept) and counts its bytes,
 * stopping past `limit`: `null` when it is not a whole zlib stream (cut
 * short, or its checksum wrong). The stream's parts are joined first: a
 * file of a million one-byte IDAT chunks would be a million writes.
 */
async function inflatedLength (parts: Buffer[], limit: number): Promise<number | null> {
  let length = 0
  try {
    await pipeline(Readable.from([Buffer.concat(parts)]), createInflate(), async function count (output: AsyncIterable<Buffer>) {
      for await (const piece of output) {
        length += piece.length
        if (length > limit) throw new Overflow()
      }
    })
  } catch (err) {
    if (err instanceof Overflow) return length
    return null
  }
  return length
}

/**
 * A PNG (ISO/IEC 15948) walked to its end: the signature, then chunks, each
 * within the data and with its CRC right; IHDR first, PLTE (for a palette)
 * before the image data, the IDAT chunks in a row, IEND last with nothing
 * after; no critical chunk this walk does not know. The image data must
 * inflate to exactly the size IHDR implies — after IHDR's size was checked
 * against MAX_PIXELS, so that a bomb is never inflated beyond that size.
 */
export async function checkPng (bytes: Buffer, pacer: Pacer): Promise<{ width: number, height: number }> {
  const cursor = new Cursor(bytes, 'PNG', PNG_SIGNATURE.length)
  let header: Header | null = null
  let palette = false
  const imageData: Buffer[] = []
  let imageDataEnded = false
  for (let type = ''; type !== 'IEND';) {
    // Checked, not awaited, each step: a promise a step would be a million for a file of tiny parts.
    if (pacer.due()) await pacer.yield()
    const length = cursor.u32be('a chunk length (there is no IEND)')
    if (length > 0x7fffffff) refuse('PNG', `a chunk length of ${length} is over 2³¹ − 1`)
    const start = cursor.offset
    type = cursor.latin1(4, 'a chunk type')
    if (!/^[A-Za-z]{4}$/.test(type)) refuse('PNG', 'a chunk type is not four letters')
    const data = cursor.take(length, `chunk ${type}`)
    if (crc32(bytes.subarray(start, cursor.offset)) !== cursor.u32be(`the CRC of chunk ${type}`)) refuse('PNG', `chunk ${type} has a wrong CRC`)
    if (header === null && type !== 'IHDR') refuse('PNG', `its first chunk is ${type}, not IHDR`)
    if (imageData.length > 0 && type !== 'IDAT') imageDataEnded = true
    switch (type) {
      case 'IHDR':
        if (header !== null) refuse('PNG', 'it has a second IHDR')
        header = parseHeader(data)
        break
      case 'PLTE':
        if (palette || imageData.length > 0) refuse('PNG', 'its PLTE is doubled or after the image data')
        if (length === 0 || length % 3 !== 0 || length > 3 * 256) refuse('PNG', `its PLTE holds ${length} bytes, not 1 to 256 colours`)
        palette = true
        break
      case 'IDAT':
        if (imageDataEnded) refuse('PNG', 'its IDAT chunks are not in a row')
        imageData.push(data)
        break
      case 'IEND':
        if (length !== 0) refuse('PNG', 'its IEND holds data')
        break
      default:
        // An unknown critical chunk (upper-case first letter) changes what the image is: decoders must refuse it.
        if (type.charCodeAt(0) < 0x61) refuse('PNG', `it has an unknown critical chunk ${type}`)
    }
  }
  if (cursor.remaining > 0) refuse('PNG', `it goes on for ${byteCount(cursor.remaining)} after IEND`)
  if (header === null || imageData.length === 0) refuse('PNG', 'it has no image data (IDAT)')
  if (header.colourType === 3 && !palette) refuse('PNG', 'its palette (PLTE) is missing')
  const expected = scanlineBytes(header)
  const inflated = await inflatedLength(imageData, expected)
  if (inflated === null) refuse('PNG', 'its pixel data is not a whole zlib stream')
  if (inflated !== expected) refuse('PNG', `its pixel data is ${inflated > expected ? 'larger' : 'smaller'} than ${header.width} × ${header.height} pixels`)
  return { width: header.width, height: header.height }
}
