import t from 'tap'
import { crc32, storedZip } from '../../core/solr/zip.js'

// An independent reader (the JDK's, in solr-dev) unpacks these archives in test/solr-dev/cloud.test.ts.

t.test('crc32: the standard check values', async t => {
  t.equal(crc32(Buffer.from('123456789')), 0xcbf43926, 'the CRC-32 check value')
  t.equal(crc32(new Uint8Array()), 0)
  t.equal(crc32(Buffer.from('The quick brown fox jumps over the lazy dog')), 0x414fa339)
})

t.test('a stored zip: local headers, central directory and end record, byte for byte reproducible', async t => {
  const zip = storedZip({ 'schema.xml': '<schema/>', 'lang/stopwörds.txt': 'a\n' })
  t.equal(zip.readUInt32LE(0), 0x04034b50, 'starts with a local file header')
  t.equal(zip.readUInt16LE(8), 0, 'stored, not deflated')
  t.equal(zip.readUInt32LE(14), crc32(Buffer.from('<schema/>')))
  const end = zip.length - 22
  t.equal(zip.readUInt32LE(end), 0x06054b50, 'ends with the end record')
  t.equal(zip.readUInt16LE(end + 10), 2, 'two entries')
  const directoryAt = zip.readUInt32LE(end + 16)
  t.equal(zip.readUInt32LE(directoryAt), 0x02014b50, 'the end record points at the central directory')
  t.equal(zip.readUInt32LE(end + 12), end - directoryAt, 'whose size it records')
  t.ok(zip.includes(Buffer.from('lang/stopwörds.txt', 'utf8')), 'names in UTF-8 (flag bit 11)')
  t.same(storedZip({ 'schema.xml': '<schema/>', 'lang/stopwörds.txt': 'a\n' }), zip, 'the same files give the same bytes')
})

t.test('names that would leave the folder they are unpacked into are refused', async t => {
  for (const name of ['', '/etc/passwd', '../x', 'a/../../x']) t.throws(() => storedZip({ [name]: 'x' }), /Invalid name/)
})
