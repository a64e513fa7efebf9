import { BadRequest } from './errors.js'

/** Zope's boolean spellings (ZPublisher / plone.restapi's BooleanIndex adapter). */
const TRUE = new Set(['1', 'y', 'yes', 't', 'true', 'on', 'enabled', 'active'])
const FALSE = new Set(['0', 'n', 'no', 'f', 'false', 'off', 'disabled', 'inactive', ''])

export function parseBoolean (value: unknown, name: string): boolean {
  if (typeof value === 'boolean') return value
  const text = String(value).toLowerCase()
  if (TRUE.has(text)) return true
  if (FALSE.has(text)) return false
  throw BadRequest(`Could not parse value '${String(value)}' of '${name}' as a boolean.`)
}

/** The catalogue's integers are 32-bit: larger values would fail in the database, not here. */
const INT32 = 2 ** 31

export function parseInteger (value: unknown, name: string): number {
  const text = String(value).trim()
  if (!/^-?\d+$/.test(text)) throw BadRequest(`Invalid ${name}: not an integer ('${text}').`)
  const n = Number(text)
  if (n < -INT32 || n >= INT32) throw BadRequest(`Invalid ${name}: ${text} is out of range.`)
  return n
}

/**
 * A date as Zope's DateTime would read it (ISO 8601 and what JavaScript parses),
 * limited to the years 1–9999 that both the catalogue and Solr can store.
 */
export function parseDate (value: unknown, name: string): Date {
  const date = value instanceof Date ? value : new Date(String(value).trim())
  const year = date.getUTCFullYear()
  if (Number.isNaN(date.getTime()) || year < 1 || year > 9999) {
    throw BadRequest(`Could not parse value '${String(value)}' of '${name}' as a date.`)
  }
  return date
}

const CONVERTERS: Record<string, (value: unknown, name: string) => unknown> = {
  int: parseInteger,
  long: parseInteger,
  float: (value, name) => {
    const n = Number(value)
    if (String(value).trim() === '' || Number.isNaN(n)) throw BadRequest(`Invalid ${name}: not a number ('${String(value)}').`)
    return n
  },
  boolean: parseBoolean,
  date: (value, name) => parseDate(value, name).toISOString(),
  string: value => String(value),
  text: value => String(value),
  tokens: value => String(value).split(/\s+/).filter(Boolean)
}

/** Parameters whose dots are part of their name, not Zope's record syntax. */
const DOTTED_NAMES = /^(facet|hl)\./

/**
 * Zope-style marshalling of a query string (ZPublisher): `name:list`,
 * `name:int`, `name:boolean` …, repeated names as lists, and dotted names
 * unflattened (`path.query=/a&path.depth=1` → `{path: {query: '/a', depth: 1}}`).
 */
export function parseZopeQuery (params: URLSearchParams): Record<string, unknown> {
  const result: Record<string, unknown> = {}
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
      if (flag === 'list' || flag === 'tuple' || flag === 'lines') asList = true
      else if (flag === 'record' || flag === 'records' || flag === 'required' || flag === 'action' || flag === 'default' || flag === 'ignore_empty') continue
      else if (CONVERTERS[flag] !== undefined) value = CONVERTERS[flag](value, name)
      else throw BadRequest(`Unknown type converter ':${flag}' in '${rawKey}'.`)
    }
    const dot = name.indexOf('.')
    if (dot > 0 && !DOTTED_NAMES.test(name)) {
      const base = name.slice(0, dot)
      const sub = name.slice(dot + 1)
      const current = result[base]
      const record: Record<string, unknown> = typeof current === 'object' && current !== null && !Array.isArray(current)
        ? current as Record<string, unknown>
        : (current === undefined ? {} : { query: current })
      result[base] = record
      put(record, sub, value, asList)
    } else {
      put(result, name, value, asList)
    }
  }
  return result
}
