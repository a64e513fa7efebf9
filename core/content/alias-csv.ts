import { parse } from 'csv-parse/sync'
import type { Queryable } from '../db/db.js'
import { ApiError, type CsvLineError } from '../errors.js'
import { aliasPathOrProblem, type NewAlias } from './redirects.js'

/** Lines of an uploaded CSV file of aliases at most (the download's bound). */
export const MAX_CSV_ALIASES = 100_000
/** Line errors an answer lists at most; its message counts them all. */
const MAX_LISTED_ERRORS = 100
/** The delimiters the upload recognises, as Python's csv.Sniffer would find them in a redirects file. */
const DELIMITERS = [',', ';', '\t', '|']

/** One line of the file, read: an alias, where it leads, its date and whether it was added by hand. */
interface CsvAlias { lineNumber: number, line: string, path: string, target: string, created?: Date, manual: boolean }

/**
 * The delimiter of a file: of those recognised, the one its first two lines
 * (a header and a first alias, perhaps) hold most of; a comma when none.
 */
function delimiterOf (text: string): string {
  const sample = text.split('\n', 2).join('\n')
  const counts = DELIMITERS.map(d => sample.split(d).length - 1)
  const most = Math.max(...counts)
  return most === 0 ? ',' : DELIMITERS[counts.indexOf(most)]
}

/**
 * A date of the file's third column: the download's `2022/05/05 00:00:00 GMT+0`
 * or ISO 8601; none (the time of the upload) for anything else, as Plone's
 * upload logs and ignores a date Zope's DateTime cannot read.
 */
function dateOf (text: string): Date | undefined {
  const zope = /^(\d{4})\/(\d\d)\/(\d\d) (\d\d):(\d\d):(\d\d)(?:\.\d+)? GMT([+-]\d{1,2})$/.exec(text.trim())
  if (zope !== null) {
    const [, y, mo, d, h, mi, s, offset] = zope
    const date = new Date(Date.UTC(+y, +mo - 1, +d, +h - +offset, +mi, +s))
    return Number.isNaN(date.getTime()) ? undefined : date
  }
  if (!/^\d{4}-\d\d-\d\d([T ]\d\d:\d\d(:\d\d(\.\d+)?)?(Z|[+-]\d\d:?\d\d)?)?$/.test(text.trim())) return undefined
  const date = new Date(text.trim())
  return Number.isNaN(date.getTime()) ? undefined : date
}

/**
 * The lines of a redirects control panel's CSV file (Products.CMFPlone's
 * `RedirectsControlPanel.upload`): `old path, new path[, datetime[, manual]]`,
 * any newline, the delimiter guessed from the first two lines, a first line
 * whose two paths are not paths taken for a header. Answers the aliases, or
 * the errors of the lines that are not, with their line numbers from 1.
 */
function readLines (text: string): { aliases: CsvAlias[], errors: CsvLineError[], delimiter: string } {
  const delimiter = delimiterOf(text)
  let records: string[][]
  try {
    records = parse(text, { delimiter, bom: true, relax_column_count: true, relax_quotes: true, skip_empty_lines: true, max_record_size: 8000, to_line: MAX_CSV_ALIASES + 2 })
  } catch (err) {
    return { aliases: [], errors: [{ line_number: (err as { lines?: number }).lines ?? 0, line: '', message: `The file is not CSV: ${(err as Error).message}` }], delimiter }
  }
  const aliases: CsvAlias[] = []
  const errors: CsvLineError[] = []
  for (const [i, fields] of records.entries()) {
    const line = fields.join(delimiter)
    if (fields.length < 2) {
      errors.push({ line_number: i + 1, line, message: 'Each line must have 2 or more columns.' })
      continue
    }
    const [source, target, date = '', manual = ''] = fields
    if (i === 0 && !source.startsWith('/') && !target.startsWith('/')) continue // a header
    const path = aliasPathOrProblem(source)
    const to = /^https?:\/\//i.test(target) ? { problem: 'Targets outside the site are not kept: an alias leads to an object of the site.' } : aliasPathOrProblem(target)
    const problems = [path, to].flatMap(p => typeof p === 'string' ? [] : [p.problem])
    if (problems.length > 0) errors.push({ line_number: i + 1, line, message: problems.join(' ') })
    else if (path === to) errors.push({ line_number: i + 1, line, message: 'Alternative urls that point to themselves will cause an endless cycle of redirects.' })
    // Plone: a fourth column starting with f, n or 0 says the alias was not added by hand.
    else aliases.push({ lineNumber: i + 1, line, path: path as string, target: to as string, created: dateOf(date), manual: !/^[fn0]/i.test(manual) })
  }
  if (aliases.length + errors.length > MAX_CSV_ALIASES) {
    errors.unshift({ line_number: MAX_CSV_ALIASES + 1, line: '', message: `A file may hold at most ${MAX_CSV_ALIASES} aliases.` })
  }
  return { aliases, errors, delimiter }
}

/**
 * The aliases of an uploaded CSV file, checked against the site as Plone's
 * upload checks them: an alias is not the path of an object nor an alias
 * already, and its target is an object. All or nothing: any line in error
 * and nothing is added — the 400 lists the lines (`csv_errors`, which
 * Volto's control panel shows) and names the delimiter found.
 */
export async function aliasesOfCsv (q: Queryable, text: string): Promise<NewAlias[]> {
  const { aliases, errors, delimiter } = readLines(text.replace(/\r\n?/g, '\n'))
  const paths = aliases.flatMap(a => [a.path, a.target])
  const { rows: objects } = await q.query<{ path: string, uid: string }>('SELECT path, uid FROM content WHERE path = ANY($1)', [paths])
  const { rows: existing } = await q.query<{ path: string }>('SELECT path FROM redirects WHERE path = ANY($1)', [aliases.map(a => a.path)])
  const uids = new Map(objects.map(o => [o.path, o.uid]))
  const taken = new Set(existing.map(r => r.path))
  for (const alias of aliases) {
    const message = uids.has(alias.path)
      ? 'Cannot use a working path as alternative url.'
      : taken.has(alias.path)
        ? 'The provided alternative url already exists!'
        : !uids.has(alias.target) ? 'The provided target object does not exist.' : undefined
    if (message !== undefined) errors.push({ line_number: alias.lineNumber, line: alias.line, message })
  }
  if (errors.length > 0) {
    errors.sort((a, b) => a.line_number - b.line_number)
    const more = errors.length > MAX_LISTED_ERRORS ? ` The first ${MAX_LISTED_ERRORS} are listed.` : ''
    throw new ApiError(400, 'BadRequest', `Found ${errors.length} errors in CSV file (delimiter detected: ${delimiter === '\t' ? 'tab' : delimiter}).${more}`,
      { csvErrors: errors.slice(0, MAX_LISTED_ERRORS) })
  }
  return aliases.map(a => ({ path: a.path, uid: uids.get(a.target)!, created: a.created, manual: a.manual }))
}
