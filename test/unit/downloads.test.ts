import fc from 'fast-check'
import t from 'tap'
import { mediaType } from '../../core/content/blobs.js'
import { disposition } from '../../plugins/support/downloads.js'

/**
 * What reaches a download's headers from a client's upload (a file name, a
 * declared content type) is any string: neither may break a header, and the
 * UTF-8 name must read back as the name (lone surrogates made well-formed).
 */
t.test('Content-Disposition holds any file name safely, and the whole name in filename*', async t => {
  fc.assert(fc.property(fc.string({ unit: 'binary', maxLength: 300 }), fc.constantFrom('inline' as const, 'attachment' as const), (name, kind) => {
    const header = disposition(kind, name)
    const match = /^(inline|attachment); filename="([\w.-]{1,200})"; filename\*=UTF-8''([A-Za-z0-9%._~-]*)$/.exec(header)
    if (match === null) throw new Error(`not a safe header: ${JSON.stringify(header)}`)
    if (decodeURIComponent(match[3]) !== name.toWellFormed()) throw new Error(`filename* does not read back: ${JSON.stringify(name)}`)
  }), { numRuns: 2000 })
  t.pass('2000 names')
})

t.test('a declared content type is a type/subtype token or octet-stream', async t => {
  fc.assert(fc.property(fc.oneof(fc.string({ unit: 'binary', maxLength: 100 }), fc.constantFrom('text/html\r\nSet-Cookie: a', 'Image/PNG; charset=x', 'a/b/c', '/', 'x/')), declared => {
    const type = mediaType(declared)
    if (!/^[a-z0-9][a-z0-9!#$&^_.+-]*\/[a-z0-9][a-z0-9!#$&^_.+-]*$/.test(type)) throw new Error(`${JSON.stringify(declared)} → ${type}`)
  }), { numRuns: 2000 })
  t.equal(mediaType('Image/PNG; charset=x'), 'image/png')
  t.equal(mediaType('text/html\r\nSet-Cookie: a'), 'application/octet-stream')
  t.equal(mediaType(undefined), 'application/octet-stream')
})
