import t, { type Test } from 'tap'
import fc from 'fast-check'
import { deflateSync } from 'node:zlib'
import { MAX_PIXELS, NotAnImage, checkImageStructure } from '../../core/content/image/structure.js'
import {
  FLAT_BLOCK, avif, bmp, gif, ico, jfif, jpeg, jpegComment, png, pngChunk, pngHeader, pngOf, pngScanlines, tiff, webp, webpChunks, webpOf
} from '../image-samples.js'

/**
 * An image is accepted only when its structure is whole, walked to its end
 * (Over 300 lines: one file a format would repeat the corpus builders; the
 * formats share them and are read one `t.test` each.)
 * (issue 11, defect 10): every accepted format's valid samples pass; what is
 * cut short, corrupted, followed by something else, or declares more pixels
 * than MAX_PIXELS is refused.
 */

interface Sample { name: string, bytes: Buffer, type: string, width: number, height: number }

/** 11 ones after the DC code `10`: the block's bytes hold 0xFF, which the encoder stuffs with 0x00. */
const BRIGHT_BLOCK = `10${'1'.repeat(11)}0`

const valid: Sample[] = [
  { name: 'PNG, RGB 8 bits', bytes: png(3, 2), type: 'image/png', width: 3, height: 2 },
  { name: 'PNG, grey 1 bit, 9 pixels wide (rows end inside a byte)', bytes: png(9, 2, { bitDepth: 1, colourType: 0 }), type: 'image/png', width: 9, height: 2 },
  { name: 'PNG, palette 4 bits', bytes: png(5, 3, { bitDepth: 4, colourType: 3 }), type: 'image/png', width: 5, height: 3 },
  { name: 'PNG, RGBA 16 bits, interlaced', bytes: png(5, 5, { bitDepth: 16, colourType: 6, interlaced: true }), type: 'image/png', width: 5, height: 5 },
  { name: 'PNG, grey+alpha 8 bits, interlaced, 1×1 (six empty passes)', bytes: png(1, 1, { colourType: 4, interlaced: true }), type: 'image/png', width: 1, height: 1 },
  { name: 'PNG, palette 2 bits, interlaced, 10×9', bytes: png(10, 9, { bitDepth: 2, colourType: 3, interlaced: true }), type: 'image/png', width: 10, height: 9 },
  { name: 'JPEG, baseline 1×1', bytes: jpeg(1, 1), type: 'image/jpeg', width: 1, height: 1 },
  { name: 'JPEG, JFIF and a comment, restart markers', bytes: jpeg(16, 16, { before: [jfif, jpegComment('a talk')], restartInterval: 1 }), type: 'image/jpeg', width: 16, height: 16 },
  { name: 'JPEG, a stuffed 0xFF in the scan', bytes: jpeg(24, 8, { blocks: [FLAT_BLOCK, FLAT_BLOCK, BRIGHT_BLOCK] }), type: 'image/jpeg', width: 24, height: 8 },
  { name: 'JPEG, progressive', bytes: jpeg(8, 8, { frameMarker: 0xc2 }), type: 'image/jpeg', width: 8, height: 8 },
  { name: 'JPEG with a second image after it (MPF: HDR gain map, depth map)', bytes: Buffer.concat([jpeg(16, 8), jpeg(8, 8)]), type: 'image/jpeg', width: 16, height: 8 },
  { name: 'GIF89a', bytes: gif(1, 1), type: 'image/gif', width: 1, height: 1 },
  { name: 'GIF87a', bytes: gif(2, 3, { version: '87a' }), type: 'image/gif', width: 2, height: 3 },
  { name: 'GIF, animated, looping, with a long comment', bytes: gif(4, 4, { frames: 3, loop: true, comment: 'c'.repeat(600) }), type: 'image/gif', width: 4, height: 4 },
  { name: 'WebP, lossy', bytes: webp.lossy, type: 'image/webp', width: 1, height: 1 },
  { name: 'WebP, lossless', bytes: webp.lossless, type: 'image/webp', width: 1, height: 1 },
  { name: 'WebP, extended with alpha', bytes: webp.alpha, type: 'image/webp', width: 1, height: 1 },
  { name: 'WebP, animated', bytes: webp.animated, type: 'image/webp', width: 1, height: 1 }
]

/** The image is refused as NotAnImage, with a message that matches. */
async function isRefused (t: Test, bytes: Buffer, message: RegExp, name?: string): Promise<void> {
  try {
    const accepted = await checkImageStructure(bytes)
    t.fail(`${name ?? 'the image'} was accepted as ${JSON.stringify(accepted)}`)
  } catch (err) {
    t.ok(err instanceof NotAnImage, `${name ?? 'the image'} is refused as not an image`)
    t.match((err as Error).message, message)
  }
}

async function refusedQuietly (bytes: Buffer): Promise<boolean> {
  try {
    await checkImageStructure(bytes)
    return false
  } catch (err) {
    if (err instanceof NotAnImage) return true
    throw err
  }
}

t.test('valid images of every accepted format are accepted, with their type and size', async t => {
  for (const sample of valid) {
    t.same(await checkImageStructure(sample.bytes), { contentType: sample.type, width: sample.width, height: sample.height }, sample.name)
  }
})

t.test('every prefix of every valid image is refused', async t => {
  for (const sample of valid) {
    const accepted: number[] = []
    for (let length = 0; length < sample.bytes.length; length++) {
      if (!await refusedQuietly(sample.bytes.subarray(0, length))) accepted.push(length)
    }
    // A JPEG followed by another one is whole where the first ends.
    const whole = sample.name.startsWith('JPEG with a second image') ? [jpeg(16, 8).length] : []
    t.same(accepted, whole, `${sample.name}: ${sample.bytes.length} bytes, every shorter prefix refused`)
  }
})

t.test('anything after the end of an image is refused', async t => {
  for (const sample of valid) {
    for (const tail of [Buffer.from([0]), Buffer.from('garbage'), Buffer.from([0xff, 0xd9]), sample.bytes]) {
      if (sample.type === 'image/jpeg' && tail === sample.bytes) continue // another JPEG: see below
      await isRefused(t, Buffer.concat([sample.bytes, tail]), /./, `${sample.name} + ${tail.length} bytes`)
    }
  }
  await isRefused(t, Buffer.concat([jpeg(8, 8), png(1, 1)]), /after its end/, 'a JPEG followed by a PNG')
  await isRefused(t, Buffer.concat([jpeg(8, 8), jpeg(8, 8).subarray(0, 40)]), /./, 'a JPEG followed by a cut JPEG')
})

t.test('any random tail after an image is refused', async t => {
  await fc.assert(fc.asyncProperty(fc.constantFrom(...valid), fc.uint8Array({ minLength: 1, maxLength: 64 }),
    async (sample, tail) => await refusedQuietly(Buffer.concat([sample.bytes, tail]))))
  t.pass('every random tail refused')
})

t.test('PNG', async t => {
  const header = pngHeader(4, 4, 8, 0)
  const pixels = deflateSync(pngScanlines(4, 4, 8, 0, false))
  const end: [string, Buffer] = ['IEND', Buffer.alloc(0)]
  t.same(await checkImageStructure(pngOf(['IHDR', header], ['IDAT', pixels], end)), { contentType: 'image/png', width: 4, height: 4 }, 'the reference')

  t.test('a change of any byte is refused (chunk CRCs, the zlib checksum)', async t => {
    const sample = png(3, 2)
    for (let at = 0; at < sample.length; at++) {
      const changed = Buffer.from(sample)
      changed[at] ^= 0x01
      if (!await refusedQuietly(changed)) t.fail(`a change at byte ${at} was accepted`)
    }
  })

  t.test('random insertions, deletions and overwrites are refused', async t => {
    const sample = png(3, 2)
    await fc.assert(fc.asyncProperty(fc.nat({ max: sample.length }), fc.nat({ max: 8 }), fc.uint8Array({ maxLength: 8 }), async (at, removed, inserted) => {
      const edited = Buffer.concat([sample.subarray(0, at), Buffer.from(inserted), sample.subarray(at + removed)])
      fc.pre(!edited.equals(sample))
      return await refusedQuietly(edited)
    }))
    t.pass('every random edit refused')
  })

  t.test('a wrong CRC', async t => {
    const sample = png(3, 2)
    const ihdrCrcAt = 8 + 4 + 4 + 13
    sample.writeUInt32BE((sample.readUInt32BE(ihdrCrcAt) + 1) >>> 0, ihdrCrcAt)
    await isRefused(t, sample, /CRC/)
  })

  t.test('a chunk length that points past the end', async t => {
    const sample = png(3, 2)
    const idatAt = sample.indexOf('IDAT') - 4
    for (const length of [sample.length, 0x7fffffff, 0x80000000, 0xffffffff]) {
      const forged = Buffer.from(sample)
      forged.writeUInt32BE(length, idatAt)
      await isRefused(t, forged, /./, `length ${length}`)
    }
  })

  t.test('a declared size over MAX_PIXELS is refused before its pixels are inflated', async t => {
    for (const [width, height] of [[100_000, 100_000], [2 ** 31 - 1, 2 ** 31 - 1], [MAX_PIXELS + 1, 1]]) {
      await isRefused(t, pngOf(['IHDR', pngHeader(width, height, 8, 6)], ['IDAT', pixels], end), /pixels/, `${width}×${height}`)
    }
  })

  t.test('exactly MAX_PIXELS is accepted; one row more is refused', async t => {
    const width = 10_000
    const height = MAX_PIXELS / width
    const rows = (n: number): Buffer => deflateSync(Buffer.alloc(n * (1 + width / 8)))
    t.same(await checkImageStructure(pngOf(['IHDR', pngHeader(width, height, 1, 0)], ['IDAT', rows(height)], end)),
      { contentType: 'image/png', width, height })
    await isRefused(t, pngOf(['IHDR', pngHeader(width, height + 1, 1, 0)], ['IDAT', rows(height + 1)], end), /pixels/)
  })

  t.test('pixel data that inflates to more or less than the header declares (a decompression bomb)', async t => {
    const bomb = deflateSync(Buffer.alloc(64 * 1024 * 1024))
    t.ok(bomb.length < 100_000, `64 MiB in ${bomb.length} bytes`)
    await isRefused(t, pngOf(['IHDR', header], ['IDAT', bomb], end), /pixel data/, 'a bomb behind a 4×4 header')
    await isRefused(t, pngOf(['IHDR', header], ['IDAT', deflateSync(pngScanlines(4, 5, 8, 0, false))], end), /pixel data/, 'one row too many')
    await isRefused(t, pngOf(['IHDR', header], ['IDAT', deflateSync(pngScanlines(4, 3, 8, 0, false))], end), /pixel data/, 'one row missing')
    await isRefused(t, pngOf(['IHDR', header], ['IDAT', pixels.subarray(0, -4)], end), /pixel data/, 'a zlib stream cut short')
    await isRefused(t, pngOf(['IHDR', header], ['IDAT', Buffer.from('not zlib at all')], end), /pixel data/, 'not a zlib stream')
    await isRefused(t, pngOf(['IHDR', pngHeader(4, 4, 8, 0, true)], ['IDAT', pixels], end), /pixel data/, 'interlaced in the header, not in the data')
  })

  t.test('IDAT may be split into several chunks, in a row', async t => {
    const split: Array<[string, Buffer]> = [['IHDR', header], ['IDAT', pixels.subarray(0, 5)], ['IDAT', pixels.subarray(5)], end]
    t.same(await checkImageStructure(pngOf(...split)), { contentType: 'image/png', width: 4, height: 4 })
    await isRefused(t, pngOf(['IHDR', header], ['IDAT', pixels.subarray(0, 5)], ['tEXt', Buffer.from('a\0b')], ['IDAT', pixels.subarray(5)], end), /IDAT/)
  })

  t.test('chunks out of order, missing, doubled or unknown', async t => {
    const cases: Array<[string, Array<[string, Buffer]>]> = [
      ['no IHDR first', [['tEXt', Buffer.from('a\0b')], ['IHDR', header], ['IDAT', pixels], end]],
      ['two IHDR', [['IHDR', header], ['IHDR', header], ['IDAT', pixels], end]],
      ['no IDAT', [['IHDR', header], end]],
      ['no IEND', [['IHDR', header], ['IDAT', pixels]]],
      ['an IEND with data', [['IHDR', header], ['IDAT', pixels], ['IEND', Buffer.from([0])]]],
      ['a chunk after IEND', [['IHDR', header], ['IDAT', pixels], end, ['tEXt', Buffer.from('a\0b')]]],
      ['an unknown critical chunk', [['IHDR', header], ['ABCD', Buffer.alloc(1)], ['IDAT', pixels], end]],
      ['a chunk type that is not letters', [['IHDR', header], ['a1c!', Buffer.alloc(1)], ['IDAT', pixels], end]],
      ['a palette image without PLTE', [['IHDR', pngHeader(4, 4, 8, 3)], ['IDAT', pixels], end]],
      ['PLTE after IDAT', [['IHDR', pngHeader(4, 4, 8, 3)], ['IDAT', pixels], ['PLTE', Buffer.alloc(3)], end]],
      ['a PLTE of 2 bytes', [['IHDR', pngHeader(4, 4, 8, 3)], ['PLTE', Buffer.alloc(2)], ['IDAT', pixels], end]],
      ['an IHDR of 12 bytes', [['IHDR', header.subarray(0, 12)], ['IDAT', pixels], end]],
      ['a width of 0', [['IHDR', pngHeader(0, 4, 8, 0)], ['IDAT', pixels], end]],
      ['RGB at 4 bits', [['IHDR', pngHeader(4, 4, 4, 2)], ['IDAT', pixels], end]],
      ['colour type 5', [['IHDR', pngHeader(4, 4, 8, 5)], ['IDAT', pixels], end]],
      ['interlace method 2', [['IHDR', Buffer.concat([header.subarray(0, 12), Buffer.from([2])])], ['IDAT', pixels], end]],
      ['compression method 1', [['IHDR', Buffer.concat([header.subarray(0, 10), Buffer.from([1, 0, 0])])], ['IDAT', pixels], end]]
    ]
    for (const [name, chunks] of cases) await isRefused(t, pngOf(...chunks), /./, name)
  })

  t.test('ancillary chunks anywhere before IEND are kept (gAMA, APNG\'s acTL …)', async t => {
    t.same(await checkImageStructure(pngOf(['IHDR', header], ['gAMA', Buffer.alloc(4)], ['IDAT', pixels], ['tIME', Buffer.alloc(7)], end)),
      { contentType: 'image/png', width: 4, height: 4 })
  })
  t.ok(pngChunk('IEND', Buffer.alloc(0)).equals(Buffer.from([0, 0, 0, 0, 0x49, 0x45, 0x4e, 0x44, 0xae, 0x42, 0x60, 0x82])), 'the CRCs are the standard ones')
})

t.test('JPEG', async t => {
  const sample = jpeg(16, 16, { before: [jfif], restartInterval: 1 })

  t.test('a segment length that points past the end', async t => {
    const forged = Buffer.from(sample)
    forged.writeUInt16BE(0xffff, 4) // APP0's length
    await isRefused(t, forged, /./)
    const short = Buffer.from(sample)
    short.writeUInt16BE(1, 4)
    await isRefused(t, short, /./, 'a length under 2')
  })

  t.test('a declared size over MAX_PIXELS, or of 0', async t => {
    await isRefused(t, jpeg(65_535, 65_535, { blocks: [FLAT_BLOCK] }), /pixels/)
    await isRefused(t, jpeg(8, 0, { blocks: [FLAT_BLOCK] }), /./, 'a height of 0 (set later by DNL)')
  })

  t.test('frames that browsers do not display are refused', async t => {
    for (const marker of [0xc3, 0xc5, 0xc6, 0xc7, 0xc9, 0xca, 0xcb, 0xcd, 0xce, 0xcf]) {
      await isRefused(t, jpeg(8, 8, { frameMarker: marker }), /./, `SOF${(marker - 0xc0).toString(16)}`)
    }
    t.same(await checkImageStructure(jpeg(8, 8, { frameMarker: 0xc1 })), { contentType: 'image/jpeg', width: 8, height: 8 }, 'extended sequential')
  })

  t.test('a JPEG without its scan, its frame or its end', async t => {
    const sos = sample.indexOf(Buffer.from([0xff, 0xda]))
    await isRefused(t, Buffer.concat([sample.subarray(0, sos), Buffer.from([0xff, 0xd9])]), /./, 'no scan')
    const sof = sample.indexOf(Buffer.from([0xff, 0xc0]))
    const sofEnd = sof + 2 + sample.readUInt16BE(sof + 2)
    await isRefused(t, Buffer.concat([sample.subarray(0, sof), sample.subarray(sofEnd)]), /./, 'no frame')
    await isRefused(t, Buffer.concat([sample.subarray(0, sof), sample.subarray(sof, sofEnd), sample.subarray(sof)]), /./, 'two frames')
    await isRefused(t, Buffer.concat([Buffer.from([0xff, 0xd8]), sample]), /./, 'two SOI')
  })

  t.test('fill bytes before a marker are allowed', async t => {
    const filled = Buffer.concat([sample.subarray(0, -2), Buffer.from([0xff, 0xff, 0xff, 0xd9])])
    t.same(await checkImageStructure(filled), { contentType: 'image/jpeg', width: 16, height: 16 })
  })
})

t.test('GIF', async t => {
  const sample = gif(4, 4, { comment: 'hello' })
  t.test('a sub-block size that points past the end', async t => {
    const forged = Buffer.from(sample)
    forged[sample.indexOf('hello') - 1] = 200
    await isRefused(t, forged, /./)
  })
  t.test('a declared size over MAX_PIXELS, or of 0', async t => {
    await isRefused(t, gif(65_535, 65_535), /pixels/)
    await isRefused(t, gif(0, 4), /./)
  })
  t.test('no frame, an unknown block, a bad LZW code size', async t => {
    await isRefused(t, gif(4, 4, { frames: 0 }), /./, 'no frame')
    await isRefused(t, Buffer.concat([sample.subarray(0, -1), Buffer.from([0x99, 0x3b])]), /./, 'an unknown block')
    const lzwAt = sample.length - 1 - 5
    const badLzw = Buffer.from(sample)
    badLzw[lzwAt] = 12
    await isRefused(t, badLzw, /./, 'LZW code size 12')
    await isRefused(t, Buffer.concat([Buffer.from('GIF88a'), sample.subarray(6)]), /./, 'an unknown version')
  })
})

t.test('WebP', async t => {
  t.test('a RIFF size that is not the length of the data', async t => {
    for (const delta of [-2, -1, 1, 2, 0x7fffffff]) {
      const forged = Buffer.from(webp.lossless)
      forged.writeUInt32LE((forged.readUInt32LE(4) + delta) >>> 0, 4)
      await isRefused(t, forged, /./, `size ${delta > 0 ? '+' : ''}${delta}`)
    }
  })
  t.test('a chunk size that points past the end', async t => {
    const forged = Buffer.from(webp.alpha)
    forged.writeUInt32LE(0xfffffff0, forged.indexOf('ALPH') + 4)
    await isRefused(t, forged, /./)
  })
  t.test('a declared size over MAX_PIXELS', async t => {
    const [vp8x, ...rest] = webpChunks(webp.animated)
    const canvas = Buffer.from(vp8x[1])
    canvas.writeUIntLE(2 ** 24 - 1, 4, 3)
    canvas.writeUIntLE(2 ** 24 - 1, 7, 3)
    await isRefused(t, webpOf(['VP8X', canvas], ...rest), /pixels/)
  })
  t.test('chunks that do not make an image', async t => {
    const [vp8x, alph, vp8] = webpChunks(webp.alpha)
    const [, anim, anmf] = webpChunks(webp.animated)
    const cases: Array<[string, Array<[string, Buffer]>]> = [
      ['no chunk', []],
      ['an unknown first chunk', [['ABCD', Buffer.alloc(2)], vp8]],
      ['two bitstreams', [vp8, vp8]],
      ['VP8X without a bitstream', [vp8x, alph]],
      ['VP8X that says animated, without frames', [['VP8X', Buffer.from([0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0])], anim]],
      ['VP8X with a canvas larger than its image', [['VP8X', Buffer.from([0x10, 0, 0, 0, 1, 0, 0, 0, 0, 0])], alph, vp8]],
      ['an animation frame outside the canvas (x = 2 on a canvas 1 wide)', [['VP8X', Buffer.from([0x12, 0, 0, 0, 0, 0, 0, 0, 0, 0])], anim,
        ['ANMF', Buffer.concat([Buffer.from([1, 0, 0]), anmf[1].subarray(3)])]]],
      ['a VP8 that is not a key frame', [['VP8 ', Buffer.concat([Buffer.from([vp8[1][0] | 1]), vp8[1].subarray(1)])]]],
      ['a VP8 without its start code', [['VP8 ', Buffer.concat([vp8[1].subarray(0, 3), Buffer.from([0, 0, 0]), vp8[1].subarray(6)])]]],
      ['a VP8 whose first partition is longer than the chunk', [['VP8 ', Buffer.concat([Buffer.from([0xf0, 0xff, 0xff]), vp8[1].subarray(3)])]]],
      ['a VP8L without its signature', [['VP8L', Buffer.concat([Buffer.from([0x2e]), webpChunks(webp.lossless)[0][1].subarray(1)])]]]
    ]
    for (const [name, chunks] of cases) await isRefused(t, webpOf(...chunks), /./, name)
  })
})

t.test('formats that are no longer accepted, and what is no image', async t => {
  for (const [name, bytes] of Object.entries({ bmp, tiff, ico, avif })) {
    await isRefused(t, bytes, /PNG, JPEG, GIF or WebP/, name)
  }
  await isRefused(t, Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="1" height="1"/>'), /PNG, JPEG, GIF or WebP/, 'SVG')
  await isRefused(t, Buffer.alloc(0), /PNG, JPEG, GIF or WebP/, 'nothing')
  await isRefused(t, Buffer.from('just some text'), /PNG, JPEG, GIF or WebP/, 'text')
})
