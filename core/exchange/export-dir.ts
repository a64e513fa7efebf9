import { closeSync, constants, fstatSync, lstatSync, openSync, readSync } from 'node:fs'
import { lstat, realpath } from 'node:fs/promises'
import { isAbsolute, join } from 'node:path'
import { untrustedJsonProblems } from '../security/untrusted-input.js'

/** Why a file of an export cannot be used: its path, its size, its text. */
export class ExportFileProblem extends Error {
  constructor (readonly kind: string, readonly file: string, message: string) {
    super(message)
  }
}

/** A path segment an export may name: no climbing, no hidden root, no NUL or separators of another system. */
const SAFE_SEGMENT = /^[^/\\\0]+$/

const missing = (relative: string): ExportFileProblem => new ExportFileProblem('missing file', relative, 'The file the export names is not in it.')
const notRegular = (relative: string): ExportFileProblem => new ExportFileProblem('missing file', relative, 'Not a regular file.')
const linked = (relative: string): ExportFileProblem => new ExportFileProblem('unsafe path', relative, 'A symbolic link: an export holds files, not links to elsewhere.')

/** A file is opened without following a link at its end, and without waiting on a FIFO (fstat refuses it then). */
const OPEN_FLAGS = constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0)

/**
 * An export's folder, read without trusting it: every path it names is
 * relative, climbs nowhere (`..`, absolute paths), passes through folders
 * only (no symbolic link on the way: the path stays inside the export) and
 * ends at a regular file that is no link; JSON is read up to a bound of
 * bytes, parsed, then walked without recursion
 * (core/security/untrusted-input.ts: prototype keys, NUL, lone surrogates,
 * nesting deeper than a request may).
 *
 * Its calls are synchronous: an import reads each data.json twice, and
 * fs.promises' machinery around a small file's five calls cost seven times
 * the calls themselves (30 000 data.json: 4.8 s of CPU against 0.7 s, read
 * from the page cache), the import's largest cost after PostgreSQL. The
 * event loop is held for one file at a time, at most the bound of a JSON file.
 */
export class ExportDir {
  /** The folders right under the root found to be folders (content/): looked at once, not for each of its files. */
  private readonly topFolders = new Set<string>()

  private constructor (readonly root: string) {}

  static async open (path: string): Promise<ExportDir> {
    const root = await realpath(path)
    if (!(await lstat(root)).isDirectory()) throw new ExportFileProblem('unreadable export', path, `${path} is not a folder.`)
    return new ExportDir(root)
  }

  /** The absolute path of `relative` once it is known safe: its segments, and every folder on the way a folder, not a link. */
  private placed (relative: string): string {
    const segments = relative.split('/')
    if (relative === '' || isAbsolute(relative) || segments.some(s => s === '..' || s === '.' || !SAFE_SEGMENT.test(s))) {
      throw new ExportFileProblem('unsafe path', relative, 'The path is absolute, climbs out of the export or holds a character a file name may not.')
    }
    let path = this.root
    for (const [depth, segment] of segments.slice(0, -1).entries()) {
      path = join(path, segment)
      if (depth === 0 && this.topFolders.has(segment)) continue
      const stat = lstatSync(path, { throwIfNoEntry: false })
      if (stat?.isSymbolicLink() === true) throw new ExportFileProblem('unsafe path', relative, 'A folder on its path is a symbolic link: an export holds files, not links to elsewhere.')
      if (stat?.isDirectory() !== true) throw missing(relative)
      if (depth === 0) this.topFolders.add(segment)
    }
    return join(path, segments.at(-1)!)
  }

  /** The absolute path of a regular file `relative` names inside the export, and its size. */
  file (relative: string): { path: string, size: number } {
    const path = this.placed(relative)
    const stat = lstatSync(path, { throwIfNoEntry: false })
    if (stat === undefined) throw missing(relative)
    if (stat.isSymbolicLink()) throw linked(relative)
    if (!stat.isFile()) throw notRegular(relative)
    return { path, size: stat.size }
  }

  /** The JSON document of a file, at most `maxBytes` long and trustworthy as a request body must be. */
  json (relative: string, maxBytes: number): unknown {
    const path = this.placed(relative)
    let fd: number
    try {
      fd = openSync(path, OPEN_FLAGS)
    } catch (err) {
      throw (err as NodeJS.ErrnoException).code === 'ELOOP' ? linked(relative) : missing(relative)
    }
    let text: string
    try {
      // What is read is what was opened: the size is the open file's, never more than the bound is read.
      const stat = fstatSync(fd)
      if (!stat.isFile()) throw notRegular(relative)
      if (stat.size > maxBytes) throw new ExportFileProblem('file too large', relative, `${stat.size} bytes; at most ${maxBytes} are read.`)
      const buffer = Buffer.alloc(stat.size + 1)
      const bytesRead = readSync(fd, buffer, 0, stat.size + 1, 0)
      if (bytesRead > stat.size) throw new ExportFileProblem('file too large', relative, 'The file grew while it was read.')
      text = buffer.subarray(0, bytesRead).toString('utf8')
    } finally {
      closeSync(fd)
    }
    let document: unknown
    try {
      document = JSON.parse(text)
    } catch (err) {
      throw new ExportFileProblem('malformed JSON', relative, (err as Error).message)
    }
    const problems = untrustedJsonProblems(document)
    if (problems.length > 0) throw new ExportFileProblem('untrustworthy JSON', relative, problems.map(p => `${p.field ?? ''}: ${p.message}`).join('; '))
    return document
  }
}
