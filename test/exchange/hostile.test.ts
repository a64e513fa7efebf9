import t from 'tap'
import { execFileSync } from 'node:child_process'
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { ContentTypeRegistry } from '../../core/content/registry.js'
import { contentTypesDir } from '../../core/config/paths.js'
import { readExport } from '../../core/exchange/reader.js'
import { item, PICTURE, uid, writeExport } from './exports.js'

/**
 * Exports that lie (core/exchange/reader.ts): each is read without being
 * trusted and answered with a report — a count, examples and why — and
 * the objects it concerns are left out with what they hold, never half-read.
 */
const types = await ContentTypeRegistry.load([contentTypesDir])
const limits = { jsonMaxBytes: 64 * 1024, maxObjects: 100, imageMaxBytes: 1024 * 1024, fileMaxBytes: 1024 * 1024 }
const read = async (dir: string): Promise<{ ids: string[], problems: Record<string, { count: number, examples: string[] }> }> => {
  const { objects, report } = await readExport(dir, types, limits)
  const problems = Object.fromEntries(report.toJSON().problems.map(p => [p.kind, p]))
  return { ids: objects.map(o => o.id), problems }
}

t.test('a sound export reads whole, parents first, in the exported order', async t => {
  const dir = writeExport([{ data: item(2, 'Document', 'b', 1) }, { data: item(1, 'Folder', 'f', null) }, { data: item(3, 'Document', 'a', 1) }],
    { metadata: { ordering: { [uid(1)]: 0, [uid(2)]: 0, [uid(3)]: 1 } } })
  const { ids, problems } = await read(dir)
  t.same(ids, ['f', 'b', 'a'])
  t.same(problems, {})
})

t.test('malformed JSON, prototype keys, NUL and 10,000 levels of nesting are refused with the object', async t => {
  const deep = '['.repeat(10_000) + ']'.repeat(10_000)
  const dir = writeExport([{ data: item(1, 'Folder', 'f', null) }, { data: item(5, 'Document', 'ok', 1) }], {
    metadata: { _data_files_: [`${uid(1)}/data.json`, `${uid(5)}/data.json`, 'bad/data.json', 'deep/data.json', 'proto/data.json', 'nul/data.json'] },
    files: {
      'content/bad/data.json': '{"@type": "Document", ',
      'content/deep/data.json': `{"@type": "Document", "blocks": ${deep}}`,
      'content/proto/data.json': JSON.stringify(item(6, 'Document', 'p', 1)).replace('{', '{"__proto__": {"polluted": true}, '),
      'content/nul/data.json': JSON.stringify(item(7, 'Document', 'n\u0000', 1, { title: 'a\u0000b' }))
    }
  })
  const { ids, problems } = await read(dir)
  t.same(ids, ['f', 'ok'])
  t.equal(problems['malformed JSON'].count, 1)
  t.equal(problems['untrustworthy JSON'].count, 3, 'nesting, a prototype key and NUL')
  t.equal(({} as Record<string, unknown>).polluted, undefined)
})

t.test('paths that climb out, absolute paths and symbolic links are refused', async t => {
  const outside = writeExport([])
  writeFileSync(join(outside, 'secret.png'), PICTURE)
  const image = (n: number, blobPath: string): Record<string, unknown> => item(n, 'Image', `i${n}`, null, { image: { blob_path: blobPath, 'content-type': 'image/png', filename: 'x.png', size: PICTURE.length } })
  const dir = writeExport([
    { data: image(1, `../../${outside.split('/').pop()!}/secret.png`) },
    { data: image(2, join(outside, 'secret.png')) },
    { data: image(3, `${uid(3)}/image/link.png`) },
    { data: image(4, `${uid(4)}/image/x.png`), blobs: { [`${uid(4)}/image/x.png`]: PICTURE } }
  ], { metadata: { _data_files_: ['../../etc/passwd', '/etc/passwd', `${uid(1)}/data.json`, `${uid(2)}/data.json`, `${uid(3)}/data.json`, `${uid(4)}/data.json`] } })
  mkdirSync(join(dir, 'content', uid(3), 'image'), { recursive: true })
  symlinkSync(join(outside, 'secret.png'), join(dir, 'content', uid(3), 'image', 'link.png'))
  const { ids, problems } = await read(dir)
  t.same(ids, ['i4'])
  t.equal(problems['unsafe path'].count, 5, JSON.stringify(problems))
})

t.test('a data.json that is a link, lies under a folder that is a link, or is a FIFO is refused, and the reader does not wait on the FIFO', async t => {
  const outside = writeExport([{ data: item(11, 'Document', 'elsewhere', null) }])
  const dir = writeExport([{ data: item(14, 'Document', 'sound', null) }], {
    metadata: { _data_files_: [`${uid(11)}/data.json`, `${uid(12)}/data.json`, `${uid(13)}/data.json`, `${uid(14)}/data.json`] }
  })
  // A folder that leads out of the export; a data.json that does; a FIFO, which no writer ever opens.
  symlinkSync(join(outside, 'content', uid(11)), join(dir, 'content', uid(11)))
  mkdirSync(join(dir, 'content', uid(12)))
  symlinkSync(join(outside, 'content', uid(11), 'data.json'), join(dir, 'content', uid(12), 'data.json'))
  mkdirSync(join(dir, 'content', uid(13)))
  execFileSync('mkfifo', [join(dir, 'content', uid(13), 'data.json')])
  const { ids, problems } = await read(dir)
  t.same(ids, ['sound'])
  t.same([problems['unsafe path']?.count, problems['missing file']?.examples], [2, [`content/${uid(13)}/data.json`]], JSON.stringify(problems))
})

t.test('UIDs and ids that collide, unknown types, orphans and bad dates are reported', async t => {
  const dir = writeExport([
    { data: item(1, 'Folder', 'f', null) },
    { data: { ...item(2, 'Document', 'same', 1) } },
    { data: { ...item(3, 'Document', 'same', 1) } },
    { data: { ...item(4, 'Document', 'twin', 1), UID: uid(2) }, folder: uid(4) },
    { data: item(5, 'PloneFormGen', 'form', 1) },
    { data: item(6, 'Document', 'under-form', 5) },
    { data: item(7, 'Document', 'when', 1, { created: 'yesterday' }) },
    { data: item(8, 'Document', 'bad id!', 1) },
    { data: item(9, 'Document', 'x', 1, { UID: 'not-a-uid' }) }
  ])
  const { ids, problems } = await read(dir)
  t.same(ids, ['f', 'same'])
  t.equal(problems['duplicate id'].count, 1)
  t.equal(problems['duplicate UID'].count, 1)
  t.same(problems['type not in this service: PloneFormGen'].examples, [`${uid(5)}/data.json`], 'a type the service lacks: counted with examples')
  t.equal(problems['parent not imported'].count, 1, 'what it held is reported, not dropped')
  t.equal(problems['bad date'].count, 1)
  t.equal(problems['bad id'].count, 1)
  t.equal(problems['bad UID'].count, 1)
})

t.test('missing, truncated and oversized blobs and huge files leave their object out', async t => {
  const image = (n: number, size: number, bytes?: Buffer): { data: Record<string, unknown>, blobs?: Record<string, Buffer> } => ({
    data: item(n, 'Image', `i${n}`, null, { image: { blob_path: `${uid(n)}/image/x.png`, 'content-type': 'image/png', filename: 'x.png', size } }),
    ...(bytes !== undefined ? { blobs: { [`${uid(n)}/image/x.png`]: bytes } } : {})
  })
  const big = Buffer.alloc(limits.imageMaxBytes + 1)
  const dir = writeExport([image(1, PICTURE.length), image(2, PICTURE.length, PICTURE.subarray(0, 10)), image(3, big.length, big), image(4, PICTURE.length, PICTURE),
    { data: item(5, 'Document', 'huge', null, { description: 'x'.repeat(limits.jsonMaxBytes) }) }])
  const { ids, problems } = await read(dir)
  t.same(ids, ['i4'])
  t.equal(problems['missing blob'].count, 1)
  t.equal(problems['truncated blob'].count, 1)
  t.equal(problems['blob too large'].count, 1)
  t.equal(problems['file too large'].count, 1)
})

t.test('an export that is no folder, or lists more objects than allowed, is refused whole', async t => {
  t.ok((await readExport('/nonexistent/export', types, limits)).report.fatal)
  const many = writeExport([], { metadata: { _data_files_: Array.from({ length: 101 }, (_, i) => `${i}/data.json`) } })
  t.ok((await readExport(many, types, limits)).report.fatal)
})
