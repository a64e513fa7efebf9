import { createReadStream, createWriteStream } from 'node:fs'
import { mkdir, readdir } from 'node:fs/promises'
import { dirname, join, relative } from 'node:path'
import { Transform } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import yauzl from 'yauzl'
import yazl from 'yazl'
import { ExportFileProblem } from './export-dir.js'

/** What a zip may unpack to: its entries and their bytes, counted as they are inflated (a zip's headers may lie). */
export interface ZipBounds { maxEntries: number, maxBytes: number }

/** Every entry of a zip is written with this time: the same folder gives the same zip. */
const FIXED_TIME = new Date('2000-01-01T00:00:00Z')

const openZip = async (path: string): Promise<yauzl.ZipFile> => await new Promise((resolve, reject) => {
  // yauzl refuses absolute names, `..` and backslashes (strictFileNames), and entries whose inflated size is not the declared one.
  yauzl.open(path, { lazyEntries: true, strictFileNames: true, validateEntrySizes: true, decodeStrings: true }, (err, zip) => { if (err !== null) reject(err); else resolve(zip) })
})

/**
 * Unpacks a zip into `target` (a new, empty folder), never more than
 * `bounds` allows (a zip bomb ends at the bound, not at the disk's end): the
 * entries are counted, their bytes too, as they are inflated. Only folders
 * and regular files are made (a link in the zip becomes a file holding its
 * target's name, which the reader then finds no export file in); an entry
 * named twice is refused.
 */
export async function unzip (path: string, target: string, bounds: ZipBounds): Promise<void> {
  let zip: yauzl.ZipFile
  try {
    zip = await openZip(path)
  } catch (err) {
    throw new ExportFileProblem('unreadable export', path, `Not a zip that can be read: ${(err as Error).message}`)
  }
  let entries = 0
  let bytes = 0
  try {
    await new Promise<void>((resolve, reject) => {
      const fail = (message: string): void => { reject(new ExportFileProblem('unreadable export', path, message)) }
      zip.on('error', err => { fail(`The zip is damaged: ${(err as Error).message}`) })
      zip.on('end', () => { resolve() })
      zip.on('entry', (entry: yauzl.Entry) => {
        if (++entries > bounds.maxEntries) return fail(`More than ${bounds.maxEntries} entries.`)
        if (bytes + entry.uncompressedSize > bounds.maxBytes) return fail(`More than ${bounds.maxBytes} bytes once unpacked.`)
        const file = join(target, entry.fileName)
        if (entry.fileName.endsWith('/')) { mkdir(file, { recursive: true }).then(() => { zip.readEntry() }, reject); return }
        const written = async (): Promise<void> => {
          // The folder first: the entry's stream starts inflating as soon as it is opened, and its errors need the pipeline.
          await mkdir(dirname(file), { recursive: true })
          const stream = await new Promise<NodeJS.ReadableStream>((resolve, reject) => { zip.openReadStream(entry, (err, s) => { if (err !== null) reject(err); else resolve(s) }) })
          const counted = new Transform({
            transform (chunk: Buffer, _encoding, done) {
              bytes += chunk.length
              done(bytes > bounds.maxBytes ? new ExportFileProblem('unreadable export', path, `More than ${bounds.maxBytes} bytes once unpacked.`) : null, chunk)
            }
          })
          await pipeline(stream, counted, createWriteStream(file, { flags: 'wx' }))
        }
        written().then(() => { zip.readEntry() }, (e: Error) => { reject(e instanceof ExportFileProblem ? e : new ExportFileProblem('unreadable export', path, `${entry.fileName}: ${e.message}`)) })
      })
      zip.readEntry()
    })
  } finally {
    zip.close()
  }
}

/** Zips a folder's files, in the order of their paths, each with one fixed time: a second zip of the same folder is byte-equal. */
export async function zipFolder (folder: string, path: string): Promise<void> {
  const zip = new yazl.ZipFile()
  const files = (await readdir(folder, { recursive: true, withFileTypes: true })).filter(f => f.isFile()).map(f => relative(folder, join(f.parentPath, f.name))).sort()
  for (const file of files) zip.addReadStream(createReadStream(join(folder, file)), file.split('\\').join('/'), { mtime: FIXED_TIME, mode: 0o100644 })
  zip.end()
  await pipeline(zip.outputStream, createWriteStream(path, { flags: 'wx' }))
}
