import { lstat, open, realpath } from 'node:fs/promises'
import { isAbsolute, join, sep } from 'node:path'
import { untrustedJsonProblems } from '../security/untrusted-input.js'

/** Why a file of an export cannot be used: its path, its size, its text. */
export class ExportFileProblem extends Error {
  constructor (readonly kind: string, readonly file: string, message: string) {
    super(message)
  }
}

/** A path segment an export may name: no climbing, no hidden root, no NUL or separators of another system. */
const SAFE_SEGMENT = /^[^/\\\0]+$/

/**
 * An export's folder, read without trusting it: every path it names is
 * relative, climbs nowhere (`..`, absolute paths), and ends at a regular
 * file that is no symbolic link and lies, once every link above it is
 * resolved, inside the folder; JSON is read up to a bound of bytes, parsed,
 * then walked without recursion (core/security/untrusted-input.ts: prototype
 * keys, NUL, lone surrogates, nesting deeper than a request may).
 */
export class ExportDir {
  private constructor (readonly root: string) {}

  static async open (path: string): Promise<ExportDir> {
    const root = await realpath(path)
    if (!(await lstat(root)).isDirectory()) throw new ExportFileProblem('unreadable export', path, `${path} is not a folder.`)
    return new ExportDir(root)
  }

  /** The absolute path of a regular file `relative` names inside the export, and its size. */
  async file (relative: string): Promise<{ path: string, size: number }> {
    const segments = relative.split('/')
    if (relative === '' || isAbsolute(relative) || segments.some(s => s === '..' || s === '.' || !SAFE_SEGMENT.test(s))) {
      throw new ExportFileProblem('unsafe path', relative, 'The path is absolute, climbs out of the export or holds a character a file name may not.')
    }
    const path = join(this.root, ...segments)
    let stat
    try {
      stat = await lstat(path)
    } catch {
      throw new ExportFileProblem('missing file', relative, 'The file the export names is not in it.')
    }
    if (stat.isSymbolicLink()) throw new ExportFileProblem('unsafe path', relative, 'A symbolic link: an export holds files, not links to elsewhere.')
    if (!stat.isFile()) throw new ExportFileProblem('missing file', relative, 'Not a regular file.')
    // A folder above it may be a link that leads out.
    if (!(await realpath(path)).startsWith(this.root + sep)) throw new ExportFileProblem('unsafe path', relative, 'The file lies outside the export.')
    return { path, size: stat.size }
  }

  /** The JSON document of a file, at most `maxBytes` long and trustworthy as a request body must be. */
  async json (relative: string, maxBytes: number): Promise<unknown> {
    const { path, size } = await this.file(relative)
    if (size > maxBytes) throw new ExportFileProblem('file too large', relative, `${size} bytes; at most ${maxBytes} are read.`)
    // Read through the handle, never more than the bound: the file may grow after the check.
    const handle = await open(path, 'r')
    let text: string
    try {
      const buffer = Buffer.alloc(size + 1)
      const { bytesRead } = await handle.read(buffer, 0, size + 1, 0)
      if (bytesRead > size) throw new ExportFileProblem('file too large', relative, 'The file grew while it was read.')
      text = buffer.subarray(0, bytesRead).toString('utf8')
    } finally {
      await handle.close()
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
