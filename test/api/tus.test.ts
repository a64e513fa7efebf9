import { createHash, randomBytes } from 'node:crypto'
import { request as httpRequest } from 'node:http'
import type { AddressInfo } from 'node:net'
import fc from 'fast-check'
import t from 'tap'
import { build } from '../helper.js'
import { png } from '../image-samples.js'

/**
 * Resumable uploads (TUS 1.0.0) as plone.restapi documents them
 * (docs/source/endpoints/tusupload.md and its recorded examples), and as a
 * client on a bad network meets them: bytes in any number of PATCHes, a
 * connection dropped in the middle of one, two PATCHes racing, uploads given
 * up or left to expire; nothing half-made and no large object left behind.
 */
const TUS = { 'tus-resumable': '1.0.0' }
const b64 = (text: string): string => Buffer.from(text).toString('base64')
const sha = (bytes: Buffer): string => createHash('sha256').update(bytes).digest('hex')

t.test('resumable uploads', async t => {
  const { app, call, inject, tokenFor } = await build(t, { env: { UPLOAD_MAX_BYTES: String(8 * 1024 * 1024), IMAGE_MAX_BYTES: String(64 * 1024), UPLOAD_MAX_OPEN: '4' } })
  const admin = await tokenFor('admin')
  const member = await tokenFor('member')
  const other = await tokenFor('other', ['Member', 'Contributor', 'Editor'])
  const auth = (token: string): Record<string, string> => ({ authorization: `Bearer ${token}` })
  const count = async (sql: string): Promise<number> => (await app.db.query<{ n: number }>(sql)).rows[0].n
  const largeObjects = async (): Promise<number> => await count('SELECT count(*)::int AS n FROM pg_largeobject_metadata')
  const openUploads = async (): Promise<number> => await count('SELECT count(*)::int AS n FROM uploads')
  t.equal((await call('POST', '/', { '@type': 'folder', id: 'media', title: 'Media' }, admin)).statusCode, 201)

  const open = async (path: string, length: number | string, metadata: string, token = admin, headers: Record<string, string> = TUS): Promise<{ status: number, location: string, json: () => any, headers: Record<string, unknown> }> => {
    const res = await inject({ method: 'POST', url: `${path}/@tus-upload`, headers: { ...headers, ...auth(token), 'upload-length': String(length), 'upload-metadata': metadata } })
    return { status: res.statusCode, location: String(res.headers.location ?? ''), json: () => res.json(), headers: res.headers }
  }
  /** The upload's path from its Location (the service answers absolute URLs). */
  const pathOf = (location: string): string => new URL(location).pathname
  const patch = async (location: string, offset: number, bytes: Buffer, token = admin, headers: Record<string, string> = {}): Promise<{ status: number, offset: string, location: string, json: () => any }> => {
    const res = await inject({ method: 'PATCH', url: pathOf(location), payload: bytes, headers: { ...TUS, ...auth(token), 'content-type': 'application/offset+octet-stream', 'upload-offset': String(offset), ...headers } })
    return { status: res.statusCode, offset: String(res.headers['upload-offset'] ?? ''), location: String(res.headers.location ?? ''), json: () => res.json() }
  }
  const head = async (location: string, token = admin): Promise<{ status: number, offset: number, length: number }> => {
    const res = await inject({ method: 'HEAD', url: pathOf(location), headers: { ...TUS, ...auth(token) } })
    return { status: res.statusCode, offset: Number(res.headers['upload-offset']), length: Number(res.headers['upload-length']) }
  }
  const download = async (objectUrl: string): Promise<Buffer> => (await inject({ method: 'GET', url: `${pathOf(objectUrl)}/@@download/file`, headers: auth(admin) })).rawPayload

  t.test('plone.restapi\'s recorded exchange: options, post, patch in two, head, the object', async t => {
    const lobs = await largeObjects()
    const options = await inject({ method: 'OPTIONS', url: '/media/@tus-upload', headers: auth(admin) })
    t.equal(options.statusCode, 204)
    t.match(options.headers, { 'tus-resumable': '1.0.0', 'tus-version': '1.0.0', 'tus-extension': 'creation,expiration,termination', 'tus-max-size': String(8 * 1024 * 1024) })
    const created = await open('/media', 8, `filename ${b64('test.txt')},content-type ${b64('text/plain')}`)
    t.equal(created.status, 201)
    t.match(created.location, /^http:\/\/localhost:80\/media\/@tus-upload\/[0-9a-f-]{36}$/)
    t.equal(created.headers['tus-resumable'], '1.0.0')
    t.ok(Date.parse(String(created.headers['upload-expires'])) > Date.now(), 'Upload-Expires: a date to come')
    const first = await patch(created.location, 0, Buffer.from('abc'))
    t.same([first.status, first.offset, first.location], [204, '3', ''], 'a part: the offset, no object yet')
    t.same(await head(created.location), { status: 200, offset: 3, length: 8 })
    const last = await patch(created.location, 3, Buffer.from('defgh'))
    t.same([last.status, last.offset], [204, '8'])
    t.equal(last.location, 'http://localhost:80/media/test-txt', 'the Location of the new File, its id from the file name')
    const file = (await call('GET', pathOf(last.location), undefined, admin)).json()
    t.match(file, { '@type': 'File', title: 'test.txt', file: { filename: 'test.txt', 'content-type': 'text/plain', size: 8 } })
    t.equal((await download(last.location)).toString(), 'abcdefgh')
    t.equal(await openUploads(), 0, 'the upload ended')
    t.equal(await largeObjects(), lobs + 1, 'its large object is the file\'s: handed over, not copied')
    t.equal((await head(created.location)).status, 404, 'an ended upload is not found')
  })

  t.test('@tus-replace: the object\'s file replaced, the old bytes gone', async t => {
    const made = await open('/media', 5, `filename ${b64('old.bin')}`)
    const { location } = await patch(made.location, 0, Buffer.from('12345'))
    const lobs = await largeObjects()
    const replace = await inject({ method: 'POST', url: `${pathOf(location)}/@tus-replace`, headers: { ...TUS, ...auth(admin), 'upload-length': '4', 'upload-metadata': `filename ${b64('new.bin')},content-type ${b64('application/x-new')}` } })
    t.equal(replace.statusCode, 201)
    t.match(String(replace.headers.location), new RegExp(`^${location}/@tus-upload/[0-9a-f-]{36}$`), 'the upload is under @tus-upload, as plone.restapi answers')
    const ended = await patch(String(replace.headers.location), 0, Buffer.from('wxyz'))
    t.same([ended.status, ended.location], [204, location])
    t.equal((await download(location)).toString(), 'wxyz')
    t.match((await call('GET', pathOf(location), undefined, admin)).json().file, { filename: 'new.bin', 'content-type': 'application/x-new', size: 4 })
    t.equal(await largeObjects(), lobs, 'one large object for the file: the old one unlinked')
  })

  t.test('an image: an Image with its scales, its bytes kept as an image\'s', async t => {
    const bytes = png(300, 200)
    const lobs = await largeObjects()
    const made = await open('/media', bytes.length, `filename ${b64('photo.png')},content-type ${b64('image/png')}`)
    t.equal(made.status, 201)
    const ended = await patch(made.location, 0, bytes)
    t.equal(ended.status, 204, JSON.stringify(ended))
    const image = (await call('GET', pathOf(ended.location), undefined, admin)).json()
    t.match(image, { '@type': 'Image', image: { filename: 'photo.png', 'content-type': 'image/png', width: 300, height: 200, size: bytes.length } })
    t.ok(image.image.scales.preview !== undefined, 'scales')
    t.equal(await largeObjects(), lobs, 'no large object left: an image is kept in blobs')
    const tooLarge = await open('/media', 64 * 1024 + 1, `content-type ${b64('image/png')}`)
    t.same([tooLarge.status, tooLarge.json().type], [413, 'PayloadTooLarge'], 'an image is bounded by IMAGE_MAX_BYTES when it is opened')
  })

  t.test('an image field named by an upload that is not an image: refused, the upload kept for the client to give up', async t => {
    const made = await open('/media', 4, `@type ${b64('Image')}`)
    const ended = await patch(made.location, 0, Buffer.from('nope'))
    t.same([ended.status, ended.json().type], [400, 'BadRequest'])
    t.equal((await head(made.location)).offset, 4, 'the bytes are still there')
    t.equal((await inject({ method: 'DELETE', url: pathOf(made.location), headers: { ...TUS, ...auth(admin) } })).statusCode, 204)
    t.equal((await head(made.location)).status, 404)
  })

  t.test('refused before a byte is taken, in the contract\'s error shape', async t => {
    const cases: Array<[string, () => Promise<{ status: number, json: () => any }>, number]> = [
      ['no Tus-Resumable', async () => await open('/media', 3, '', admin, {}), 412],
      ['another version', async () => await open('/media', 3, '', admin, { 'tus-resumable': '0.2.2' }), 412],
      ['past UPLOAD_MAX_BYTES', async () => await open('/media', 8 * 1024 * 1024 + 1, ''), 413],
      ['a type the folder does not take', async () => await open('/media', 3, `@type ${b64('Plone Site')}`), 403],
      ['a type without a file', async () => await open('/media', 3, `@type ${b64('Document')}`), 400],
      ['a field that is not a file', async () => await open('/media', 3, `fieldname ${b64('title')}`), 400],
      ['anonymous', async () => await inject({ method: 'POST', url: '/media/@tus-upload', headers: { ...TUS, 'upload-length': '3' } }).then(r => ({ status: r.statusCode, json: () => r.json() })), 401],
      ['a Member who may not add here', async () => await open('/media', 3, '', member), 403],
      ['not a folder', async () => await open('/media/test-txt', 3, ''), 405]
    ]
    for (const [label, send, status] of cases) {
      const res = await send()
      t.equal(res.status, status, label)
      t.match(res.json(), { type: String, message: String }, `${label}: the error shape`)
    }
  })

  t.test('any Upload-Length and Upload-Metadata: 201 or a 400, never more', async t => {
    const opened = await openUploads()
    await fc.assert(fc.asyncProperty(
      fc.oneof(fc.string(), fc.nat().map(String), fc.constantFrom('-1', '1e3', '0x10', ' 5', '5 ', '99999999999999999999', '1.5')),
      fc.oneof(fc.string(), fc.array(fc.tuple(fc.constantFrom('filename', 'FileName', 'content-type', '@type', '__proto__', 'constructor', 'x y'), fc.oneof(fc.string().map(b64), fc.string(), fc.constant(b64('\u0000')), fc.constant(Buffer.from([0xed, 0xa0, 0x80]).toString('base64')))))
        .map(pairs => pairs.map(([k, v]) => `${k} ${v}`).join(','))),
      async (length, metadata) => {
        const res = await open('/media', length, metadata)
        if (res.status === 201) {
          await inject({ method: 'DELETE', url: pathOf(res.location), headers: { ...TUS, ...auth(admin) } })
          return /^\d+$/.test(length)
        }
        return [400, 403, 413].includes(res.status) && typeof res.json().message === 'string'
      }), { numRuns: 150 })
    t.equal(await openUploads(), opened, 'every upload opened was given up')
  })

  t.test('patches refused: wrong offset, wrong type, past the end, someone else\'s upload', async t => {
    const made = await open('/media', 6, `filename ${b64('six.txt')}`, other)
    t.equal(made.status, 201, JSON.stringify(made.status === 201 ? '' : made.json()))
    t.equal((await patch(made.location, 2, Buffer.from('ab'), other)).status, 409, 'not at its offset')
    t.equal((await patch(made.location, 0, Buffer.from('ab'), other, { 'content-type': 'application/json' })).status, 415)
    const past = await patch(made.location, 0, Buffer.from('abcdefgh'), other)
    t.same([past.status, past.json().type], [413, 'PayloadTooLarge'])
    t.equal((await head(made.location, other)).offset, 0, 'nothing of it taken')
    t.equal((await patch(made.location, 0, Buffer.from('ab'), admin)).status, 404, 'another user (even a Manager) is told it does not exist')
    t.equal((await head(made.location, admin)).status, 404)
    const wrongPlace = pathOf(made.location).replace('/media/', '/')
    t.equal((await inject({ method: 'HEAD', url: wrongPlace, headers: { ...TUS, ...auth(other) } })).statusCode, 404, 'nor under another object')
    t.equal((await patch(made.location, 0, Buffer.from('abcdef'), other)).status, 204, 'its owner ends it')
  })

  t.test('a user has at most UPLOAD_MAX_OPEN uploads under way', async t => {
    const made = []
    for (let i = 0; i < 4; i++) made.push(await open('/media', 10, '', other))
    t.same(made.map(m => m.status), [201, 201, 201, 201])
    const fifth = await open('/media', 10, '', other)
    t.same([fifth.status, fifth.json().type], [429, 'TooManyRequests'])
    for (const m of made) t.equal((await inject({ method: 'DELETE', url: pathOf(m.location), headers: { ...TUS, ...auth(other) } })).statusCode, 204)
    t.equal((await open('/media', 10, '', other)).status, 201, 'given up, they no longer count')
    await app.db.query("DELETE FROM uploads WHERE owner = 'other'")
  })

  t.test('expired uploads are not found, and go when another is opened; a deleted folder takes its uploads', async t => {
    const lobs = await largeObjects()
    const made = await open('/media', 10, '')
    await patch(made.location, 0, Buffer.from('12345'))
    await app.db.query("UPDATE uploads SET expires = now() - interval '1 second'")
    t.equal((await head(made.location)).status, 404)
    t.equal((await patch(made.location, 5, Buffer.from('67890'))).status, 404)
    t.equal((await call('POST', '/', { '@type': 'folder', id: 'doomed', title: 'Doomed' }, admin)).statusCode, 201)
    const inDoomed = await open('/doomed', 10, '')
    t.equal(inDoomed.status, 201)
    t.equal(await openUploads(), 1, 'the expired one went when this one was opened')
    t.equal((await call('DELETE', '/doomed', undefined, admin)).statusCode, 204)
    t.equal(await openUploads(), 0)
    t.equal(await largeObjects(), lobs, 'no large object left behind')
  })

  t.test('an ending refused (the object locked by another) keeps the upload; it ends later', async t => {
    const made = await open('/media', 3, `filename ${b64('locked.txt')}`)
    const { location } = await patch(made.location, 0, Buffer.from('one'))
    const replace = await inject({ method: 'POST', url: `${pathOf(location)}/@tus-replace`, headers: { ...TUS, ...auth(admin), 'upload-length': '3' } })
    const editor = await tokenFor('editor', ['Member', 'Editor'])
    t.equal((await call('POST', `${pathOf(location)}/@lock`, {}, editor)).statusCode, 200)
    const refused = await patch(String(replace.headers.location), 0, Buffer.from('two'))
    t.ok(refused.status >= 400 && refused.status < 500, `refused: ${refused.status}`)
    t.equal((await download(location)).toString(), 'one', 'the file as it was')
    t.equal((await call('DELETE', `${pathOf(location)}/@lock`, { force: true }, admin)).statusCode, 200)
    const ended = await patch(String(replace.headers.location), 3, Buffer.alloc(0))
    t.same([ended.status, ended.location], [204, location], 'an empty PATCH at the end ends it')
    t.equal((await download(location)).toString(), 'two')
  })

  t.test('two PATCHes at the same offset: one is taken, the other told 409', async t => {
    const bytes = randomBytes(3 * 1024 * 1024)
    const made = await open('/media', bytes.length, `filename ${b64('race.bin')}`)
    const [a, b] = await Promise.all([patch(made.location, 0, bytes.subarray(0, 2 * 1024 * 1024)), patch(made.location, 0, bytes.subarray(0, 2 * 1024 * 1024))])
    t.same([a.status, b.status].sort(), [204, 409])
    const { offset } = await head(made.location)
    t.equal(offset, 2 * 1024 * 1024, 'the bytes of one, whole')
    const ended = await patch(made.location, offset, bytes.subarray(offset))
    t.equal(sha(await download(ended.location)), sha(bytes))
  })

  t.test('over a real connection, dropped in the middle of PATCHes: resumed from HEAD, the file whole', async t => {
    await app.listen({ port: 0, host: '127.0.0.1' })
    const { port } = app.server.address() as AddressInfo
    /** Sends `bytes` from `offset` and drops the connection after `cut` of them (or sends them all). */
    const send = async (location: string, offset: number, bytes: Buffer, cut: number | null): Promise<void> => await new Promise(resolve => {
      const req = httpRequest({ port, method: 'PATCH', path: pathOf(location), headers: { ...TUS, ...auth(admin), 'content-type': 'application/offset+octet-stream', 'upload-offset': String(offset), 'content-length': String(bytes.length) } })
      req.on('response', res => { res.resume(); res.on('end', resolve) })
      req.on('error', () => resolve())
      if (cut === null) req.end(bytes)
      else req.write(bytes.subarray(0, cut), () => setTimeout(() => { req.destroy(); setTimeout(resolve, 100) }, 50))
    })
    await fc.assert(fc.asyncProperty(
      fc.integer({ min: 1, max: 3 * 1024 * 1024 }),
      fc.array(fc.tuple(fc.double({ min: 0, max: 1, noNaN: true }), fc.boolean()), { minLength: 1, maxLength: 4 }),
      async (size, steps) => {
        const bytes = randomBytes(size)
        const made = await open('/media', size, `filename ${b64('resumed.bin')}`)
        for (const [fraction, dropped] of steps) {
          const { offset } = await head(made.location)
          const rest = bytes.subarray(offset)
          await send(made.location, offset, rest, dropped ? Math.floor(rest.length * fraction) : null)
          if (!dropped) break
        }
        // However the steps went, the client goes on from where the service says, to the end.
        let state = await head(made.location)
        while (state.status === 200) {
          await send(made.location, state.offset, bytes.subarray(state.offset), null)
          state = await head(made.location)
        }
        const files = await app.db.query<{ path: string }>("SELECT path FROM content WHERE data->'file'->>'filename' = 'resumed.bin' ORDER BY created DESC LIMIT 1")
        const got = await download(`http://x${files.rows[0].path}`)
        await call('DELETE', files.rows[0].path, undefined, admin)
        return sha(got) === sha(bytes)
      }), { numRuns: 8 })
    t.equal(await openUploads(), 0)
  })
})
