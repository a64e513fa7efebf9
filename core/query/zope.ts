import { BadRequest } from '../errors.js'
import { assertPlainName } from '../security/untrusted-input.js'

/** Zope's boolean spellings (ZPublisher / plone.restapi's BooleanIndex adapter). */
const TRUE = new Set(['1', 'y', 'yes', 't', 'true', 'on', 'enabled', 'active'])
const FALSE = new Set(['0', 'n', 'no', 'f', 'false', 'off', 'disabled', 'inactive', ''])

/** A parameter's value as text; a record (`name.key=…`) where a plain value belongs is the client's mistake. */
export function textOf (value: unknown, name: string): string {
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
    throw BadRequest(`The query parameter '${name}' takes a value, not a record ('${name}.<key>=…').`)
  }
  return String(value)
}

export function parseBoolean (value: unknown, name: string): boolean {
  if (typeof value === 'boolean') return value
  const text = textOf(value, name).toLowerCase()
  if (TRUE.has(text)) return true
  if (FALSE.has(text)) return false
  throw BadRequest(`Could not parse value '${String(value)}' of '${name}' as a boolean.`)
}

/** The catalogue's and Solr's integers are 32-bit: larger values would fail there, not here. */
export const INT32_MAX = 2 ** 31 - 1
/** Its 64-bit integers (`long`) are read as JavaScript numbers, which are exact up to 2^53. */
export const LONG = 2 ** 53

/** An integer parameter: decimal digits with an optional minus sign (blanks around are ignored), in [-bound, bound): 32-bit unless said otherwise. */
export function parseInteger (value: unknown, name: string, bound = INT32_MAX + 1): number {
  const text = textOf(value, name).trim()
  if (!/^-?\d+$/.test(text)) throw BadRequest(`Invalid ${name}: not an integer ('${text.length > 40 ? `${text.slice(0, 40)}…` : text}').`)
  const n = Number(text)
  if (n < -bound || n >= bound) throw BadRequest(`Invalid ${name}: ${text.length > 40 ? `${text.slice(0, 40)}…` : text} is out of range (${bound === LONG ? 'beyond 2^53' : 'a 32-bit integer'}).`)
  return n
}

/**
 * A date as Zope's DateTime would read it (ISO 8601 and what JavaScript parses),
 * limited to the years 1–9999 that both the catalogue and Solr can store.
 */
export function parseDate (value: unknown, name: string): Date {
  const date = value instanceof Date ? value : new Date(textOf(value, name).trim())
  const year = date.getUTCFullYear()
  if (Number.isNaN(date.getTime()) || year < 1 || year > 9999) {
    throw BadRequest(`Could not parse value '${String(value)}' of '${name}' as a date.`)
  }
  return date
}

/** ZPublisher's type converters (`name:int`); a Map, so that `name:constructor` finds nothing. */
const CONVERTERS = new Map<string, (value: unknown, name: string) => unknown>([
  ['int', parseInteger],
  ['long', (value, name) => parseInteger(value, name, LONG)],
  ['float', (value, name) => {
    const n = Number(value)
    if (String(value).trim() === '' || Number.isNaN(n)) throw BadRequest(`Invalid ${name}: not a number ('${String(value)}').`)
    return n
  }],
  ['boolean', parseBoolean],
  ['date', (value, name) => parseDate(value, name).toISOString()],
  ['string', value => String(value)],
  ['text', value => String(value)],
  ['tokens', value => String(value).split(/\s+/).filter(Boolean)]
])

/** Flags that only tell ZPublisher how to build a record or a form: nothing to do here. */
const IGNORED_FLAGS = new Set(['record', 'records', 'required', 'action', 'default', 'ignore_empty'])
const LIST_FLAGS = new Set(['list', 'tuple', 'lines'])

/** An object whose keys come from outside: no prototype, so that no key can reach one. */
const record = (): Record<string, unknown> => Object.create(null) as Record<string, unknown>

/** Parameters whose dots are part of their name, not Zope's record syntax. */
const DOTTED_NAMES = /^(facet|hl)\./

/**
 * Zope-style marshalling of a query string (ZPublisher): `name:list`,
 * `name:int`, `name:boolean` …, repeated names as lists, and dotted names
 * unflattened (`path.query=/a&path.depth=1` → `{path: {query: '/a', depth: 1}}`).
 */
export function parseZopeQuery (params: URLSearchParams): Record<string, unknown> {
  const result = record()
  const put = (target: Record<string, unknown>, key: string, value: unknown, asList: boolean): void => {
    const existing = target[key]
    if (existing === undefined) target[key] = asList ? [value] : value
    else if (Array.isArray(existing)) existing.push(value)
    // A plain value after `name.option=…` joins the record's query (Plone would drop the record).
    else if (typeof existing === 'object' && existing !== null) put(existing as Record<string, unknown>, 'query', value, asList)
    else target[key] = [existing, value]
  }
  for (const [rawKey, rawValue] of params) {
    // PostgreSQL text cannot hold NUL: refuse it here rather than fail in the database.
    if (rawKey.includes('\0') || rawValue.includes('\0')) throw BadRequest(`The query parameter '${rawKey.replace(/\0/g, '')}' contains a NUL character.`)
    const [name, ...flags] = rawKey.split(':')
    let value: unknown = rawValue
    let asList = false
    for (const flag of flags) {
      const convert = CONVERTERS.get(flag)
      if (LIST_FLAGS.has(flag)) asList = true
      else if (IGNORED_FLAGS.has(flag)) continue
      else if (convert !== undefined) value = convert(value, name)
      else throw BadRequest(`Unknown type converter ':${flag}' in '${rawKey}'.`)
    }
    const dot = name.indexOf('.')
    if (dot > 0 && !DOTTED_NAMES.test(name)) {
      const base = name.slice(0, dot)
      const sub = name.slice(dot + 1)
      assertPlainName(base, rawKey)
      assertPlainName(sub, rawKey)
      const current = result[base]
      let target: Record<string, unknown>
      if (typeof current === 'object' && current !== null && !Array.isArray(current)) target = current as Record<string, unknown>
      else {
        target = record()
        if (current !== undefined) target.query = current
      }
      result[base] = target
      put(target, sub, value, asList)
    } else {
      assertPlainName(name, rawKey)
      put(result, name, value, asList)
    }
  }
  return result
}
