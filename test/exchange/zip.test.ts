import t from 'tap'
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { deflateRawSync } from 'node:zlib'
import { build } from '../helper.js'
import { exportSite } from '../../core/exchange/exporter.js'
import { zipFolder } from '../../core/exchange/zip.js'
import { item, runImport, smallSite, writeExport } from './exports.js'

/** Exports as zips (core/exchange/zip.ts): unpacked within bounds, written byte-for-byte the same. */
const { app, call, tokenFor } = await build(t)
const newDir = (): string => mkdtempSync(join(tmpdir(), 'exchange-zip-'))

/** A zip of one deflated entry, written by hand so that its name and declared size can lie. */
function zipOf (entries: Array<{ name: string, data: Buffer, declaredSize?: number }>): Buffer {
  const locals: Buffer[] = []
  const centrals: Buffer[] = []
  let offset = 0
  for (const { name, data, declaredSize } of entries) {
    const compressed = deflateRawSync(data)
    const nameBytes = Buffer.from(name)
    const crc = crc32(data)
    const size = declaredSize ?? data.length
    const local = Buffer.alloc(30)
    local.writeUInt32LE(0x04034b50, 0); local.writeUInt16LE(20, 4); local.writeUInt16LE(8, 8); local.writeUInt32LE(crc, 14)
    local.writeUInt32LE(compressed.length, 18); local.writeUInt32LE(size, 22); local.writeUInt16LE(nameBytes.length, 26)
    const central = Buffer.alloc(46)
    central.writeUInt32LE(0x02014b50, 0); central.writeUInt16LE(20, 4); central.writeUInt16LE(20, 6); central.writeUInt16LE(8, 10); central.writeUInt32LE(crc, 16)
    central.writeUInt32LE(compressed.length, 20); central.writeUInt32LE(size, 24); central.writeUInt16LE(nameBytes.length, 28); central.writeUInt32LE(offset, 42)
    locals.push(local, nameBytes, compressed)
    centrals.push(central, nameBytes)
    offset += 30 + nameBytes.length + compressed.length
  }
  const centralBytes = Buffer.concat(centrals)
  const end = Buffer.alloc(22)
  end.writeUInt32LE(0x06054b50, 0); end.writeUInt16LE(entries.length, 8); end.writeUInt16LE(entries.length, 10); end.writeUInt32LE(centralBytes.length, 12); end.writeUInt32LE(offset, 16)
  return Buffer.concat([...locals, centralBytes, end])
}

function crc32 (data: Buffer): number {
  let crc = 0xffffffff
  for (const byte of data) {
    crc ^= byte
    for (let k = 0; k < 8; k++) crc = (crc >>> 1) ^ (0xedb88320 & -(crc & 1))
  }
  return (crc ^ 0xffffffff) >>> 0
}

const written = (bytes: Buffer): string => { const path = join(newDir(), 'export.zip'); writeFileSync(path, bytes); return path }

t.test('a zip of an export imports as the folder does, and a folder zips to the same bytes twice', async t => {
  const site = smallSite()
  const folder = writeExport(site.objects, { metadata: site.metadata, principals: site.principals })
  const zip = join(newDir(), 'site.zip')
  await zipFolder(folder, zip)
  const again = join(newDir(), 'site.zip')
  await zipFolder(folder, again)
  t.ok(readFileSync(zip).equals(readFileSync(again)), 'deterministic')
  const report = await runImport(app, zip)
  t.equal(report.counts['objects imported'], 8, JSON.stringify(report))
  t.equal((await call('GET', '/docs/slides.pdf', undefined, await tokenFor('admin'))).statusCode, 200)
  const out = newDir()
  await exportSite(app.db, app.contentTypes, out)
  t.equal(JSON.parse(readFileSync(join(out, 'content', '__metadata__.json'), 'utf8'))._data_files_.length, 10, 'the site root, the seeded folder and the 8 imported')
})

t.test('a zip bomb stops at the bound, nothing written', async t => {
  const before = (await app.db.query('SELECT count(*) AS n FROM content')).rows[0]
  const bomb = zipOf([{ name: 'content/__metadata__.json', data: Buffer.from('{}') }, { name: 'content/x/big.bin', data: Buffer.alloc(8 * 1024 * 1024) }])
  t.ok(bomb.length < 64 * 1024, `${bomb.length} bytes of zip`)
  const report = await runImport(app, written(bomb), {}, 1024 * 1024)
  t.match(report.problems[0], { kind: 'unreadable export', why: /bytes once unpacked/ })
  const liar = zipOf([{ name: 'content/x/big.bin', data: Buffer.alloc(4 * 1024 * 1024), declaredSize: 10 }])
  t.match((await runImport(app, written(liar), {}, 1024 * 1024)).problems[0], { kind: 'unreadable export' }, 'a declared size that lies is found out')
  t.same((await app.db.query('SELECT count(*) AS n FROM content')).rows[0], before)
})

t.test('entries that climb out, absolute ones, duplicates and damaged zips are refused', async t => {
  const data = Buffer.from(JSON.stringify(item(1, 'Document', 'd', null)))
  for (const name of ['../evil.json', '/etc/evil.json', 'content\\..\\evil.json']) {
    t.match((await runImport(app, written(zipOf([{ name, data }])))).problems[0], { kind: 'unreadable export' }, name)
  }
  t.match((await runImport(app, written(zipOf([{ name: 'a.json', data }, { name: 'a.json', data }])))).problems[0], { kind: 'unreadable export', why: /EEXIST/ })
  t.match((await runImport(app, written(Buffer.from('PK not a zip')))).problems[0], { kind: 'unreadable export', why: /Not a zip/ })
})
