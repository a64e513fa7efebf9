import { crc32, deflateSync } from 'node:zlib'
import t from 'tap'
import { build, talkBody } from '../helper.js'

const IMAGE_MAX_BYTES = 2000
type Tap = Pick<typeof t, 'equal'>

function chunk (type: string, data: Buffer): Buffer {
  const length = Buffer.alloc(4)
  length.writeUInt32BE(data.length)
  const body = Buffer.concat([Buffer.from(type, 'latin1'), data])
  const crc = Buffer.alloc(4)
  crc.writeUInt32BE(crc32(body))
  return Buffer.concat([length, body, crc])
}

/**
 * A real PNG (8-bit RGB, every pixel a different colour). `totalBytes` pads
 * it with a text chunk to exactly that size.
 */
function png (width: number, height: number, totalBytes?: number): Buffer {
  const header = Buffer.alloc(13)
  header.writeUInt32BE(width, 0)
  header.writeUInt32BE(height, 4)
  header.set([8, 2, 0, 0, 0], 8) // bit depth 8, colour type RGB, deflate, no filter, no interlace
  const rows = Array.from({ length: height }, (_, y) =>
    Buffer.from([0, ...Array.from({ length: width }, (_, x) => [x * 40, y * 40, 200]).flat()]))
  const parts = [Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk('IHDR', header), chunk('IDAT', deflateSync(Buffer.concat(rows)))]
  const end = chunk('IEND', Buffer.alloc(0))
  const size = parts.reduce((n, p) => n + p.length, 0) + end.length
  if (totalBytes !== undefined) parts.push(chunk('tEXt', Buffer.from('Comment\0'.padEnd(totalBytes - size - 12, '.'), 'latin1')))
  return Buffer.concat([...parts, end])
}

const upload = (bytes: Buffer, filename = 'portrait.png', contentType = 'image/png'): Record<string, string> =>
  ({ data: bytes.toString('base64'), encoding: 'base64', filename, 'content-type': contentType })

t.test('images', async t => {
  const { app, call, inject, tokenFor } = await build(t, { env: { IMAGE_MAX_BYTES: String(IMAGE_MAX_BYTES) } })
  const jane = await tokenFor('jane')
  const pathOf = (url: unknown): string => new URL(String(url)).pathname
  const talks = async (): Promise<number> => (await app.db.query<{ n: number }>("SELECT count(*) AS n FROM content WHERE portal_type = 'talk'")).rows[0].n
  const download = async (url: string, token?: string): Promise<{ statusCode: number, type: unknown, bytes: Buffer }> => {
    const res = await inject({ method: 'GET', url: pathOf(url), headers: token !== undefined ? { authorization: `Bearer ${token}` } : {} })
    return { statusCode: res.statusCode, type: res.headers['content-type'], bytes: res.rawPayload }
  }
  /** Asserts that a create was refused with an error on `image`, and nothing stored. */
  async function refused (t: Tap, image: Record<string, string>, status: number): Promise<void> {
    const before = await talks()
    const res = await call('POST', '/talks', talkBody({ image }), jane)
    t.equal(res.statusCode, status, res.body)
    if (status === 400) t.equal(res.json().errors[0].field, 'image')
    t.equal(await talks(), before, 'nothing was stored')
  }

  t.test('a PNG is stored, described and served', async t => {
    const bytes = png(3, 2)
    // The claimed content type is not trusted: the bytes decide.
    const created = await call('POST', '/talks', talkBody({ image: upload(bytes, 'me.png', 'image/jpeg') }), jane)
    t.equal(created.statusCode, 201, created.body)
    const url = String(created.headers.location)
    const image = (await call('GET', pathOf(url), undefined, jane)).json().image
    const { download: original, scales, ...stored } = image
    t.same(stored, { filename: 'me.png', 'content-type': 'image/png', size: bytes.length, width: 3, height: 2 })
    t.match(original, new RegExp(`^${url}/@@images/image-3-[0-9a-f]{16}\\.png$`), 'the original by a versioned name, as Plone 6 names it')
    t.ok(Object.values(scales).every((scale: any) => scale.width === 3 && scale.height === 2 && scale.download === original), 'no scale is larger than the original: each is it')
    t.equal((await download(`${url}/@@download/image`, jane)).statusCode, 200, '@@download serves it too')
    const served = await download(image.download, jane)
    t.equal(served.statusCode, 200)
    t.equal(served.type, 'image/png')
    t.ok(served.bytes.equals(bytes), 'the same bytes come back')
    t.equal((await download(image.download)).statusCode, 401, 'a private talk\'s image is not served to anonymous callers')
  })

  t.test('sending the GET body back keeps the image; null removes it', async t => {
    const bytes = png(4, 4)
    const url = String((await call('POST', '/talks', talkBody({ image: upload(bytes) }), jane)).headers.location)
    const before = (await call('GET', pathOf(url), undefined, jane)).json()
    t.equal((await call('PATCH', pathOf(url), before, jane)).statusCode, 204)
    t.same((await call('GET', pathOf(url), undefined, jane)).json().image, before.image, 'the same image by the same names: they follow its bytes, which the edit kept')
    t.ok((await download(before.image.download, jane)).bytes.equals(bytes))
    const replaced = png(5, 1)
    t.equal((await call('PATCH', pathOf(url), { image: upload(replaced, 'wide.png') }, jane)).statusCode, 204)
    t.match((await call('GET', pathOf(url), undefined, jane)).json().image, { filename: 'wide.png', width: 5, height: 1, size: replaced.length })
    t.ok((await download((await call('GET', pathOf(url), undefined, jane)).json().image.download, jane)).bytes.equals(replaced))
    t.equal((await call('PATCH', pathOf(url), { image: null }, jane)).statusCode, 204)
    t.equal((await call('GET', pathOf(url), undefined, jane)).json().image, null)
    t.equal((await download(before.image.download, jane)).statusCode, 404)
  })

  t.test('what is not an image is refused', async t => {
    await refused(t, upload(Buffer.from('just some text, not a picture'), 'fake.png'), 400)
    const svg = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><script>alert(1)</script></svg>')
    await refused(t, upload(svg, 'drawing.svg', 'image/svg+xml'), 400)
    await refused(t, { ...upload(png(1, 1)), encoding: 'hex' }, 400)
  })

  t.test(`images up to IMAGE_MAX_BYTES (${IMAGE_MAX_BYTES}) are accepted`, async t => {
    const largest = png(3, 3, IMAGE_MAX_BYTES)
    t.equal(largest.length, IMAGE_MAX_BYTES)
    const res = await call('POST', '/talks', talkBody({ image: upload(largest) }), jane)
    t.equal(res.statusCode, 201, res.body)
    t.equal(res.json().image.size, IMAGE_MAX_BYTES)
    await refused(t, upload(png(3, 3, IMAGE_MAX_BYTES + 1)), 413)
  })
})
