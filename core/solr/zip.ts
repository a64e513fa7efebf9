/**
 * A stored (uncompressed) zip archive in memory: what Solr's Configsets API
 * takes for an UPLOAD. A configset is a few small text files, so compression
 * would save nothing worth a dependency; the format is PKWARE's APPNOTE
 * (local headers, central directory, end record), without ZIP64 (each file
 * and the whole archive stay far below 4 GiB).
 */

const CRC_TABLE = Uint32Array.from({ length: 256 }, (_, n) => {
  let c = n
  for (let k = 0; k < 8; k++) c = (c & 1) !== 0 ? 0xedb88320 ^ (c >>> 1) : c >>> 1
  return c >>> 0
})

/** CRC-32 (ISO 3309, the zip and gzip checksum). */
export function crc32 (data: Uint8Array): number {
  let crc = 0xffffffff
  for (const byte of data) crc = CRC_TABLE[(crc ^ byte) & 0xff] ^ (crc >>> 8)
  return (crc ^ 0xffffffff) >>> 0
}

/** 1980-01-01 00:00, the earliest DOS date: fixed, so that the same files give the same bytes. */
const DOS_TIME = 0
const DOS_DATE = (1 << 5) | 1
/** Bit 11: names are UTF-8. */
const UTF8_NAMES = 0x0800
/** 1.0: stored entries need nothing newer. */
const VERSION = 10
const LIMIT = 0xffffffff

/** A zip holding `files` (name → content) uncompressed, in the given order. */
export function storedZip (files: Record<string, string | Uint8Array>): Buffer {
  const count = Object.keys(files).length
  if (count > 0xffff) throw new Error('A zip without ZIP64 holds at most 65535 files')
  const locals: Buffer[] = []
  const central: Buffer[] = []
  let offset = 0
  for (const [name, content] of Object.entries(files)) {
    const nameBytes = Buffer.from(name, 'utf8')
    if (name === '' || name.startsWith('/') || name.split('/').includes('..')) throw new Error(`Invalid name in a zip: ${JSON.stringify(name)}`)
    const data = typeof content === 'string' ? Buffer.from(content, 'utf8') : Buffer.from(content)
    if (data.length >= LIMIT || offset >= LIMIT) throw new Error('A stored zip without ZIP64 holds less than 4 GiB')
    const crc = crc32(data)

    const local = Buffer.alloc(30)
    local.writeUInt32LE(0x04034b50, 0)
    local.writeUInt16LE(VERSION, 4)
    local.writeUInt16LE(UTF8_NAMES, 6)
    local.writeUInt16LE(0, 8) // method: stored
    local.writeUInt16LE(DOS_TIME, 10)
    local.writeUInt16LE(DOS_DATE, 12)
    local.writeUInt32LE(crc, 14)
    local.writeUInt32LE(data.length, 18) // compressed size
    local.writeUInt32LE(data.length, 22) // size
    local.writeUInt16LE(nameBytes.length, 26)
    local.writeUInt16LE(0, 28) // extra field length
    locals.push(local, nameBytes, data)

    const entry = Buffer.alloc(46)
    entry.writeUInt32LE(0x02014b50, 0)
    entry.writeUInt16LE(VERSION, 4) // made by
    entry.writeUInt16LE(VERSION, 6) // needed to extract
    entry.writeUInt16LE(UTF8_NAMES, 8)
    entry.writeUInt16LE(0, 10)
    entry.writeUInt16LE(DOS_TIME, 12)
    entry.writeUInt16LE(DOS_DATE, 14)
    entry.writeUInt32LE(crc, 16)
    entry.writeUInt32LE(data.length, 20)
    entry.writeUInt32LE(data.length, 24)
    entry.writeUInt16LE(nameBytes.length, 28)
    // extra, comment, disk number, internal and external attributes: all 0 (bytes 30–41)
    entry.writeUInt32LE(offset, 42)
    central.push(entry, nameBytes)

    offset += local.length + nameBytes.length + data.length
  }
  const directory = Buffer.concat(central)
  const end = Buffer.alloc(22)
  end.writeUInt32LE(0x06054b50, 0)
  end.writeUInt16LE(count, 8) // entries on this disk
  end.writeUInt16LE(count, 10) // entries in all
  end.writeUInt32LE(directory.length, 12)
  end.writeUInt32LE(offset, 16)
  return Buffer.concat([...locals, directory, end])
}
