// The permission model of the contract, written from docs/api.md, docs/search.md and docs/api.md
// ("Inactive content", "Denied reads"), independently of core/: the oracle of the
// authorization property tests (not a test file).

export const GLOBAL_ROLES = ['Member', 'Reviewer', 'Editor', 'Contributor', 'Site Administrator', 'Manager'] as const
export type Role = typeof GLOBAL_ROLES[number]
export type State = 'private' | 'pending' | 'published'
export const STATES: readonly State[] = ['private', 'pending', 'published']

/** The roles the sharing page gives (docs/api.md, `@sharing`): local roles only, on a folder and what it holds. */
export const LOCAL_ROLES = ['Reader', 'Editor', 'Contributor', 'Reviewer'] as const
export type LocalRole = typeof LOCAL_ROLES[number]

/** Who asks: `userId` null is the anonymous caller; `groups`: the groups they are in. */
export interface Caller { userId: string | null, roles: readonly Role[], groups: readonly string[] }

/** Local roles by principal (a user's or a group's id, or `Authenticated`: every logged-in user). */
export type Grants = Readonly<Record<string, readonly LocalRole[]>>

/** What the sharing page set on an object: its grants, and whether it acquires those from above. */
export interface Sharing { grants: Grants, inherit: boolean }

/** One object of the site as the oracle knows it (the talks and the folders that hold them). */
export interface Item {
  path: string
  portalType: 'talk' | 'folder'
  state: State
  /** What a whole summary of it says (docs/api.md: `title`, `description`, `review_state`, `@type`). */
  title: string
  description: string
  /** The creator, who holds the local role Owner. */
  owner: string
  /** Epoch milliseconds; null when unset. */
  effective: number | null
  expires: number | null
  subjects: readonly string[]
  /** The words of its searchable text that the tests search for. */
  words: readonly string[]
  /**
   * A word found only in this object (a talk's `details` and `description`, a folder's `title`
   * and `description`): seeing it means seeing the object.
   */
  marker: string | null
  hasImage: boolean
  /** What the sharing page set on it. */
  sharing: Sharing
  /** The local roles in force on it: `inForce` of its lineage. */
  roles: Grants
}

/**
 * docs/api.md (`@sharing`, Plone's sharing page): the local roles in force on the last object
 * of a lineage (the site root first) are its own grants and those it acquires — the grants in
 * force on its parent — unless it does not inherit, which leaves those above out (on it and
 * below it: what it holds acquires from it).
 */
export function inForce (lineage: readonly Sharing[]): Grants {
  let roles: Record<string, LocalRole[]> = {}
  for (const { grants, inherit } of lineage) {
    if (!inherit) roles = {}
    for (const [principal, granted] of Object.entries(grants)) roles[principal] = [...new Set([...(roles[principal] ?? []), ...granted])]
  }
  return roles
}

/** The principals a caller stands for in local roles: their id, their groups' and `Authenticated`; none for the anonymous caller. */
const principalsOf = (caller: Caller): string[] => caller.userId === null ? [] : [caller.userId, ...caller.groups, 'Authenticated']

/** docs/api.md: local roles and group membership count for every permission, besides the global roles. */
function rolesOn (caller: Caller, item: Item): Set<string> {
  return new Set<string>([...caller.roles, ...principalsOf(caller).flatMap(p => Object.hasOwn(item.roles, p) ? item.roles[p] : [])])
}

/** docs/api.md: the roles that may view an object in each state (besides its Owner); "private and pending content is also seen by Readers". */
const VIEWING_ROLES: Record<State, readonly string[] | 'everyone'> = {
  published: 'everyone',
  private: ['Editor', 'Site Administrator', 'Manager', 'Reader'],
  pending: ['Editor', 'Site Administrator', 'Manager', 'Reviewer', 'Reader']
}

const isOwner = (caller: Caller, item: Item): boolean => caller.userId !== null && caller.userId === item.owner

/** The View permission: it follows the workflow state and the caller's roles there (a GET by URL answers for inactive content too). */
export function mayView (caller: Caller, item: Item): boolean {
  const viewers = VIEWING_ROLES[item.state]
  return viewers === 'everyone' || isOwner(caller, item) || [...rolesOn(caller, item)].some(role => viewers.includes(role))
}

/**
 * docs/api.md, "Summaries never say more than the caller may view": a summary of an object
 * (its parent, a breadcrumb, a listed item …) is whole when the caller may view the object (a
 * GET of it would answer 200, its dates aside), else it is its `@id` alone.
 */
export function summaryIsWhole (caller: Caller, item: Item): boolean {
  return mayView(caller, item)
}

/**
 * docs/api.md, `@history` and `@workflow`: the workflow history is read by those who may
 * review (Reviewer and up) or request review (the Owner, Editors and up) of the object.
 */
export function mayReadHistory (caller: Caller, item: Item): boolean {
  return isOwner(caller, item) || [...rolesOn(caller, item)].some(role => ['Reviewer', 'Editor', 'Site Administrator', 'Manager'].includes(role))
}

/** The path of the folder that holds the object at `path` ('/' for the top level). */
export const parentPath = (path: string): string => path.slice(0, path.lastIndexOf('/')) || '/'

/** The paths from the top level down to `path`, itself included (the site root left out): a breadcrumb trail. */
export const trail = (path: string): string[] => path.split('/').filter(Boolean).map((_, i, segments) => '/' + segments.slice(0, i + 1).join('/'))

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
