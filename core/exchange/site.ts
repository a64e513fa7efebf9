import { lstat, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { ContentTypeRegistry } from '../content/registry.js'
import type { Db } from '../db/db.js'
import type { ContentStore } from '../content/store.js'
import type { Groups } from '../security/groups.js'
import type { Users } from '../security/users.js'
import { importContent, type ImportOptions } from './importer.js'
import { importPrincipals } from './principals.js'
import { readExport, type ReadLimits } from './reader.js'
import { importRedirects } from './redirects.js'
import { importRootFields, importRootRoles } from './root.js'
import { ExportFileProblem } from './export-dir.js'
import { ExchangeReport } from './report.js'
import { unzip } from './zip.js'

/** A data.json is read whole: at most this many bytes (a Plone page with many blocks is some hundreds of KB). */
export const JSON_MAX_BYTES = 16 * 1024 * 1024
/** Objects an export may list unless the operator says otherwise. */
export const DEFAULT_MAX_OBJECTS = 1_000_000

export interface SiteParts { db: Db, content: ContentStore, types: ContentTypeRegistry, users: Users, groups: Groups }

/**
 * Imports a plone.exportimport export from a folder or a zip: it is read and checked
 * whole first (core/exchange/reader.ts; an export that cannot be read writes
 * nothing), then its users and groups, then its content, parents first.
 * Answers the report of what was imported and what was not, and why.
 */
export async function importSite (path: string, parts: SiteParts, limits: ReadLimits & { zipMaxBytes: number }, options: ImportOptions): Promise<ExchangeReport> {
  if (!(await lstat(path).then(stat => stat.isFile(), () => false))) return await importFolder(path, parts, limits, options)
  // A zip (as plone.exportimport's @export gives): unpacked, within bounds, into a folder of its own, read as any export.
  const folder = await mkdtemp(join(tmpdir(), 'plone-import-'))
  try {
    // An object is a data.json and a few blobs: the entries a zip may hold follow from the objects it may.
    await unzip(path, folder, { maxEntries: limits.maxObjects * 4 + 16, maxBytes: limits.zipMaxBytes })
    return await importFolder(folder, parts, limits, options)
  } catch (err) {
    if (!(err instanceof ExportFileProblem)) throw err
    const report = new ExchangeReport()
    report.problem(err.kind, err.file, err.message)
    return report
  } finally {
    await rm(folder, { recursive: true, force: true })
  }
}

async function importFolder (path: string, parts: SiteParts, limits: ReadLimits, options: ImportOptions): Promise<ExchangeReport> {
  const read = await readExport(path, parts.types, limits, options.mapping)
  const { report } = read
  report.count('objects in export', read.objects.length)
  if (report.fatal) return report
  await importPrincipals(read.principals, parts.users, parts.groups, report)
  if (read.root !== null) await importRootRoles(read.root, parts.content)
  await importContent(read, parts.content, options)
  if (read.root !== null) await importRootFields(read.root, parts.content, options, report)
  await importRedirects(parts.db, read.redirects, read.sitePath, report)
  return report
}
