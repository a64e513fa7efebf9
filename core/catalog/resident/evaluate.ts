import type { Access, Criterion, Query } from '../../query/model.js'
import { pathLevels } from '../../query/path-levels.js'
import type { Scalar } from '../../query/index-kinds.js'
import type { IndexDefinition } from '../indexes.js'
import { Bits } from './bits.js'
import type { Column } from './column.js'
import { compareText } from './text-order.js'
import type { ResidentState } from './state.js'

/** A date as the resident columns hold it: microseconds since the epoch. */
export const microseconds = (date: Date): number => date.getTime() * 1000

/** A list of strings holds a value. */
const holds = (values: unknown, value: string): boolean => Array.isArray(values) && values.includes(value)

/**
 * The documents a query matches, as CatalogSearch's WHERE clause would find
 * them at `now` (the security filter, the effective-date filter, each
 * criterion); null when a criterion is one the resident catalogue leaves to
 * PostgreSQL (words within a text, a text range under a collation other
 * than C, full text it cannot be sure of). `read`: the pairs of adjacent
 * words its phrases need, read just before (TextIndex.readPairs).
 */
export function matchesOf (state: ResidentState, query: Query, now: Date, read?: ReadonlyMap<number, Bits>): Bits | null {
  const sets: Bits[] = [accessOf(state, query, now)]
  for (const criterion of query.criteria) {
    const set = criterionSet(state, criterion, read)
    if (set === null) return null
    sets.push(set)
  }
  // The smallest first: the intersection never grows.
  sets.sort((a, b) => a.words.length - b.words.length)
  const result = sets[0].temporaryClone()
  for (const set of sets.slice(1)) result.and(set)
  return result
}

/** The caller's principals against allowedRolesAndUsers, and (unless shown) only what is active at `now` or, with showInactiveOf, created by that user. */
function accessOf (state: ResidentState, access: Access, now: Date): Bits {
  // One filter a principal, shared by every caller who has it (a role, Anonymous); their union is a few word operations.
  const permitted = union(state, [...new Set(access.principals)].map(principal => keywordAtom(state, 'allowedRolesAndUsers', principal)))
  if (access.showInactive) return permitted
  const inactive = state.activity.inactiveAt(microseconds(now), state.live)
  if (access.showInactiveOf === undefined) return permitted.andNot(inactive)
  // The inactive documents are few: those of another creator are found among them, not by a filter of the owner's over every document.
  const creator = state.column('Creator')
  const owner = access.showInactiveOf
  const othersInactive = Bits.temporary(inactive.capacity)
  inactive.forEach(doc => { if (creator?.holds(doc, owner) !== true) othersInactive.add(doc) })
  return permitted.andNot(othersInactive)
}

function criterionSet (state: ResidentState, criterion: Criterion, read?: ReadonlyMap<number, Bits>): Bits | null {
  switch (criterion.kind) {
    case 'nothing': return new Bits()
    case 'words': return null
    case 'fullText': return state.text.matches(criterion.text, state.live, read)
    case 'path': return union(state, criterion.paths.map(path => pathAtom(state, path, criterion.depth)))
    case 'keywords': {
      const held = state.column(criterion.index.name)
      const sets = criterion.values.map(value => keywordAtom(state, criterion.index.name, value))
      if (!criterion.all) return union(state, sets)
      // `@>` of no values: every document with a list.
      if (sets.length === 0) return scan(state, doc => held?.get(doc) !== null)
      return sets.reduce((all, set) => all.and(set), sets[0].temporaryClone())
    }
    case 'flag': {
      const held = state.column(criterion.index.name)
      return state.atoms.get({ key: `flag\u0000${criterion.index.name}\u0000${String(criterion.value)}`, columns: [criterion.index.name], test: doc => held?.get(doc) === criterion.value }, state.live)
    }
    case 'anyOf': return anyOf(state, criterion.index, criterion.values)
    case 'range': return range(state, criterion.index, criterion.min, criterion.max)
  }
}

/** The filter of one value of a keyword index, read from the documents that hold it. */
function keywordAtom (state: ResidentState, name: string, value: string): Bits {
  const held = state.column(name)
  const docsWith = held?.docsWith
  return state.atoms.get({
    key: `kw\u0000${name}\u0000${value}`,
    columns: [name],
    gate: { column: name, value },
    test: doc => holds(held?.get(doc), value),
    ...docsWith !== undefined ? { candidates: () => docsWith.call(held, value) } : {}
  }, state.live)
}

const union = (state: ResidentState, sets: Bits[]): Bits => sets.reduce((all, set) => all.or(set), Bits.temporary(state.live.capacity))

/** Every live document that passes `test`: a scan, not kept (a range is rarely asked twice). */
function scan (state: ResidentState, test: (doc: number) => boolean): Bits {
  const set = Bits.temporary(state.live.capacity)
  state.live.forEach(doc => { if (test(doc)) set.add(doc) })
  return set
}

function pathAtom (state: ResidentState, path: string, depth: number): Bits {
  const parents = state.column('path_parents')
  const depths = state.column('path_depth')
  const levels = pathLevels(path, depth)
  const docsWith = parents?.docsWith
  return state.atoms.get({
    key: `path\u0000${path}\u0000${depth}`,
    columns: ['path_parents', 'path_depth'],
    gate: { column: 'path_parents', value: path },
    ...docsWith !== undefined ? { candidates: () => docsWith.call(parents, path) } : {},
    test: doc => {
      if (!holds(parents?.get(doc), path)) return false
      if (levels === null) return true
      const level = depths?.get(doc)
      return typeof level === 'number' && level >= levels.first && level <= levels.last
    }
  }, state.live)
}

/** A query value as the column holds it: dates in microseconds, numbers as numbers, the rest as text. */
function heldValue (index: IndexDefinition, value: Scalar): string | number | boolean {
  if (value instanceof Date) return microseconds(value)
  if (index.kind === 'date' || index.kind === 'int' || index.kind === 'long') return Number(value)
  if (index.kind === 'boolean') return value
  return String(value)
}

/**
 * What a document must pass to be at or after the first place a match of
 * `query` can hold in the order of `index` (`descending` or ascending),
 * when the query bounds that index's own values by a range (a date range
 * sorted by that date): its low end ascending, its high end descending;
 * nulls, last either way, pass. Null when no range bounds it.
 */
export function rangeStart (state: ResidentState, query: Query, index: IndexDefinition, descending: boolean): ((doc: number) => boolean) | null {
  const held = state.column(index.name)
  if (held?.compareTo === undefined) return null
  // A recurring event's first start may lie before a range its later occurrences fall in: its place in the order is not bounded by the range.
  const further = index.occurrences === undefined ? undefined : state.column(index.occurrences.name)
  if (further !== undefined && further.empty !== true) return null
  for (const criterion of query.criteria) {
    if (criterion.kind !== 'range' || criterion.index.name !== index.name) continue
    const end = descending ? criterion.max : criterion.min
    const bound = end === undefined ? undefined : heldValue(index, end)
    if (bound !== undefined && !Number.isNaN(bound)) return atOrPast(held, bound, descending)
  }
  return null
}

/** Whether a document's value is at or past `bound` along the column's order, ascending or descending (nulls, last either way, pass). */
function atOrPast (held: Column, bound: string | number | boolean, descending: boolean): (doc: number) => boolean {
  const compareTo = held.compareTo as NonNullable<Column['compareTo']>
  return doc => held.isNull(doc) || (descending ? compareTo.call(held, doc, bound) <= 0 : compareTo.call(held, doc, bound) >= 0)
}

function anyOf (state: ResidentState, index: IndexDefinition, values: Scalar[]): Bits | null {
  const held = state.column(index.name)
  if (held === undefined) return null
  // One uid is one document: no filter to read and keep.
  if (index.name === 'UID') {
    const set = Bits.temporary(state.live.capacity)
    for (const value of values) {
      const doc = state.docNumber(String(value).toLowerCase())
      if (doc !== undefined) set.add(doc)
    }
    return set
  }
  return union(state, values.map(value => {
    const wanted = heldValue(index, value)
    // Text is compared where the column keeps it (as bytes: no string made a document).
    const test = typeof wanted === 'string' ? (doc: number) => held.holds(doc, wanted) : (doc: number) => held.get(doc) === wanted
    return state.atoms.get({ key: `eq\u0000${index.name}\u0000${String(wanted)}`, columns: [index.name], test }, state.live)
  }))
}

/** The documents whose value of `index`, or any further occurrence of it (a recurring date), lies within the bounds. */
function range (state: ResidentState, index: IndexDefinition, min?: Scalar, max?: Scalar): Bits | null {
  const held = state.column(index.name)
  if (held === undefined || (index.kind === 'field' && !state.sortsText)) return null
  const low = min === undefined ? undefined : heldValue(index, min)
  const high = max === undefined ? undefined : heldValue(index, max)
  // A bound that is not a number matches no number (as `value >= NaN` is false).
  if (Number.isNaN(low) || Number.isNaN(high)) return Bits.temporary(0)
  const own = valueRange(state, index, held, low, high)
  const further = index.occurrences === undefined ? undefined : state.column(index.occurrences.name)
  if (further === undefined || further.empty === true || further.within === undefined) return own
  return own.or(further.within(state.live, low as number | undefined, high as number | undefined))
}

/** The documents whose own value of `index` (held in `held`) lies within the bounds, read as the column holds them. */
function valueRange (state: ResidentState, index: IndexDefinition, held: Column, low?: string | number | boolean, high?: string | number | boolean): Bits {
  const order = state.orders.get(index.name)
  const compareTo = held.compareTo
  if (order !== undefined && compareTo !== undefined) {
    // The documents of the range lie together in the column's order: found by two searches, not a test of every document.
    const set = Bits.temporary(state.live.capacity)
    order.between(
      low === undefined ? () => true : atOrPast(held, low, false),
      doc => held.isNull(doc) || (high !== undefined && compareTo.call(held, doc, high) > 0),
      doc => { set.add(doc) })
    return set
  }
  if (held.within !== undefined && typeof (low ?? 0) === 'number' && typeof (high ?? 0) === 'number') {
    return held.within(state.live, low as number | undefined, high as number | undefined)
  }
  const compareScalars = (a: string | number | boolean, b: string | number | boolean): number =>
    typeof a === 'string' && typeof b === 'string' ? compareText(a, b) : Number(a) - Number(b)
  return scan(state, doc => {
    const value = held.get(doc)
    if (value === null || Array.isArray(value)) return false
    const scalar = value as string | number | boolean
    return (low === undefined || compareScalars(scalar, low) >= 0) && (high === undefined || compareScalars(scalar, high) <= 0)
  })
}
