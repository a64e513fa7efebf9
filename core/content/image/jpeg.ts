import type { Pacer } from '../../pacing.js'
import { Cursor } from './cursor.js'
import { byteCount, checkPixels, refuse } from './refusal.js'

const SOI = 0xd8
const EOI = 0xd9
const SOS = 0xda
/** A marker as the standard writes it: FFD8, FFE0 … */
const markerName = (marker: number): string => `FF${marker.toString(16).toUpperCase().padStart(2, '0')}`
const isRestart = (marker: number): boolean => marker >= 0xd0 && marker <= 0xd7
/** Start-of-frame markers: C0 to CF, except DHT (C4), JPG (C8) and DAC (CC). */
const isFrame = (marker: number): boolean => marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc
/**
 * The frames every browser decodes: baseline, extended sequential and
 * progressive, Huffman-coded, 8 bits. Lossless, hierarchical and
 * arithmetic-coded JPEGs are not displayed everywhere.
 */
const DISPLAYED_FRAMES = new Set([0xc0, 0xc1, 0xc2])

/** The next marker: 0xFF, any fill bytes (0xFF), then its code. */
function nextMarker (cursor: Cursor): number {
  if (cursor.u8('a marker') !== 0xff) refuse('JPEG', `a segment does not begin with a marker at byte ${cursor.offset - 1}`)
  let marker = cursor.u8('a marker')
  while (marker === 0xff) marker = cursor.u8('a marker')
  return marker
}

/**
 * Skips entropy-coded data up to the marker that ends it. Inside it, 0xFF is
 * followed by 0x00 (a stuffed byte), a restart marker, or a fill byte.
 */
async function skipScan (cursor: Cursor, pacer: Pacer): Promise<void> {
  const { bytes, end } = cursor
  let at = cursor.offset
  for (;;) {
    if (pacer.due()) await pacer.yield()
    at = bytes.indexOf(0xff, at)
    if (at < 0 || at >= end - 1) refuse('JPEG', 'the data ends inside a scan (there is no EOI)')
    const next = bytes[at + 1]
    if (next === 0xff) at += 1 // a fill byte: a marker may follow
    else if (next === 0x00 || isRestart(next)) at += 2
    else break
  }
  cursor.offset = at
}

function parseFrame (marker: number, data: Buffer): { width: number, height: number } {
  if (!DISPLAYED_FRAMES.has(marker)) refuse('JPEG', `its frame (${markerName(marker)}) is of a kind not every browser displays`)
  const components = data.length >= 6 ? data[5] : 0
  if (data.length !== 6 + 3 * components || ![1, 3, 4].includes(components)) refuse('JPEG', 'its frame header is malformed')
  if (data[0] !== 8) refuse('JPEG', `its samples are ${data[0]} bits, not 8`)
  const size = { height: data.readUInt16BE(1), width: data.readUInt16BE(3) }
  checkPixels('JPEG', size.width, size.height)
  return size
}

/** One JPEG, after its SOI, up to its EOI: the cursor is left after it. */
async function walkImage (cursor: Cursor, pacer: Pacer): Promise<{ width: number, height: number }> {
  let frame: { width: number, height: number } | null = null
  let scans = 0
  for (;;) {
    // Checked, not awaited, each step: a promise a step would be a million for a file of tiny parts.
    if (pacer.due()) await pacer.yield()
    const marker = nextMarker(cursor)
    if (marker === EOI) break
    if (marker === SOI || isRestart(marker) || marker === 0x01) refuse('JPEG', `marker ${markerName(marker)} is out of place`)
    const segment = `segment ${markerName(marker)}`
    const length = cursor.u16be(`the length of ${segment}`)
    if (length < 2) refuse('JPEG', `the length of ${segment} is under 2`)
    const data = cursor.take(length - 2, segment)
    if (isFrame(marker)) {
      if (frame !== null) refuse('JPEG', 'it has a second frame')
      frame = parseFrame(marker, data)
    } else if (marker === SOS) {
      if (frame === null) refuse('JPEG', 'a scan comes before the frame')
      if (data.length !== 4 + 2 * data[0]) refuse('JPEG', 'a scan header is malformed')
      scans++
      await skipScan(cursor, pacer)
    }
  }
  if (frame === null || scans === 0) refuse('JPEG', 'it ends without a frame and a scan')
  return frame
}

/**
 * A JPEG (ITU T.81) walked to its end: SOI, marker segments each within the
 * data, one frame that browsers display, scans and their entropy-coded data,
 * and EOI. Only further whole JPEGs may follow: cameras and phones store a
 * second image there (Multi-Picture Format: HDR gain maps, depth maps), which
 * browsers skip; anything else is refused. The size is the first image's.
 */
export async function checkJpeg (bytes: Buffer, pacer: Pacer): Promise<{ width: number, height: number }> {
  const cursor = new Cursor(bytes, 'JPEG')
  let size: { width: number, height: number } | null = null
  while (size === null || cursor.remaining > 0) {
    if (cursor.remaining < 2 || bytes.readUInt16BE(cursor.offset) !== 0xff00 + SOI) {
      refuse('JPEG', `it goes on for ${byteCount(cursor.remaining)} after its end (EOI), and they are not another JPEG`)
    }
    cursor.offset += 2
    const image = await walkImage(cursor, pacer)
    size ??= image
  }
  return size
}
