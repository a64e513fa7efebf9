// The permission model of the contract, written from docs/api.md, docs/search.md and docs/api.md
// ("Inactive content", "Denied reads"), independently of core/: the oracle of the
// authorization property tests (not a test file).

export const GLOBAL_ROLES = ['Member', 'Reviewer', 'Editor', 'Contributor', 'Site Administrator', 'Manager'] as const
export type Role = typeof GLOBAL_ROLES[number]
export type State = 'private' | 'pending' | 'published'
export const STATES: readonly State[] = ['private', 'pending', 'published']

/** Who asks: `userId` null is the anonymous caller. */
export interface Caller { userId: string | null, roles: readonly Role[] }

/** One object of the site as the oracle knows it (the talks and their folder). */
export interface Item {
  path: string
  portalType: 'talk' | 'folder'
  state: State
  /** The creator, who holds the local role Owner. */
  owner: string
  /** Epoch milliseconds; null when unset. */
  effective: number | null
  expires: number | null
  subjects: readonly string[]
  /** The words of its searchable text that the tests search for. */
  words: readonly string[]
  /** A word found only in this talk's `details`: seeing it means seeing the talk. */
  marker: string | null
  hasImage: boolean
}

/** docs/api.md: the global roles that may view an object in each state (besides its Owner). */
const VIEWING_ROLES: Record<State, readonly Role[] | 'everyone'> = {
  published: 'everyone',
  private: ['Editor', 'Site Administrator', 'Manager'],
  pending: ['Editor', 'Site Administrator', 'Manager', 'Reviewer']
}

const isOwner = (caller: Caller, item: Item): boolean => caller.userId !== null && caller.userId === item.owner

/** The View permission: it follows the workflow state only (a GET by URL answers for inactive content too). */
export function mayView (caller: Caller, item: Item): boolean {
  const roles = VIEWING_ROLES[item.state]
  return roles === 'everyone' || isOwner(caller, item) || caller.roles.some(role => roles.includes(role))
}

/** Inside its effective/expiry dates at `now`. */
export function isActive (item: Item, now: number): boolean {
  return (item.effective === null || item.effective <= now) && (item.expires === null || item.expires > now)
}

/**
 * docs/api.md, "Inactive content": Managers and Site Administrators always see it; anyone
 * else sending `show_inactive` sees only the inactive content they created.
 */
export function maySeeInactive (caller: Caller, item: Item, showInactive: boolean): boolean {
  return caller.roles.includes('Manager') || caller.roles.includes('Site Administrator') || (showInactive && isOwner(caller, item))
}

/** Whether listings and searches may show the item to the caller. */
export function isListed (caller: Caller, item: Item, now: number, showInactive: boolean): boolean {
  return mayView(caller, item) && (isActive(item, now) || maySeeInactive(caller, item, showInactive))
}

/** docs/api.md, "Denied reads": anonymous → 401 (log in), authenticated → 403. */
export function deniedStatus (caller: Caller): 401 | 403 {
  return caller.userId === null ? 401 : 403
}

/** `path` of docs/search.md: below `base` (itself included) without depth, exactly `depth` 0, else 1 to `depth` levels down. */
export function withinPath (itemPath: string, base: string, depth: number | undefined): boolean {
  const segments = (p: string): string[] => p.split('/').filter(Boolean)
  const baseSegments = segments(base)
  const itemSegments = segments(itemPath)
  if (baseSegments.some((s, i) => itemSegments[i] !== s)) return false
  const below = itemSegments.length - baseSegments.length
  if (below < 0) return false
  if (depth === undefined) return true
  return depth === 0 ? below === 0 : below >= 1 && below <= depth
}

export type FacetField = 'portal_type' | 'review_state' | 'Subject'

const facetValues: Record<FacetField, (item: Item) => readonly string[]> = {
  portal_type: item => [item.portalType],
  review_state: item => [item.state],
  Subject: item => item.subjects
}

/** Facet counts as docs/search.md describes them: over every result, values counted at least once. */
export function facetCounts (items: readonly Item[], fields: readonly FacetField[]): Record<string, Record<string, number>> {
  const facets: Record<string, Record<string, number>> = {}
  for (const field of fields) {
    const counts: Record<string, number> = {}
    for (const item of items) for (const value of facetValues[field](item)) counts[value] = (counts[value] ?? 0) + 1
    facets[field] = counts
  }
  return facets
}
