import type { Pacer } from '../../pacing.js'
import { Cursor } from './cursor.js'
import { byteCount, checkPixels, refuse } from './refusal.js'

const EXTENSION = 0x21
const IMAGE = 0x2c
const TRAILER = 0x3b

/** A colour table follows when bit 7 of the packed byte is set; it has 2^(n+1) RGB entries. */
function skipColourTable (cursor: Cursor, packed: number, what: string): void {
  if ((packed & 0x80) !== 0) cursor.take(3 * 2 ** ((packed & 0x07) + 1), what)
}

/**
 * Data sub-blocks: a size byte and that many bytes, until a size of 0.
 * Synchronous, so that a file of a million tiny frames makes no promise a
 * frame: it stops when a slice has run (false: call again after a yield).
 */
function skipSubBlocks (cursor: Cursor, what: string, pacer: Pacer): boolean {
  for (let size = cursor.u8(what); size !== 0; size = cursor.u8(what)) {
    cursor.skip(size, what)
    if (pacer.due()) return false
  }
  return true
}

/**
 * A GIF (87a or 89a) walked to its end: header, logical screen, global colour
 * table, then extensions and images (descriptor, local colour table, LZW
 * code size, data sub-blocks), at least one image, and the trailer last.
 */
export async function checkGif (bytes: Buffer, pacer: Pacer): Promise<{ width: number, height: number }> {
  const cursor = new Cursor(bytes, 'GIF')
  const version = cursor.latin1(6, 'the header')
  if (version !== 'GIF87a' && version !== 'GIF89a') refuse('GIF', `its version ${JSON.stringify(version)} is unknown`)
  const size = { width: cursor.u16le('the screen size'), height: cursor.u16le('the screen size') }
  checkPixels('GIF', size.width, size.height)
  const packed = cursor.u8('the screen descriptor')
  cursor.take(2, 'the screen descriptor')
  skipColourTable(cursor, packed, 'the global colour table')
  let images = 0
  for (let block = cursor.u8('a block (there is no trailer)'); block !== TRAILER; block = cursor.u8('a block (there is no trailer)')) {
    if (pacer.due()) await pacer.yield()
    if (block === EXTENSION) {
      cursor.u8('an extension label')
      while (!skipSubBlocks(cursor, 'an extension', pacer)) await pacer.yield()
    } else if (block === IMAGE) {
      cursor.take(8, 'an image descriptor')
      skipColourTable(cursor, cursor.u8('an image descriptor'), 'a local colour table')
      const codeSize = cursor.u8('an image\'s LZW code size')
      if (codeSize < 2 || codeSize > 8) refuse('GIF', `an image's LZW code size is ${codeSize}, not 2 to 8`)
      while (!skipSubBlocks(cursor, 'an image\'s data', pacer)) await pacer.yield()
      images++
    } else {
      refuse('GIF', `block 0x${block.toString(16)} at byte ${cursor.offset - 1} is unknown`)
    }
  }
  if (images === 0) refuse('GIF', 'it holds no image')
  if (cursor.remaining > 0) refuse('GIF', `it goes on for ${byteCount(cursor.remaining)} after its trailer`)
  return size
}
