import t from 'tap'
import { deflateSync } from 'node:zlib'
import { build, talkBody } from '../helper.js'
import { avif, bmp, gif, ico, jfif, jpeg, png, pngHeader, pngOf, tiff, webp, upload } from '../image-samples.js'

/**
 * Uploads through the API (issue 11, defect 10): a whole PNG, JPEG, GIF or
 * WebP is stored and served as sent; an image cut short, corrupted, followed
 * by something else, too large in pixels, or of another format is a 400 on
 * the `image` field, and nothing is written.
 */
const { app, call, tokenFor } = await build(t)
const jane = await tokenFor('jane')
const stored = async (): Promise<{ talks: number, blobs: number }> => {
  const { rows } = await app.db.query<{ talks: number, blobs: number }>(
    "SELECT (SELECT count(*) FROM content WHERE portal_type = 'talk')::int AS talks, (SELECT count(*) FROM blobs)::int AS blobs")
  return rows[0]
}

t.test('a whole image of every accepted format is stored, described and served as sent', async t => {
  const samples: Array<[string, Buffer, string, number, number]> = [
    ['PNG', png(3, 2), 'image/png', 3, 2],
    ['PNG, interlaced', png(5, 4, { colourType: 6, bitDepth: 16, interlaced: true }), 'image/png', 5, 4],
    ['JPEG', jpeg(16, 8, { before: [jfif], restartInterval: 1 }), 'image/jpeg', 16, 8],
    ['JPEG with a gain map after it', Buffer.concat([jpeg(16, 8), jpeg(8, 8)]), 'image/jpeg', 16, 8],
    ['GIF', gif(2, 2, { frames: 2, loop: true }), 'image/gif', 2, 2],
    ['WebP, lossy', webp.lossy, 'image/webp', 1, 1],
    ['WebP, lossless', webp.lossless, 'image/webp', 1, 1],
    ['WebP, animated', webp.animated, 'image/webp', 1, 1]
  ]
  for (const [name, bytes, type, width, height] of samples) {
    const res = await call('POST', '/talks', talkBody({ title: name, image: upload(bytes, 'sample') }), jane)
    t.equal(res.statusCode, 201, `${name}: ${res.body}`)
    t.match(res.json().image, { 'content-type': type, width, height, size: bytes.length }, name)
    const served = await app.inject({ method: 'GET', url: new URL(res.json().image.download).pathname, headers: { authorization: `Bearer ${jane}` } })
    t.equal(served.headers['content-type'], type)
    t.ok(served.rawPayload.equals(bytes), `${name}: the same bytes come back`)
  }
})

t.test('an image that is not whole, or not accepted, is a 400 on `image`, and nothing is written', async t => {
  const before = await stored()
  const hostile: Array<[string, Buffer]> = []
  const samples: Array<[string, Buffer]> = [['PNG', png(3, 2)], ['JPEG', jpeg(16, 8, { restartInterval: 1 })], ['GIF', gif(1, 1)], ['WebP', webp.lossy]]
  for (const [name, bytes] of samples) {
    // Every prefix: an upload cut anywhere, from the signature to the last byte.
    for (let length = 1; length < bytes.length; length++) hostile.push([`${name} cut to ${length} of ${bytes.length} bytes`, bytes.subarray(0, length)])
    hostile.push([`${name} with trailing garbage`, Buffer.concat([bytes, Buffer.from('<script>alert(1)</script>')])])
  }
  const wrongCrc = png(3, 2)
  wrongCrc[wrongCrc.indexOf('IDAT') + 6] ^= 0xff
  hostile.push(['PNG with a wrong CRC', wrongCrc])
  const pastTheEnd = png(3, 2)
  pastTheEnd.writeUInt32BE(0x7fffffff, pastTheEnd.indexOf('IDAT') - 4)
  hostile.push(['PNG with a chunk length past the end', pastTheEnd])
  hostile.push(['PNG declaring 100000×100000 pixels', pngOf(['IHDR', pngHeader(100_000, 100_000, 8, 2)], ['IDAT', deflateSync(Buffer.alloc(16))], ['IEND', Buffer.alloc(0)])])
  hostile.push(['PNG bomb: 4×4 declared, 64 MiB inflated', pngOf(['IHDR', pngHeader(4, 4, 8, 0)], ['IDAT', deflateSync(Buffer.alloc(64 * 1024 * 1024))], ['IEND', Buffer.alloc(0)])])
  hostile.push(['JPEG declaring 65535×65535 pixels', jpeg(65_535, 65_535, { blocks: ['00'] })])
  hostile.push(['GIF declaring 65535×65535 pixels', gif(65_535, 65_535)])
  for (const [name, bytes] of Object.entries({ BMP: bmp, TIFF: tiff, ICO: ico, AVIF: avif })) hostile.push([`${name} (no longer accepted)`, bytes])

  for (const [name, bytes] of hostile) {
    const res = await call('POST', '/talks', talkBody({ title: name, image: upload(bytes) }), jane)
    if (res.statusCode !== 400 || res.json().errors?.[0]?.field !== 'image') t.fail(`${name}: ${res.statusCode} ${res.body}`)
  }
  t.pass(`${hostile.length} hostile uploads refused`)
  t.same(await stored(), before, 'nothing was written')

  const one = await call('POST', '/talks', talkBody({ image: upload(png(3, 2).subarray(0, 33)) }), jane)
  t.same(one.json().errors, [{ field: 'image', message: one.json().errors[0].message, error: 'ValidationError' }])
  t.match(one.json().errors[0].message, /PNG/, 'the message says what is wrong')
})

t.test('a change of a stored image is refused the same way and keeps the image', async t => {
  const bytes = png(2, 2)
  const url = new URL(String((await call('POST', '/talks', talkBody({ image: upload(bytes) }), jane)).headers.location)).pathname
  const res = await call('PATCH', url, { image: upload(jpeg(8, 8).subarray(0, -4)) }, jane)
  t.equal(res.statusCode, 400)
  t.equal(res.json().errors[0].field, 'image')
  const image = (await call('GET', url, undefined, jane)).json().image
  t.match(image, { 'content-type': 'image/png', width: 2, height: 2, size: bytes.length })
})
