// What an answer may say of other objects, checked on whole answers against the permission
// model (not a test file): docs/api.md, "Summaries never say more than the caller may view".
// Written from the contract, independently of core/: the checks find summaries by their
// `@id`, wherever in an answer they are, so that a summary field added later is checked too.
import { isListed, mayReadHistory, mayView, parentPath, summaryIsWhole, trail, type Caller, type Item } from './permission-model.js'
import type { World } from './world.js'

/** Who reads, in which world; `staleStates`: summaries may come from a Solr that lags (states from before the last transitions). */
export interface Reading { world: World, caller: Caller, staleStates?: boolean }

/** A problem found in an answer, or null. */
export type Problem = string | null

/** The world's object that `value` (an `@id`) names: an object's URL, not a service's or a page's; the site root is nobody's secret. */
function named (world: World, value: unknown): Item | undefined {
  if (typeof value !== 'string') return undefined
  let url: URL
  try { url = new URL(value) } catch { return undefined }
  if (url.search !== '' || url.hash !== '') return undefined
  const path = url.pathname.replace('/++api++', '')
  return world.items.find(i => i.path === path)
}

const pathIn = (value: unknown): string | undefined => {
  try { return new URL(String(value)).pathname.replace('/++api++', '') || '/' } catch { return undefined }
}

/** The keys of a summary the oracle knows the values of, and where the item keeps them. */
const KNOWN: Array<[string, (item: Item) => unknown]> = [
  ['title', item => item.title],
  ['description', item => item.description],
  ['@type', item => item.portalType],
  ['review_state', item => item.state]
]

/** One summary (an object naming `item` by its `@id`): its `@id` alone when the caller may not view the item, else whole. */
function summaryProblem (r: Reading, where: string, item: Item, summary: Record<string, unknown>): Problem {
  const keys = Object.keys(summary)
  if (!summaryIsWhole(r.caller, item)) {
    return keys.length === 1 ? null : `${where} is a summary of ${item.path} (${item.state}, owner ${item.owner}: the caller may not view it) with ${keys.join(', ')}; expected its @id alone`
  }
  if (!('title' in summary)) return `${where} is a summary of ${item.path} without its title, which the caller may view (keys ${keys.join(', ')})`
  for (const [key, value] of KNOWN) {
    if (!(key in summary) || (key === 'review_state' && r.staleStates === true)) continue
    if (summary[key] !== value(item)) return `${where}.${key} is ${JSON.stringify(summary[key])}; ${item.path} has ${JSON.stringify(value(item))}`
  }
  // A full object (GET, `fullobjects`): `layout` is no catalogue metadata, so no summary has it.
  if ('layout' in summary) return fullObjectProblem(where, item, summary)
  return null
}

/** A full object (GET, `fullobjects`) names its parent by a summary, and Plone's next/previous slots are summaries or empty. */
function fullObjectProblem (where: string, item: Item, obj: Record<string, unknown>): Problem {
  const parent = obj.parent as Record<string, unknown> | undefined
  if (typeof parent !== 'object' || parent === null || pathIn(parent['@id']) !== parentPath(item.path)) {
    return `${where}.parent is ${JSON.stringify(parent)}; expected a summary of ${parentPath(item.path)}`
  }
  for (const slot of ['next_item', 'previous_item']) {
    const value = obj[slot]
    if (typeof value !== 'object' || value === null || (Object.keys(value).length > 0 && !('@id' in value))) return `${where}.${slot} is ${JSON.stringify(value)}; expected {} or a summary`
  }
  return null
}

/**
 * Every summary in an answer, at any depth: each object whose `@id` names an object of the
 * world. Batching links name pages, not objects.
 */
export function summariesProblem (r: Reading, body: unknown, where = 'answer'): Problem {
  if (Array.isArray(body)) {
    for (const [i, value] of body.entries()) {
      const problem = summariesProblem(r, value, `${where}[${i}]`)
      if (problem !== null) return problem
    }
    return null
  }
  if (typeof body !== 'object' || body === null) return null
  const summary = body as Record<string, unknown>
  const item = named(r.world, summary['@id'])
  if (item !== undefined) {
    const problem = summaryProblem(r, where, item, summary)
    if (problem !== null) return problem
  }
  for (const [key, value] of Object.entries(summary)) {
    if (key === 'batching') continue
    const problem = summariesProblem(r, value, `${where}.${key}`)
    if (problem !== null) return problem
  }
  return null
}

/**
 * `@breadcrumbs` of the object at `path`: one step for each object from the top level down
 * to it (the site root left out), in order, none left out; the walk of summariesProblem
 * decides what each step may say.
 */
export function breadcrumbsProblem (path: string, crumbs: { items?: unknown }): Problem {
  const steps = Array.isArray(crumbs.items) ? crumbs.items.map(step => pathIn((step as Record<string, unknown>)['@id'])) : undefined
  const expected = trail(path)
  return JSON.stringify(steps) === JSON.stringify(expected) ? null : `breadcrumbs ${JSON.stringify(steps)}; expected ${JSON.stringify(expected)}`
}

interface NavigationEntry { '@id'?: unknown, items?: unknown }

/**
 * `@navigation` to `depth` levels: "Home", then the tree of what the caller may see in
 * listings (docs/api.md, "@navigation"), each entry with exactly the children it may see;
 * what is below an object the caller may not see is not shown (as Plone's navigation tree).
 */
export function navigationProblem (r: Reading, depth: number, nav: { items?: unknown }, now: number): Problem {
  const entries = (Array.isArray(nav.items) ? nav.items : []) as NavigationEntry[]
  if (pathIn(entries[0]?.['@id']) !== '/') return `navigation starts with ${JSON.stringify(entries[0])}; expected Home`
  const childrenOf = (path: string): string[] => r.world.items
    .filter(i => parentPath(i.path) === path && trail(i.path).length <= depth && isListed(r.caller, i, now, false))
    .map(i => i.path).sort()
  const compare = (path: string, shown: NavigationEntry[]): Problem => {
    const paths = shown.map(entry => pathIn(entry['@id']) ?? '?').sort()
    const expected = childrenOf(path)
    if (JSON.stringify(paths) !== JSON.stringify(expected)) return `navigation below ${path} shows ${paths.join(' ') || 'nothing'}; expected ${expected.join(' ') || 'nothing'}`
    for (const entry of shown) {
      const problem = compare(pathIn(entry['@id'])!, (Array.isArray(entry.items) ? entry.items : []) as NavigationEntry[])
      if (problem !== null) return problem
    }
    return null
  }
  return compare('/', entries.slice(1))
}

/**
 * The workflow history of `item` in `@workflow`: its entries (at least its creation) for those
 * who may read it, none for anyone else; each entry names its actor by user id alone (the
 * user facts of the world are checked on every answer).
 */
export function workflowHistoryProblem (r: Reading, item: Item, history: unknown): Problem {
  if (!Array.isArray(history)) return `history is ${JSON.stringify(history)}`
  if (!mayReadHistory(r.caller, item)) return history.length === 0 ? null : `${history.length} history entries of ${item.path}; the caller may not read its history`
  if (history.length === 0) return `no history entries of ${item.path}; the caller may read its history`
  const users = new Set([...r.world.callers.map(c => c.userId), 'admin'])
  const actor = history.map(e => (e as { actor?: unknown }).actor).find(a => !users.has(a as string))
  return actor === undefined ? null : `a history entry names its actor ${JSON.stringify(actor)}; expected a user id`
}

/** What `@history` answers: its entries to those who may read them, else the denial of an object the caller may or may not view. */
export function historyStatus (r: Reading, item: Item): 'entries' | 'denied' {
  return mayView(r.caller, item) && mayReadHistory(r.caller, item) ? 'entries' : 'denied'
}

/** No answer names a user but by id (docs/api.md): no user's full name or e-mail, in any answer. */
export function userFactsProblem (r: Reading, text: string): Problem {
  const fact = r.world.userFacts.find(f => text.includes(f))
  return fact === undefined ? null : `the answer contains ${JSON.stringify(fact)}, which only @users shows`
}
