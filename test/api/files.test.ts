import { randomBytes } from 'node:crypto'
import fc from 'fast-check'
import t from 'tap'
import { build } from '../helper.js'

/**
 * Plone's File (content-types/file): bytes kept in a PostgreSQL large object,
 * served a slice at a time as an attachment, with ranges (a video seeks);
 * replaced and deleted without leaving a large object behind.
 */
const upload = (bytes: Buffer, filename: string, contentType: string): Record<string, string> =>
  ({ data: bytes.toString('base64'), encoding: 'base64', filename, 'content-type': contentType })

/** What a `Range` header asks of `size` bytes, worked out from RFC 9110 apart from the service's code: null = the whole file, 'none' = 416. */
function oracle (header: string, size: number): [number, number] | null | 'none' {
  const single = /^bytes=(\d*)-(\d*)$/.exec(header)
  if (single === null || (single[1] === '' && single[2] === '')) return null
  if (single[1] === '') {
    const n = Number(single[2])
    return n === 0 || size === 0 ? 'none' : [Math.max(0, size - n), size - 1]
  }
  const first = Number(single[1])
  const last = single[2] === '' ? size - 1 : Number(single[2])
  if (last < first) return null
  return first >= size ? 'none' : [first, Math.min(last, size - 1)]
}

t.test('files', async t => {
  const { app, call, inject, tokenFor } = await build(t, { env: { FILE_MAX_BYTES: String(600 * 1024) } })
  const admin = await tokenFor('admin')
  const largeObjects = async (): Promise<number> => (await app.db.query<{ n: number }>('SELECT count(*)::int AS n FROM pg_largeobject_metadata')).rows[0].n
  const get = async (url: string, headers: Record<string, string> = {}, method: 'GET' | 'HEAD' = 'GET'): Promise<{ status: number, headers: Record<string, unknown>, body: Buffer, json: () => any }> => {
    const res = await inject({ method, url, headers })
    return { status: res.statusCode, headers: res.headers, body: res.rawPayload, json: () => res.json() }
  }
  const bytes = randomBytes(300 * 1024) // more than a slice (256 KiB): the download reads two
  const before = await largeObjects()
  const created = await call('POST', '/', { '@type': 'File', id: 'report', title: 'Report', file: upload(bytes, 'Résumé "final"\r\n.pdf', 'application/pdf') }, admin)
  t.equal(created.statusCode, 201, created.body)
  t.equal(await largeObjects(), before + 1, 'one large object')
  t.equal((await call('POST', '/report/@workflow/publish', {}, admin)).statusCode, 200)

  t.test('served whole as an attachment, its name safe in the header', async t => {
    const file = (await call('GET', '/report')).json().file
    t.same(file, { filename: 'Résumé "final"\r\n.pdf', 'content-type': 'application/pdf', size: bytes.length, download: 'http://localhost:80/report/@@download/file' })
    const res = await get('/report/@@download/file')
    t.equal(res.status, 200)
    t.ok(res.body.equals(bytes), 'the same bytes')
    t.equal(res.headers['content-type'], 'application/pdf')
    t.equal(res.headers['content-length'], String(bytes.length))
    t.equal(res.headers['accept-ranges'], 'bytes')
    t.equal(res.headers['content-disposition'], 'attachment; filename="R_sum___final___.pdf"; filename*=UTF-8\'\'R%C3%A9sum%C3%A9%20%22final%22%0D%0A.pdf')
    const head = await get('/report/@@download/file', {}, 'HEAD')
    t.same([head.status, head.headers['content-length'], head.body.length], [200, String(bytes.length), 0], 'HEAD: the length, no byte')
    const shown = await get('/report/@@display-file/file')
    t.match(shown.headers['content-disposition'], /^inline; /, 'a PDF is shown')
    t.ok(shown.body.equals(bytes))
  })

  t.test('ranges as RFC 9110 reads them, against an oracle', async t => {
    const size = bytes.length
    const position = fc.oneof(fc.integer({ min: 0, max: size + 10 }), fc.constantFrom(0, 1, size - 1, size, size + 1, 2 ** 53))
    const header = fc.oneof(
      fc.tuple(position, position).map(([a, b]) => `bytes=${a}-${b}`),
      position.map(a => `bytes=${a}-`),
      position.map(n => `bytes=-${n}`),
      fc.constantFrom('bytes=-', 'bytes=0-1,5-6', 'items=0-1', 'bytes=a-b', 'bytes= 1-2', 'bytes=1-2-3', '')
    )
    await fc.assert(fc.asyncProperty(header, async range => {
      const res = await get('/report/@@download/file', { range })
      const expected = oracle(range, size)
      if (expected === 'none') {
        if (res.status !== 416 || res.headers['content-range'] !== `bytes */${size}` || res.json().type !== 'RangeNotSatisfiable') throw new Error(`${range}: ${res.status}`)
      } else if (expected === null) {
        if (res.status !== 200 || !res.body.equals(bytes)) throw new Error(`${range}: ${res.status}, expected the whole file`)
      } else {
        const [first, last] = expected
        if (res.status !== 206 || res.headers['content-range'] !== `bytes ${first}-${last}/${size}` || !res.body.equals(bytes.subarray(first, last + 1))) {
          throw new Error(`${range}: ${res.status} ${String(res.headers['content-range'])}, expected ${first}-${last}`)
        }
      }
    }), { numRuns: 150 })
    t.pass('150 ranges')
  })

  t.test('a type a browser would run is never shown; a declared type that is not one is octet-stream', async t => {
    const page = await call('POST', '/', { '@type': 'File', id: 'page', title: 'Page', file: upload(Buffer.from('<script>alert(1)</script>'), 'x.html', 'text/html') }, admin)
    t.equal(page.statusCode, 201)
    t.match((await get('/page/@@display-file/file', { authorization: `Bearer ${admin}` })).headers['content-disposition'], /^attachment; /)
    const odd = await call('POST', '/', { '@type': 'File', id: 'odd', title: 'Odd', file: upload(Buffer.from('x'), 'x', 'text/html\r\nSet-Cookie: a=b') }, admin)
    t.equal(odd.statusCode, 201)
    const res = await get('/odd/@@download/file', { authorization: `Bearer ${admin}` })
    t.equal(res.headers['content-type'], 'application/octet-stream')
    t.notOk('set-cookie' in res.headers)
    t.equal((await get('/odd/@@download/file')).status, 401, 'a private file is not served to anonymous callers')
    t.equal((await get('/odd/@@download/title', { authorization: `Bearer ${admin}` })).status, 404, 'a field that is no file')
    t.equal((await get('/odd/@@display-file/nosuch', { authorization: `Bearer ${admin}` })).status, 404)
  })

  t.test('sent back as read, a file stays; replaced or cleared or deleted, no large object is left', async t => {
    const read = (await call('GET', '/report', undefined, admin)).json()
    t.equal((await call('PATCH', '/report', read, admin)).statusCode, 204)
    t.ok((await get('/report/@@download/file')).body.equals(bytes), 'the same bytes')
    const count = await largeObjects()
    const replacement = randomBytes(1000)
    t.equal((await call('PATCH', '/report', { file: upload(replacement, 'b.bin', 'application/octet-stream') }, admin)).statusCode, 204)
    t.equal(await largeObjects(), count, 'the replaced large object is gone')
    t.ok((await get('/report/@@download/file')).body.equals(replacement))
    t.equal((await call('PATCH', '/report', { title: 'Report, again' }, admin)).statusCode, 204)
    t.equal(await largeObjects(), count, 'an edit of another field keeps the file as it is')
    t.equal((await call('DELETE', '/report', undefined, admin)).statusCode, 204)
    t.equal(await largeObjects(), count - 1, 'a deleted object\'s file is gone')
  })

  t.test('a file over FILE_MAX_BYTES is refused, nothing written; @import keeps files too', async t => {
    const count = await largeObjects()
    const big = await call('POST', '/', { '@type': 'File', title: 'Big', file: upload(randomBytes(600 * 1024 + 1), 'big.bin', 'application/octet-stream') }, admin)
    t.equal(big.statusCode, 413)
    t.equal(big.json().type, 'PayloadTooLarge')
    t.equal(await largeObjects(), count)
    const imported = await call('POST', '/@import', { items: [{ '@type': 'File', id: 'slides', title: 'Slides', file: upload(Buffer.from('slides'), 'slides.txt', 'text/plain') }] }, admin)
    t.equal(imported.statusCode, 201, imported.body)
    t.equal((await get('/slides/@@download/file', { authorization: `Bearer ${admin}` })).body.toString(), 'slides')
  })
})
