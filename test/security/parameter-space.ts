// The service's parameter space, for the resource-bounds suite (not a test file): its routes as
// the OpenAPI document it serves lists them, the query parameters they take, the extreme values
// each is sent, and the group testing that sends them without a request per combination.
import type { LightMyRequestResponse } from 'fastify'
import { QUERY_PARAMETERS } from '../../core/catalog/search.js'
import type { TestApp } from '../helper.js'

export type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE'
export type Answer = LightMyRequestResponse

export interface Route {
  method: Method
  /** As the OpenAPI document writes it: `/@types/{name}`. */
  template: string
  /** With a real value for each path parameter. */
  url: string
  /** Its path parameters, and the query parameters its schema declares (`required`: those it cannot do without). */
  pathParameters: string[]
  query: string[]
  required: string[]
}

interface OpenApi { paths: Record<string, Record<string, { parameters?: Array<{ in: string, name: string, required?: boolean }> }>> }

/** The routes the service documents, each with `values` giving its path parameters. */
export async function routesOf (app: TestApp['app'], values: (parameter: string, template: string) => string): Promise<Route[]> {
  const { paths } = await app.openapi() as OpenApi
  return Object.entries(paths).flatMap(([template, operations]) => Object.entries(operations).map(([method, operation]) => {
    const parameters = operation.parameters ?? []
    const pathParameters = parameters.filter(p => p.in === 'path').map(p => p.name)
    const url = template.replace(/\{([^}]+)\}/g, (_, name: string) => values(name, template))
    const query = parameters.filter(p => p.in === 'query')
    return { method: method.toUpperCase() as Method, template, url, pathParameters, query: query.map(p => p.name), required: query.filter(p => p.required === true).map(p => p.name) }
  }))
}

/**
 * Whether the documented route takes bytes, not JSON (its body kind, plugins/app/bodies.ts: an
 * upload's PATCH), read from the routes as registered: any JSON sent to it is 415.
 */
export function takesBytes (app: TestApp['app'], method: string, template: string): boolean {
  const url = template.replace('{*}', '*').replace(/\{([^}]+)\}/g, ':$1')
  return app.bodyRoutes.some(route => route.kind === 'bytes' && route.method === method && route.url === url)
}

/** A query parameter, sent with `with` (what makes it mean something: a record's range) unless that is probed too. */
export interface Parameter { name: string, with?: Record<string, string> }

/** plone.restapi's parameters that are not catalogue indexes: a path's options, expansion, facets, highlighting, @vocabularies' filters. */
const RESTAPI_PARAMETERS = ['path.depth', 'path.level', 'path.navtree', 'path.navtree_start', 'expand', 'expand.navigation.depth', 'facet.field', 'hl.fl', 'title', 'token', 'tokens']

/**
 * Every query parameter a Plone client may send: every catalogue index the
 * service declares, plainly and as a record (its value the lower bound of a
 * range), the query-wide parameters the service knows, plone.restapi's
 * others, and whatever a route's schema declares.
 */
export function ploneParameters (app: TestApp['app'], routes: Route[]): Parameter[] {
  const indexes = [...app.contentTypes.indexes.keys()]
  const plain = [...new Set([...indexes, ...QUERY_PARAMETERS, ...RESTAPI_PARAMETERS, ...routes.flatMap(route => route.query)])]
  return [...plain.map(name => ({ name })), ...indexes.map(index => ({ name: `${index}.query`, with: { [`${index}.range`]: 'min' } }))]
}

/** The names every object inherits (and `prototype`), which a lookup by plain property finds although nobody declared them. */
export const PROTOTYPE_NAMES = [...Object.getOwnPropertyNames(Object.prototype), 'prototype']
/** A name nothing in the service has, answered as every unknown name is: what a prototype name must be answered as. */
export const UNKNOWN_NAME = 'zzNoSuchName'

/**
 * A query-string value longer than any a parameter needs; a URL longer than
 * Node's 16 kB header limit never reaches the service, so longer ones would
 * test what cannot happen.
 */
const LONG = 8000
export const INT_EDGES = ['2147483647', '2147483648', '-2147483648', '-2147483649', '9223372036854775807', '9223372036854775808', '-9223372036854775808', '-9223372036854775809']
/** What JavaScript's Number() reads although no integer parser should: exponents, hex, blanks, leading zeros, fractions, nothing. */
export const ODD_NUMBERS = ['-1', '0', '1e308', '1e309', 'Infinity', 'NaN', '0x10', '1e3', ' 1', '01', '1.5', '']
export const REPEATED = 2000

/** One way of sending a parameter: under its name plus a Zope converter (`:float`), these values (more than one: repeated). */
export interface Extreme { label: string, suffix: string, values: string[] }
const once = (value: string, suffix = ''): Extreme => ({ label: `${suffix}=${value.length > 20 ? `<${value.length} × ${value[0]}>` : JSON.stringify(value)}`, suffix, values: [value] })

export const QUERY_EXTREMES: Extreme[] = [
  ...[...INT_EDGES, ...ODD_NUMBERS].map(v => once(v)),
  once('9'.repeat(LONG)),
  once('x'.repeat(LONG)),
  ...['1e308', '1e309', 'NaN', '2147483648'].map(v => once(v, ':float')),
  once('2147483648', ':int'),
  once('9223372036854775808', ':long'),
  once('2147483647', ':list'),
  once('0001-01-01', ':date'),
  once('9999-12-31T23:59:59Z', ':date'),
  { label: `repeated ${REPEATED} times`, suffix: '', values: Array.from({ length: REPEATED }, (_, i) => i.toString(36)) },
  // A name where one belongs (sort_on, facet.field, metadata_fields, hl.fl …), the same each time.
  { label: `=UID repeated ${REPEATED} times`, suffix: '', values: Array.from({ length: REPEATED }, () => 'UID') }
]

/** The problem with an answer, or null: every answer is 2xx or 4xx, an error in the contract's `{type, message}`. */
export function problemOf (res: Answer): string | null {
  if (res.statusCode >= 500) return `${res.statusCode} ${res.body.slice(0, 160)}`
  if (res.statusCode < 400) return null
  try {
    const body = res.json()
    if (typeof body.type === 'string' && typeof body.message === 'string') return null
  } catch {}
  return `${res.statusCode} not in the contract's shape: ${res.body.slice(0, 160)}`
}

/** An error as status, type and message, without the query string a message may quote (a 404 names the URL asked for). */
const errorOf = (res: Answer): string => res.statusCode >= 400 ? `${res.statusCode} ${String(res.json().type)} ${String(res.json().message).replace(/\?\S*/g, '?')}` : String(res.statusCode)

/** The same refusal as `bare` (the route without any parameter): the parameters were not reached. */
export const sameRefusal = (res: Answer, bare: Answer): boolean => res.statusCode >= 400 && errorOf(res) === errorOf(bare)

/**
 * Group testing: `probe` answers for a set of items whether it is settled
 * (nothing wrong, and every item was reached) and the problem it shows, if
 * any. An unsettled set is halved until single items carry the problem (or
 * a set does that neither half shows: then the set is reported). A request
 * for each item (thousands a route) is needed only where every item fails.
 */
export async function isolate<T> (items: T[], probe: (subset: T[]) => Promise<{ settled: boolean, problem: string | null }>, report: (subset: T[], problem: string) => void): Promise<boolean> {
  if (items.length === 0) return false
  const { settled, problem } = await probe(items)
  if (settled) return false
  if (items.length === 1) {
    if (problem !== null) report(items, problem)
    return problem !== null
  }
  const half = Math.ceil(items.length / 2)
  const first = await isolate(items.slice(0, half), probe, report)
  const second = await isolate(items.slice(half), probe, report)
  if (problem !== null && !first && !second) report(items, problem)
  return problem !== null || first || second
}

/**
 * How two answers differ beyond the names they were asked with: status and
 * error type always, and for successes the whole body (each name written as
 * one marker in both, so that a URL echoing the query compares equal).
 */
export function differenceOf (a: Answer, b: Answer, nameA: string, nameB: string): string | null {
  if (a.statusCode !== b.statusCode) return `${a.statusCode} for '${nameA}', ${b.statusCode} for '${nameB}': ${a.body.slice(0, 120)}`
  if (a.statusCode >= 400) return a.json().type === b.json().type ? null : `${String(a.json().type)} for '${nameA}', ${String(b.json().type)} for '${nameB}'`
  const neutral = (body: string): string => body.replaceAll(nameA, '\u0001').replaceAll(nameB, '\u0001')
  return neutral(a.body) === neutral(b.body) ? null : `different bodies for '${nameA}' and '${nameB}'`
}

/**
 * A difference (`check` answers one) that shows again each of `tries` times: some answers
 * change from one moment to the next whatever was asked (a status that counts the seconds
 * its oldest pending operation has waited), while a name answered otherwise than an unknown
 * one is answered so every time.
 */
export async function persistentDifference (check: () => Promise<string | null>, tries = 3): Promise<string | null> {
  let difference = await check()
  for (let tried = 1; difference !== null && tried < tries; tried++) difference = await check()
  return difference
}

/**
 * The largest query string (or body) a probe sends at once. A real client's
 * URL ends at Node's 16 kB header limit; a few times that still reaches many
 * parameters per request with long and repeated values, and stays below
 * V8's large-object size (128 kB): larger strings, and every copy a request
 * makes of its URL, would be freed only by full collections of the heap,
 * whose pauses the suite would then measure as holds of the event loop.
 */
export const SEND_BUDGET = 64 * 1024

const encoded = new WeakMap<Extreme, { values: string[], length: number }>()
/**
 * An extreme's values percent-encoded, once: the suite builds thousands of
 * query strings on the event loop whose holds it measures, so building one
 * must cost far less than answering it.
 */
export function encodedValues (extreme: Extreme): { values: string[], length: number } {
  let known = encoded.get(extreme)
  if (known === undefined) {
    const values = extreme.values.map(encodeURIComponent)
    known = { values, length: values.reduce((n, v) => n + v.length, 0) }
    encoded.set(extreme, known)
  }
  return known
}

/** A query string: `parameters` each with every value of `extreme`, after `baseline`. */
export function queryString (baseline: Array<[string, string]>, parameters: Parameter[], extreme: Extreme): string {
  const parts = baseline.map(([name, value]) => `${encodeURIComponent(name)}=${encodeURIComponent(value)}`)
  const { values } = encodedValues(extreme)
  for (const { name } of parameters) {
    const key = `${encodeURIComponent(name + extreme.suffix)}=`
    for (const value of values) parts.push(key + value)
  }
  return parts.join('&')
}

/** `parameters` in groups whose query strings, each value sent as `extreme` says, stay within SEND_BUDGET. */
export function groupsOf (parameters: Parameter[], extreme: Extreme): Parameter[][] {
  const { values, length } = encodedValues(extreme)
  const size = (p: Parameter): number => length + values.length * (p.name.length + extreme.suffix.length + 2)
  const groups: Parameter[][] = [[]]
  let used = 0
  for (const parameter of parameters) {
    if (used + size(parameter) > SEND_BUDGET && groups[groups.length - 1].length > 0) { groups.push([]); used = 0 }
    groups[groups.length - 1].push(parameter)
    used += size(parameter)
  }
  return groups
}
