import { BadRequest, PayloadTooLarge, ValidationFailed, type FieldError } from '../errors.js'
import { Pacer } from '../pacing.js'
import { MAX_JSON_DEPTH, untrustedJsonProblems } from './untrusted-input.js'

/** What one JSON body may hold, checked while its text is scanned, before any of it is parsed. */
export interface JsonBounds {
  /** The most values: strings (an object's keys among them), numbers, literals, objects and arrays. */
  values: number
  /** Text (UTF-16 units) parsed by one JSON.parse at most; a larger object or array is parsed member by member. Tests make it small. */
  pieceChars?: number
}

/**
 * One JSON.parse of a megabyte of the densest JSON (short strings, keys)
 * holds the event loop about 10 ms on the reference machine
 * (docs/performance.md, "Bounded work per request"); 16 MB in one call held
 * it up to 140 ms, and its untrusted-input walk as long again.
 */
const PIECE_CHARS = 1 << 20
/** A number is never longer in this API; JSON.parse reads a 16-million-digit one for 140 ms. */
const LONGEST_NUMBER = 1000
/**
 * Escapes a string longer than a piece may hold: such a string is parsed on
 * its own, and JSON.parse decodes escapes one by one (10 ns each). The only
 * such strings are base64 images, which some encoders write with `\/`.
 */
const LONG_STRING_ESCAPES = 1 << 18
/** Characters scanned between two looks at the clock. */
const CLOCK_EVERY = 1 << 16

const QUOTE = 0x22
const BACKSLASH = 0x5c
const COMMA = 0x2c
const COLON = 0x3a
const OPEN_OBJECT = 0x7b
const CLOSE_OBJECT = 0x7d
const OPEN_ARRAY = 0x5b
const CLOSE_ARRAY = 0x5d
const isWhitespace = (c: number): boolean => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09

const notJson = (): Error => BadRequest('The request body is not valid JSON.')

/** An object or array the scan found, with its separators when it is larger than a piece. */
interface Container {
  open: number
  close: number
  object: boolean
  commas: number[]
  colons: number[]
  /** Its members that are containers larger than a piece, by their index. */
  large: Map<number, Container>
  /** Its members that are strings larger than a piece without escapes, by their index: the offsets of their quotes. */
  plain: Map<number, { open: number, close: number }>
}

/** The name of the top-level field being scanned, when the body is an object and its key is known. */
function fieldOf (text: string, root: Container | undefined): string | undefined {
  if (root?.object !== true || root.colons.length !== root.commas.length + 1) return undefined
  try {
    const key: unknown = JSON.parse(text.slice(root.commas.at(-1) ?? root.open + 1, root.colons.at(-1)).replace(/^,/, ''))
    return typeof key === 'string' ? key : undefined
  } catch {
    return undefined
  }
}

/**
 * The offset of the quote that ends the string starting at `start`, and
 * whether it is longer than a piece without a single escape. A string longer
 * than a piece may hold few escapes.
 */
function endOfString (text: string, start: number, pieceChars: number): { end: number, plain: boolean } {
  let end = start
  for (;;) {
    end = text.indexOf('"', end + 1)
    if (end < 0) throw notJson()
    let backslash = end - 1
    while (text.charCodeAt(backslash) === BACKSLASH) backslash--
    // An even number of backslashes before it: the quote is not escaped.
    if ((end - backslash) % 2 === 1) break
  }
  if (end - start <= pieceChars) return { end, plain: false }
  let escapes = 0
  for (let at = text.indexOf('\\', start); at >= 0 && at < end; at = text.indexOf('\\', at + 2)) {
    if (++escapes > LONG_STRING_ESCAPES) throw BadRequest(`A string of more than ${pieceChars} characters in the body holds more than ${LONG_STRING_ESCAPES} escape sequences.`)
  }
  return { end, plain: escapes === 0 }
}

/**
 * One linear pass over the text, yielding between slices: refuses what
 * exceeds the bounds (too many values, nesting deeper than MAX_JSON_DEPTH,
 * an absurd number) before JSON.parse sees any of it, and finds the objects
 * and arrays larger than a piece with their separators. Syntax is JSON.parse's
 * to judge; this pass only refuses what cannot be JSON's structure.
 * Answers the body's outer container when it is larger than a piece.
 */
async function scan (text: string, bounds: JsonBounds, pieceChars: number, pacer: Pacer): Promise<Container | undefined> {
  const stack: Container[] = []
  let outer: Container | undefined
  let values = 0
  let started = false
  let numberFrom = -1
  let clockAt = CLOCK_EVERY
  for (let i = 0; i < text.length; i++) {
    if (i >= clockAt) {
      clockAt = i + CLOCK_EVERY
      if (pacer.due()) await pacer.yield()
    }
    const c = text.charCodeAt(i)
    const delimiter = isWhitespace(c) || c === COMMA || c === COLON || c === QUOTE ||
      c === OPEN_OBJECT || c === CLOSE_OBJECT || c === OPEN_ARRAY || c === CLOSE_ARRAY
    if (!delimiter) {
      // A number or a literal (or what JSON.parse will refuse): one value, where it starts.
      if (numberFrom >= 0) {
        if (i - numberFrom >= LONGEST_NUMBER) throw BadRequest(`A number in the body is longer than ${LONGEST_NUMBER} characters.`)
        continue
      }
      numberFrom = i
    } else {
      numberFrom = -1
      if (isWhitespace(c)) continue
      const top = stack.at(-1)
      if (c === COMMA || c === COLON) {
        if (top === undefined) throw notJson()
        if (c === COMMA) top.commas.push(i)
        else top.colons.push(i)
        continue
      }
      if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
        if (top === undefined || top.object !== (c === CLOSE_OBJECT)) throw notJson()
        stack.pop()
        top.close = i
        if (i - top.open >= pieceChars) {
          const parent = stack.at(-1)
          if (parent !== undefined) parent.large.set(parent.commas.length, top)
          else outer = top
        }
        continue
      }
    }
    // A value starts here: one at the top level, and within the bounds.
    if (stack.length === 0) {
      if (started) throw notJson()
      started = true
    }
    if (++values > bounds.values) {
      throw PayloadTooLarge(`The request body holds more than ${bounds.values} JSON values (strings, numbers, objects, arrays); send less at once.`)
    }
    if (c === QUOTE) {
      const { end, plain } = endOfString(text, i, pieceChars)
      // A value (not an object's key) that is read without JSON.parse.
      const parent = stack.at(-1)
      if (plain && parent !== undefined && (!parent.object || parent.colons.length > parent.commas.length)) parent.plain.set(parent.commas.length, { open: i, close: end })
      i = end
    } else if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      if (stack.length >= MAX_JSON_DEPTH) {
        const field = fieldOf(text, stack[0])
        throw ValidationFailed([{ ...(field !== undefined ? { field } : {}), message: `The value is nested deeper than ${MAX_JSON_DEPTH} levels.`, error: 'ValidationError' }])
      }
      stack.push({ open: i, close: -1, object: c === OPEN_OBJECT, commas: [], colons: [], large: new Map(), plain: new Map() })
    }
  }
  if (stack.length > 0 || !started) throw notJson()
  return outer
}

function parsePiece (text: string, from: number, to: number): unknown {
  try {
    return JSON.parse(text.slice(from, to))
  } catch {
    throw notJson()
  }
}

const blank = /^\s*$/
/** What JSON forbids in a string as it is: a control character (it must be escaped). */
// eslint-disable-next-line no-control-regex -- control characters are what it looks for
const CONTROL = /[\u0000-\u001f]/

/**
 * A string longer than a piece and without escapes, read as it is (a slice
 * of the text) instead of by JSON.parse, which copies it in one go: only its
 * control characters, which JSON forbids unescaped, are looked for, a piece
 * at a time.
 */
async function plainString (text: string, open: number, close: number, pieceChars: number, pacer: Pacer): Promise<string> {
  for (let from = open + 1; from < close; from += pieceChars) {
    await pacer.pace()
    if (CONTROL.test(text.slice(from, Math.min(close, from + pieceChars)))) throw notJson()
  }
  return text.slice(open + 1, close)
}

/** Reads a body whose outer container is larger than a piece: each member parsed and checked on its own, between slices. */
class Assembly {
  readonly problems: FieldError[] = []

  constructor (private readonly text: string, private readonly pieceChars: number, private readonly pacer: Pacer) {}

  private check (value: unknown, field: string | undefined, depth: number): void {
    if (this.problems.length < 20) this.problems.push(...untrustedJsonProblems(value, { field, depth }))
  }

  /** The member between `from` and `to` of `container`, its `index`th; `field`: the top-level field it is under. */
  private async member (container: Container, index: number, from: number, to: number, field: string | undefined, depth: number): Promise<unknown> {
    await this.pacer.pace()
    const large = container.large.get(index) ?? container.plain.get(index)
    if (large === undefined) {
      const value = parsePiece(this.text, from, to)
      this.check(value, field, depth)
      return value
    }
    if (!blank.test(this.text.slice(from, large.open)) || !blank.test(this.text.slice(large.close + 1, to))) throw notJson()
    if ('object' in large) return await this.container(large as Container, field, depth)
    const value = await plainString(this.text, large.open, large.close, this.pieceChars, this.pacer)
    this.check(value, field, depth)
    return value
  }

  async container (container: Container, field: string | undefined, depth: number): Promise<unknown> {
    const ends = [container.open, ...container.commas, container.close]
    // Large only by its whitespace: `[`, a megabyte of spaces, `]`.
    const empty = ends.length === 2 && container.colons.length === 0 && container.large.size === 0 && container.plain.size === 0 && blank.test(this.text.slice(container.open + 1, container.close))
    if (empty) return container.object ? {} : []
    if (!container.object) {
      if (container.colons.length > 0) throw notJson()
      const array: unknown[] = []
      for (let m = 0; m + 1 < ends.length; m++) array.push(await this.member(container, m, ends[m] + 1, ends[m + 1], field, depth + 1))
      return array
    }
    if (container.colons.length !== container.commas.length + 1) throw notJson()
    const object: Record<string, unknown> = {}
    for (let m = 0; m + 1 < ends.length; m++) {
      const colon = container.colons[m]
      if (colon < ends[m] || colon > ends[m + 1]) throw notJson()
      const key = parsePiece(this.text, ends[m] + 1, colon)
      if (typeof key !== 'string') throw notJson()
      const under = field ?? key
      // The key is checked as the walk checks the keys it meets, with the object it names.
      this.check({ [key]: null }, field, depth)
      // As JSON.parse: an own property whatever the key (`__proto__` too, which the check above refuses), the last value of a repeated key.
      Object.defineProperty(object, key, { value: await this.member(container, m, colon + 1, ends[m + 1], under, depth + 1), writable: true, enumerable: true, configurable: true })
    }
    return object
  }
}

/**
 * A JSON request body as JSON.parse reads it, refused before it is parsed
 * when it exceeds `bounds`, and checked for what no handler should meet
 * (core/security/untrusted-input.ts). The work is linear in the text and
 * yields to the event loop between slices: a body larger than a piece is
 * parsed member by member, its outer containers assembled here.
 * Throws 400 (not JSON, too deep, untrusted text or keys) or 413 (too many values).
 */
export async function parseJsonBody (text: string, bounds: JsonBounds, pacer = new Pacer()): Promise<unknown> {
  const pieceChars = bounds.pieceChars ?? PIECE_CHARS
  const outer = await scan(text, bounds, pieceChars, pacer)
  let document: unknown
  let problems: FieldError[]
  if (outer === undefined) {
    await pacer.pace()
    document = parsePiece(text, 0, text.length)
    problems = untrustedJsonProblems(document)
  } else {
    const start = text.slice(0, outer.open)
    const end = text.slice(outer.close + 1)
    if (!blank.test(start) || !blank.test(end)) throw notJson()
    const assembly = new Assembly(text, pieceChars, pacer)
    document = await assembly.container(outer, undefined, 0)
    problems = assembly.problems.slice(0, 20)
  }
  if (problems.length > 0) throw ValidationFailed(problems)
  return document
}
