import { crc32, deflateSync } from 'node:zlib'

/**
 * Small, valid images of every accepted format, written byte by byte here
 * (no encoder is at hand, and a test should not trust the parser it tests),
 * and images of formats the service no longer accepts.
 */

const u16be = (n: number): Buffer => { const b = Buffer.alloc(2); b.writeUInt16BE(n); return b }
const u16le = (n: number): Buffer => { const b = Buffer.alloc(2); b.writeUInt16LE(n); return b }
const u32be = (n: number): Buffer => { const b = Buffer.alloc(4); b.writeUInt32BE(n); return b }
const u32le = (n: number): Buffer => { const b = Buffer.alloc(4); b.writeUInt32LE(n); return b }

// ---- PNG (ISO/IEC 15948) ----

export const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])

/** A chunk: length, type, data, CRC over type and data. */
export function pngChunk (type: string, data: Buffer): Buffer {
  const typed = Buffer.concat([Buffer.from(type, 'latin1'), data])
  return Buffer.concat([u32be(data.length), typed, u32be(crc32(typed))])
}

export function pngHeader (width: number, height: number, bitDepth: number, colourType: number, interlaced = false): Buffer {
  return Buffer.concat([u32be(width), u32be(height), Buffer.from([bitDepth, colourType, 0, 0, interlaced ? 1 : 0])])
}

const SAMPLES_PER_PIXEL: Record<number, number> = { 0: 1, 2: 3, 3: 1, 4: 2, 6: 4 }
/** Adam7: the pixels of each pass, as [first x, first y, step x, step y]. */
const ADAM7 = [[0, 0, 8, 8], [4, 0, 8, 8], [0, 4, 4, 8], [2, 0, 4, 4], [0, 2, 2, 4], [1, 0, 2, 2], [0, 1, 1, 2]]

/** The scanlines of an image (filter type 0 on every row), pass by pass when interlaced: what IDAT compresses. */
export function pngScanlines (width: number, height: number, bitDepth: number, colourType: number, interlaced: boolean): Buffer {
  const rows: Buffer[] = []
  for (const [x0, y0, dx, dy] of interlaced ? ADAM7 : [[0, 0, 1, 1]]) {
    const xs: number[] = []
    for (let x = x0; x < width; x += dx) xs.push(x)
    if (xs.length === 0) continue
    for (let y = y0; y < height; y += dy) {
      let bits = ''
      for (const x of xs) {
        for (let s = 0; s < SAMPLES_PER_PIXEL[colourType]; s++) bits += ((x * 7 + y * 3 + s) % (2 ** bitDepth)).toString(2).padStart(bitDepth, '0')
      }
      bits = bits.padEnd(Math.ceil(bits.length / 8) * 8, '0')
      rows.push(Buffer.from([0, ...(bits.match(/.{8}/g) ?? []).map(b => parseInt(b, 2))]))
    }
  }
  return Buffer.concat(rows)
}

export interface PngOptions { bitDepth?: number, colourType?: number, interlaced?: boolean, comment?: string }

/** A real PNG; colour type 3 gets a palette that covers every index. */
export function png (width: number, height: number, { bitDepth = 8, colourType = 2, interlaced = false, comment = 'a sample' }: PngOptions = {}): Buffer {
  const palette = colourType === 3 ? [pngChunk('PLTE', Buffer.alloc(3 * 2 ** bitDepth, 0x7f))] : []
  return Buffer.concat([
    PNG_SIGNATURE, pngChunk('IHDR', pngHeader(width, height, bitDepth, colourType, interlaced)),
    pngChunk('tEXt', Buffer.from(`Comment\0${comment}`, 'latin1')), ...palette,
    pngChunk('IDAT', deflateSync(pngScanlines(width, height, bitDepth, colourType, interlaced))), pngChunk('IEND', Buffer.alloc(0))
  ])
}

/** A PNG made of these chunks after the signature, e.g. to put a forged IDAT behind a real header. */
export const pngOf = (...chunks: Array<[string, Buffer]>): Buffer =>
  Buffer.concat([PNG_SIGNATURE, ...chunks.map(([type, data]) => pngChunk(type, data))])

// ---- JPEG (ITU T.81), greyscale, every 8×8 block flat ----

const segment = (marker: number, payload: Buffer): Buffer => Buffer.concat([Buffer.from([0xff, marker]), u16be(payload.length + 2), payload])

/**
 * Huffman tables: DC code `0` is a difference of category 0, `10` one of
 * category 11 (11 more bits); AC code `0` is the end of block. So a block is
 * `00` (flat, no change), or `10` + 11 bits + `0`.
 */
const DC_TABLE = Buffer.from([0x00, 1, 1, ...Array(14).fill(0), 0x00, 0x0b])
const AC_TABLE = Buffer.from([0x10, 1, ...Array(15).fill(0), 0x00])
export const FLAT_BLOCK = '00'

export interface JpegOptions {
  /** The bits of each 8×8 block (one block per MCU), `FLAT_BLOCK` by default. */
  blocks?: string[]
  /** A restart marker after every this many blocks (DRI). */
  restartInterval?: number
  /** Segments before the frame (APPn, COM). */
  before?: Buffer[]
  /** SOF marker: 0xc0 baseline, 0xc2 progressive … */
  frameMarker?: number
}

/** Entropy-coded data: blocks' bits packed MSB first, each interval padded with 1s, 0xFF stuffed with 0x00, RSTn between intervals. */
function entropyCoded (blocks: string[], restartInterval: number | undefined): Buffer {
  const intervals: string[][] = []
  const size = restartInterval ?? blocks.length
  for (let i = 0; i < blocks.length; i += size) intervals.push(blocks.slice(i, i + size))
  const out: number[] = []
  intervals.forEach((interval, n) => {
    let bits = interval.join('')
    bits = bits.padEnd(Math.ceil(bits.length / 8) * 8, '1')
    for (const byte of (bits.match(/.{8}/g) ?? []).map(b => parseInt(b, 2))) out.push(...(byte === 0xff ? [0xff, 0x00] : [byte]))
    if (n < intervals.length - 1) out.push(0xff, 0xd0 + n % 8)
  })
  return Buffer.from(out)
}

export function jpeg (width: number, height: number, { blocks, restartInterval, before = [], frameMarker = 0xc0 }: JpegOptions = {}): Buffer {
  const count = Math.ceil(width / 8) * Math.ceil(height / 8)
  return Buffer.concat([
    Buffer.from([0xff, 0xd8]),
    ...before,
    segment(0xdb, Buffer.from([0x00, ...Array(64).fill(1)])),
    segment(frameMarker, Buffer.concat([Buffer.from([8]), u16be(height), u16be(width), Buffer.from([1, 1, 0x11, 0])])),
    segment(0xc4, DC_TABLE), segment(0xc4, AC_TABLE),
    ...(restartInterval !== undefined ? [segment(0xdd, u16be(restartInterval))] : []),
    segment(0xda, Buffer.from([1, 1, 0x00, 0, 63, 0])),
    entropyCoded(blocks ?? Array(count).fill(FLAT_BLOCK), restartInterval),
    Buffer.from([0xff, 0xd9])
  ])
}

export const jfif = segment(0xe0, Buffer.from('JFIF\0\x01\x02\0\0\x01\0\x01\0\0', 'latin1'))
export const jpegComment = (text: string): Buffer => segment(0xfe, Buffer.from(text, 'latin1'))

// ---- GIF (GIF89a) ----

/** One 1×1 frame: graphic control extension, image descriptor, LZW data (clear, index 0, end: 0x44 0x01). */
const GIF_FRAME = Buffer.from([0x21, 0xf9, 4, 0, 0, 0, 0, 0, 0x2c, 0, 0, 0, 0, 1, 0, 1, 0, 0, 2, 2, 0x44, 0x01, 0])

/** Data as sub-blocks: at most 255 bytes each, then a 0. */
const subBlocks = (data: Buffer): Buffer => {
  const parts: Buffer[] = []
  for (let i = 0; i < data.length; i += 255) { const part = data.subarray(i, i + 255); parts.push(Buffer.from([part.length]), part) }
  return Buffer.concat([...parts, Buffer.from([0])])
}

export interface GifOptions { frames?: number, comment?: string, loop?: boolean, version?: '87a' | '89a' }

export function gif (width: number, height: number, { frames = 1, comment, loop = false, version = '89a' }: GifOptions = {}): Buffer {
  const frame = version === '87a' ? GIF_FRAME.subarray(8) : GIF_FRAME
  return Buffer.concat([
    Buffer.from(`GIF${version}`, 'latin1'), u16le(width), u16le(height), Buffer.from([0x80, 0, 0]), // a global colour table of 2 entries
    Buffer.from([0, 0, 0, 0xff, 0xff, 0xff]),
    ...(loop ? [Buffer.from([0x21, 0xff]), subBlocks(Buffer.from('NETSCAPE2.0', 'latin1')).subarray(0, -1), Buffer.from([3, 1, 0, 0, 0])] : []),
    ...(comment !== undefined ? [Buffer.from([0x21, 0xfe]), subBlocks(Buffer.from(comment, 'latin1'))] : []),
    ...Array(frames).fill(frame),
    Buffer.from([0x3b])
  ])
}

// ---- WebP (RFC 9649): 1×1 images as Modernizr's feature tests carry them ----

export const webp = {
  lossy: Buffer.from('UklGRiIAAABXRUJQVlA4IBYAAAAwAQCdASoBAAEADsD+JaQAA3AAAAAA', 'base64'),
  lossless: Buffer.from('UklGRhoAAABXRUJQVlA4TA0AAAAvAAAAEAcQERGIiP4HAA==', 'base64'),
  alpha: Buffer.from('UklGRkoAAABXRUJQVlA4WAoAAAAQAAAAAAAAAAAAQUxQSAwAAAARBxAR/Q9ERP8DAABWUDggGAAAABQBAJ0BKgEAAQAAAP4AAA3AAP7mtQAAAA==', 'base64'),
  animated: Buffer.from('UklGRlIAAABXRUJQVlA4WAoAAAASAAAAAAAAAAAAQU5JTQYAAAD/////AABBTk1GJgAAAAAAAAAAAAAAAAAAAGQAAABWUDhMDQAAAC8AAAAQBxAREYiI/gcA', 'base64')
}

/** A RIFF/WebP file around these chunks ([FourCC, data]), each padded to an even size. */
export function webpOf (...chunks: Array<[string, Buffer]>): Buffer {
  const body = Buffer.concat(chunks.map(([fourcc, data]) =>
    Buffer.concat([Buffer.from(fourcc, 'latin1'), u32le(data.length), data, Buffer.alloc(data.length % 2)])))
  return Buffer.concat([Buffer.from('RIFF', 'latin1'), u32le(body.length + 4), Buffer.from('WEBP', 'latin1'), body])
}

/** The chunks of a WebP file, to build variants of the samples. */
export function webpChunks (file: Buffer): Array<[string, Buffer]> {
  const chunks: Array<[string, Buffer]> = []
  for (let at = 12; at < file.length;) {
    const size = file.readUInt32LE(at + 4)
    chunks.push([file.toString('latin1', at, at + 4), file.subarray(at + 8, at + 8 + size)])
    at += 8 + size + size % 2
  }
  return chunks
}

// ---- Formats that are no longer accepted ----

/** 1×1, 24 bits. */
export const bmp = Buffer.concat([
  Buffer.from('BM', 'latin1'), u32le(58), u32le(0), u32le(54),
  u32le(40), u32le(1), u32le(1), u16le(1), u16le(24), u32le(0), u32le(4), u32le(2835), u32le(2835), u32le(0), u32le(0),
  Buffer.from([0x20, 0x40, 0x80, 0])
])

/** 1×1, 8-bit grey, uncompressed, little-endian. */
export const tiff = ((): Buffer => {
  const entries: Array<[number, number, number]> = [[256, 3, 1], [257, 3, 1], [258, 3, 8], [259, 3, 1], [262, 3, 1], [273, 4, 8 + 2 + 9 * 12 + 4], [277, 3, 1], [278, 3, 1], [279, 4, 1]]
  const ifd = Buffer.concat([u16le(entries.length), ...entries.map(([tag, type, value]) =>
    Buffer.concat([u16le(tag), u16le(type), u32le(1), type === 3 ? Buffer.concat([u16le(value), u16le(0)]) : u32le(value)])), u32le(0)])
  return Buffer.concat([Buffer.from('II*\0', 'latin1'), u32le(8), ifd, Buffer.from([0x80])])
})()

/** An icon holding a 1×1 PNG. */
export const ico = ((): Buffer => {
  const image = png(1, 1)
  return Buffer.concat([Buffer.from([0, 0, 1, 0, 1, 0, 1, 1, 0, 0]), u16le(1), u16le(32), u32le(image.length), u32le(22), image])
})()

const box = (type: string, ...payload: Buffer[]): Buffer => {
  const body = Buffer.concat(payload)
  return Buffer.concat([u32be(body.length + 8), Buffer.from(type, 'latin1'), body])
}
const fullBox = (type: string, ...payload: Buffer[]): Buffer => box(type, Buffer.alloc(4), ...payload)

/** The boxes of an AVIF (ISO/IEC 23000-22) down to its size: what a header reader looks at. */
export const avif = Buffer.concat([
  box('ftyp', Buffer.from('avif', 'latin1'), u32be(0), Buffer.from('avifmif1miaf', 'latin1')),
  fullBox('meta', fullBox('hdlr', u32be(0), Buffer.from('pict', 'latin1'), Buffer.alloc(13)),
    box('iprp', box('ipco', fullBox('ispe', u32be(1), u32be(1))))),
  box('mdat', Buffer.from([0x12, 0x00, 0x0a, 0x0a]))
])

/** The `image` field of a write, as a client sends it (the declared content type is not trusted: the bytes decide). */
export const upload = (bytes: Buffer, filename = 'picture'): Record<string, string> =>
  ({ data: bytes.toString('base64'), encoding: 'base64', filename, 'content-type': 'image/png' })
