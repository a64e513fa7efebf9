import type { Pacer } from '../../pacing.js'
import { Cursor } from './cursor.js'
import { checkPixels, refuse } from './refusal.js'

interface Chunk { fourcc: string, data: Buffer }
interface Size { width: number, height: number }

/** The chunks the checks read; the others (metadata, unknown ones) are walked and counted, not kept. */
const READ_CHUNKS = new Set(['VP8 ', 'VP8L', 'VP8X', 'ANIM', 'ANMF'])

/**
 * RIFF chunks up to the cursor's end: FourCC, little-endian size, data, a pad
 * byte after an odd size. Answers the first and those the checks read, and
 * how many there are: a file of a million empty chunks keeps none of them.
 */
async function readChunks (cursor: Cursor, pacer: Pacer): Promise<{ chunks: Chunk[], count: number }> {
  const chunks: Chunk[] = []
  let count = 0
  while (cursor.remaining > 0) {
    // Checked, not awaited, each chunk: a promise a chunk would be a million for a file of tiny chunks.
    if (pacer.due()) await pacer.yield()
    const fourcc = cursor.latin1(4, 'a chunk header')
    const size = cursor.u32le('a chunk header')
    const at = cursor.skip(size, `chunk ${JSON.stringify(fourcc)}`)
    if (count++ === 0 || READ_CHUNKS.has(fourcc)) chunks.push({ fourcc, data: cursor.bytes.subarray(at, at + size) })
    if (size % 2 === 1) cursor.skip(1, `chunk ${JSON.stringify(fourcc)}'s padding`)
  }
  return { chunks, count }
}

/** A lossy bitstream (RFC 6386): a key frame's tag, start code and size; its first partition within the chunk. */
function vp8Size (data: Buffer): Size {
  if (data.length < 10) refuse('WebP', 'its VP8 bitstream is shorter than a frame header')
  const tag = data.readUIntLE(0, 3)
  if ((tag & 1) !== 0) refuse('WebP', 'its VP8 bitstream does not begin with a key frame')
  if (data[3] !== 0x9d || data[4] !== 0x01 || data[5] !== 0x2a) refuse('WebP', 'its VP8 bitstream has no start code')
  if (tag >>> 5 > data.length - 10) refuse('WebP', 'the first partition of its VP8 bitstream ends past its chunk')
  return { width: data.readUInt16LE(6) & 0x3fff, height: data.readUInt16LE(8) & 0x3fff }
}

/** A lossless bitstream: signature 0x2F, 14-bit width and height minus one, alpha bit, version 0. */
function vp8lSize (data: Buffer): Size {
  if (data.length < 5 || data[0] !== 0x2f) refuse('WebP', 'its VP8L bitstream has no signature')
  const bits = data.readUInt32LE(1)
  if (bits >>> 29 !== 0) refuse('WebP', 'its VP8L bitstream has an unknown version')
  return { width: (bits & 0x3fff) + 1, height: ((bits >>> 14) & 0x3fff) + 1 }
}

/** An image's chunks hold exactly one bitstream, VP8 or VP8L (with ALPH, metadata and unknown chunks beside it). */
function bitstreamSize (chunks: Chunk[], what: string): Size {
  const streams = chunks.filter(c => c.fourcc === 'VP8 ' || c.fourcc === 'VP8L')
  if (streams.length !== 1) refuse('WebP', `${what} holds ${streams.length} bitstreams, not one`)
  const size = streams[0].fourcc === 'VP8 ' ? vp8Size(streams[0].data) : vp8lSize(streams[0].data)
  checkPixels('WebP', size.width, size.height)
  return size
}

const sameSize = (a: Size, b: Size): boolean => a.width === b.width && a.height === b.height

/** The extended format: VP8X's canvas, then one still image of its size, or ANIM and frames that lie on it. */
async function checkExtended (header: Buffer, chunks: Chunk[], pacer: Pacer): Promise<Size> {
  if (header.length !== 10) refuse('WebP', 'its VP8X header is not 10 bytes')
  const canvas = { width: header.readUIntLE(4, 3) + 1, height: header.readUIntLE(7, 3) + 1 }
  checkPixels('WebP', canvas.width, canvas.height)
  if ((header[0] & 0x02) === 0) {
    if (!sameSize(bitstreamSize(chunks, 'the file'), canvas)) refuse('WebP', 'its image is not the size of its canvas')
    return canvas
  }
  const frames = chunks.filter(c => c.fourcc === 'ANMF')
  if (!chunks.some(c => c.fourcc === 'ANIM') || frames.length === 0) refuse('WebP', 'it is animated without ANIM and frames')
  if (chunks.some(c => c.fourcc === 'VP8 ' || c.fourcc === 'VP8L')) refuse('WebP', 'it is animated, with a bitstream outside its frames')
  for (const frame of frames) {
    if (pacer.due()) await pacer.yield()
    const cursor = new Cursor(frame.data, 'WebP')
    const x = 2 * cursor.u24le('a frame header')
    const y = 2 * cursor.u24le('a frame header')
    const size = { width: cursor.u24le('a frame header') + 1, height: cursor.u24le('a frame header') + 1 }
    cursor.take(4, 'a frame header') // duration and flags
    if (x + size.width > canvas.width || y + size.height > canvas.height) refuse('WebP', 'an animation frame lies outside the canvas')
    if (!sameSize(bitstreamSize((await readChunks(cursor, pacer)).chunks, 'an animation frame'), size)) refuse('WebP', 'an animation frame is not the size it declares')
  }
  return canvas
}

/**
 * A WebP (RFC 9649) walked to its end: the RIFF size is the length of the
 * data, its chunks fill it exactly, and they make an image: one VP8 or VP8L
 * chunk (simple format), or VP8X and then a still image or an animation.
 */
export async function checkWebp (bytes: Buffer, pacer: Pacer): Promise<Size> {
  const cursor = new Cursor(bytes, 'WebP', 4)
  const riffSize = cursor.u32le('the RIFF header')
  if (riffSize + 8 !== bytes.length) refuse('WebP', `its RIFF header declares ${riffSize + 8} bytes, but there are ${bytes.length}`)
  cursor.take(4, 'the RIFF header') // WEBP, which told the format
  const { chunks: [first, ...rest], count } = await readChunks(cursor, pacer)
  if (first === undefined) refuse('WebP', 'it holds no chunk')
  if (first.fourcc === 'VP8X') return await checkExtended(first.data, rest, pacer)
  if (count > 1) refuse('WebP', 'a simple WebP holds one chunk')
  return bitstreamSize([first], 'the file')
}
