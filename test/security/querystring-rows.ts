// @querystring-search's rows for the resource-bounds suite (not a test file): every index
// with each operation its kind offers, and the extreme values a row's `v` is sent.
import type { TestApp } from '../helper.js'
import { INT_EDGES, ODD_NUMBERS, REPEATED } from './parameter-space.js'

export interface RowCombination { i: string, o: string }

/** The body's keys besides `query` (API.md's `@querystring-search`). */
export const SEARCH_BODY_KEYS = ['sort_on', 'sort_order', 'b_start', 'b_size', 'limit', 'fullobjects', 'metadata_fields']

/** A JSON value longer than any row needs, a row alone within the suite's budget of one request (SEND_BUDGET). */
const LONG = 32 * 1024
const json = (value: unknown): string => JSON.stringify(value)
const pathsTo = (depth: string): string => json(`/talks::${depth}`)

/**
 * `v` as JSON text (numbers written as a client writes them: JSON.stringify
 * cannot write 9223372036854775808 or -0): int32 and int64 edges as numbers
 * (a string is read as the same number), the odd numbers as strings, long
 * text, thousands of values, every JSON type, and a path row's depths
 * (`/talks::<depth>`).
 */
export const ROW_VALUES: string[] = [
  ...INT_EDGES,
  '-1', '0', '-0', '1.5', '1e308', '1e309',
  ...['2147483648', '-9223372036854775809', ...ODD_NUMBERS].map(json),
  json('x'.repeat(LONG)), json('9'.repeat(LONG)), json('a '.repeat(LONG / 2)),
  json(Array.from({ length: REPEATED }, (_, i) => String(i))), json(Array.from({ length: REPEATED }, (_, i) => i)),
  '[]', '[[1]]', '{}', '{"query": 1}', 'true', 'null',
  ...[...INT_EDGES.slice(0, 4), '-1', 'NaN', ''].map(pathsTo), json('/talks::1::2'), json('::1')
]

interface QuerystringIndexes { indexes: Record<string, { operations: string[] }> }

/**
 * Every catalogue index with every operation its kind offers (what
 * `@querystring` offers for an index of that kind, for indexes it keeps out
 * of query forms), in layers of rows on different indexes: a later row on an
 * index replaces an earlier one, so a request holds one row an index.
 */
export async function rowCombinations (app: TestApp): Promise<RowCombination[][]> {
  const { indexes: offered } = (await app.call('GET', '/@querystring')).json() as QuerystringIndexes
  const kindOf = (name: string): string | undefined => app.app.contentTypes.indexes.get(name)?.kind
  const byKind = new Map<string | undefined, string[]>()
  for (const [name, { operations }] of Object.entries(offered)) byKind.set(kindOf(name), [...new Set([...byKind.get(kindOf(name)) ?? [], ...operations])])
  const names = [...new Set([...Object.keys(offered), ...app.app.contentTypes.indexes.keys()])]
  const layers: RowCombination[][] = []
  for (const i of names) {
    const operations = offered[i]?.operations ?? byKind.get(kindOf(i)) ?? [...new Set([...byKind.values()].flat())]
    operations.forEach((o, n) => { (layers[n] ??= []).push({ i, o }) })
  }
  return layers
}
