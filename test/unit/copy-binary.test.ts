import t from 'tap'
import { randomBytes, randomInt } from 'node:crypto'
import { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { BinaryCopyField } from '../../core/db/copy-binary.js'

/** PostgreSQL's binary COPY of one bytea column, written here from its documented layout (not from the parser). */
function copyOf (fields: Array<Buffer | null>, options: { extension?: Buffer, fieldsPerRow?: number } = {}): Buffer {
  const extension = options.extension ?? Buffer.alloc(0)
  const header = Buffer.alloc(19)
  Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1').copy(header)
  header.writeInt32BE(0, 11)
  header.writeInt32BE(extension.length, 15)
  const rows = fields.map(field => {
    const count = Buffer.alloc(2)
    count.writeInt16BE(options.fieldsPerRow ?? 1)
    const length = Buffer.alloc(4)
    length.writeInt32BE(field === null ? -1 : field.length)
    return Buffer.concat([count, length, field ?? Buffer.alloc(0)])
  })
  return Buffer.concat([header, extension, ...rows, Buffer.from([0xff, 0xff])])
}

/** The stream cut at random places (a chunk may be a single byte). */
function cut (bytes: Buffer): Buffer[] {
  const chunks = []
  for (let at = 0; at < bytes.length;) {
    const n = randomInt(1, randomInt(2) === 0 ? 8 : 70_000)
    chunks.push(bytes.subarray(at, at + n))
    at += n
  }
  return chunks
}

async function fieldsOf (chunks: Buffer[]): Promise<Buffer> {
  const out: Buffer[] = []
  await pipeline(Readable.from(chunks), new BinaryCopyField(), async function * (source: AsyncIterable<Buffer>) {
    for await (const bytes of source) out.push(bytes)
  })
  return Buffer.concat(out)
}

t.test('the fields come out whole and in order, however the stream is cut', async t => {
  for (let run = 0; run < 200; run++) {
    const fields = Array.from({ length: randomInt(0, 12) }, () => randomBytes(randomInt(0, randomInt(2) === 0 ? 40 : 300_000)))
    const extension = randomInt(4) === 0 ? randomBytes(randomInt(1, 20)) : undefined
    const got = await fieldsOf(cut(copyOf(fields, { extension })))
    if (!got.equals(Buffer.concat(fields))) {
      t.fail(`run ${run}: ${fields.length} fields of ${fields.map(f => f.length).join(', ')} bytes`)
      return
    }
  }
  t.pass('200 random streams, random cuts')
})

t.test('anything else fails the stream', async t => {
  const good = copyOf([randomBytes(1000), randomBytes(10)])
  await t.rejects(fieldsOf(cut(good.subarray(0, good.length - 1))), /ended inside/, 'cut before its trailer')
  await t.rejects(fieldsOf(cut(good.subarray(0, 500))), /ended inside its bytes/, 'cut inside a field')
  await t.rejects(fieldsOf([Buffer.concat([good, Buffer.from([0])])]), /after the end/, 'bytes after its trailer')
  await t.rejects(fieldsOf(cut(copyOf([null]))), /NULL/, 'a NULL')
  await t.rejects(fieldsOf(cut(copyOf([randomBytes(4)], { fieldsPerRow: 2 }))), /2 fields/, 'two fields a row')
  const foreign = Buffer.from(good)
  foreign[0] = 0x51
  await t.rejects(fieldsOf([foreign]), /Not a binary COPY/, 'another format')
})
