import { mkdtemp, readFile, rm, stat } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { pathToFileURL } from 'node:url'
import { loadConfig } from '../core/config/config.js'
import { Vocabularies } from '../core/content/vocabularies.js'
import { exportSite } from '../core/exchange/exporter.js'
import { MappingProblem, MAX_MAPPING_BYTES, parseMapping, type ImportMapping } from '../core/exchange/mapping.js'
import { typeNamed } from '../core/exchange/reader.js'
import { DEFAULT_MAX_OBJECTS, importSite, JSON_MAX_BYTES } from '../core/exchange/site.js'
import { DEFAULT_WRITERS } from '../core/exchange/importer.js'
import { zipFolder } from '../core/exchange/zip.js'
import { Groups } from '../core/security/groups.js'
import { Users } from '../core/security/users.js'
import { progressPrinter } from './progress.js'
import { createLogger } from './log.js'
import { openServices } from './services.js'

/** Writers the command takes at most: each holds a connection of the pool (core/db/db.ts), which the command shares with nothing else. */
const MAX_WRITERS = 8

const USAGE = `usage: npm run site -- import <folder or .zip> [--map mapping.json] [--max-objects N] [--max-zip-bytes N] [--writers N]
       npm run site -- export <folder or .zip> [--path /sub/tree]
  import <folder>   a plone.exportimport export (content/, principals.json, …), or its zip
                    (unpacked to at most --max-zip-bytes, 64 GiB by default): users and groups,
                    then content, parents first, in batches of whole objects (resumable: run it
                    again after an interruption; objects are matched by UID, never duplicated);
                    prints what was imported and what was not, and why (exit code 1 if anything
                    was left out); --map: types and fields mapped onto the service's
                    (docs/moving-a-plone-site.md, "Mapping"); --writers: batches written at
                    once, each in a transaction of its own (1 to ${MAX_WRITERS}, ${DEFAULT_WRITERS} by default)
  export <folder>   the site (or the subtree at --path) in the same format, into a new folder
                    (or a new zip when the name ends in .zip)`

/** What a zip may unpack to by default (a site's blobs): a zip bomb stops here. */
const ZIP_MAX_BYTES = 64 * 1024 ** 3
const zipMaxBytes = (text: string): number => /^[1-9]\d{0,15}$/.test(text) ? Number(text) : NaN
const writers = (text: string): number => /^[1-9]$/.test(text) && Number(text) <= MAX_WRITERS ? Number(text) : NaN

type Output = NodeJS.WriteStream | { isTTY?: boolean, write: (s: string) => unknown }

/**
 * `npm run site`: a Plone site in and out, in plone.exportimport's format
 * (docs/moving-a-plone-site.md), with the server's configuration and the
 * core services the index worker has; the report on stdout, the progress on stderr.
 */
export async function main (argv: string[], out: Output = process.stdout, err: Output = process.stderr): Promise<number> {
  let parsed
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: { path: { type: 'string' }, map: { type: 'string' }, 'max-objects': { type: 'string', default: String(DEFAULT_MAX_OBJECTS) }, 'max-zip-bytes': { type: 'string', default: String(ZIP_MAX_BYTES) }, writers: { type: 'string', default: String(DEFAULT_WRITERS) }, help: { type: 'boolean', default: false } }
    })
  } catch (problem) {
    // An option it does not know, or one without its value: said, then the usage.
    err.write(`${(problem as Error).message}\n`)
    out.write(`${USAGE}\n`)
    return 2
  }
  const { values, positionals } = parsed
  const [op, folder] = positionals
  const maxObjects = Number(values['max-objects'])
  const writerCount = writers(values.writers)
  if (values.help || folder === undefined || !['import', 'export'].includes(op) || !Number.isSafeInteger(maxObjects) || maxObjects < 1 || Number.isNaN(zipMaxBytes(values['max-zip-bytes'])) || Number.isNaN(writerCount)) {
    out.write(`${USAGE}\n`)
    return values.help ? 0 : 2
  }
  const config = loadConfig()
  const log = createLogger(config.LOG_LEVEL === 'info' ? 'warn' : config.LOG_LEVEL, 2)
  const services = await openServices(config, log, 'cli')
  try {
    if (op === 'export') {
      const zip = folder.endsWith('.zip')
      const into = zip ? await mkdtemp(join(tmpdir(), 'plone-export-')) : folder
      try {
        const { objects, blobs } = await exportSite(services.db, services.types, into, { path: values.path, progress: done => err.write(`export: ${done} objects\n`) })
        if (zip) await zipFolder(into, folder)
        out.write(`exported ${objects} objects and ${blobs} blobs into ${folder}\n`)
      } finally {
        if (zip) await rm(into, { recursive: true, force: true })
      }
      return 0
    }
    let mapping: ImportMapping | undefined
    if (values.map !== undefined) {
      try {
        if ((await stat(values.map)).size > MAX_MAPPING_BYTES) throw new MappingProblem(`The mapping file is larger than ${MAX_MAPPING_BYTES} bytes.`)
        mapping = parseMapping(await readFile(values.map, 'utf8'), services.types, name => typeNamed(services.types, name))
      } catch (problem) {
        err.write(`${values.map}: ${(problem as Error).message}\n`)
        return 2
      }
    }
    const vocabularies = new Vocabularies(services.db, services.types)
    const report = await importSite(folder, { db: services.db, content: services.content, types: services.types, users: new Users(services.db), groups: new Groups(services.db) },
      { jsonMaxBytes: JSON_MAX_BYTES, maxObjects, imageMaxBytes: config.IMAGE_MAX_BYTES, fileMaxBytes: config.UPLOAD_MAX_BYTES, zipMaxBytes: zipMaxBytes(values['max-zip-bytes']) },
      {
        writeContext: { tokens: async name => await vocabularies.tokens(name), imageMaxBytes: config.IMAGE_MAX_BYTES, fileMaxBytes: config.UPLOAD_MAX_BYTES },
        progress: progressPrinter('import', err),
        mapping,
        writers: writerCount
      })
    out.write(`${report.lines().join('\n')}\n`)
    return report.toJSON().problems.length > 0 ? 1 : 0
  } finally {
    await services.close()
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  main(process.argv.slice(2)).then(code => { process.exitCode = code }, err => {
    process.stderr.write(`${(err as Error).stack ?? String(err)}\n`)
    process.exitCode = 1
  })
}
