import { escapeLike, type Queryable } from '../db/db.js'
import type { ContentStore } from '../content/store.js'
import type { Located } from '../content/rows.js'
import { pathParents } from '../content/paths.js'
import { BadRequest, Forbidden, NotFound } from '../errors.js'
import { acquiring, allows, AUTHENTICATED_GROUP, Permission, rolesOn, SITE_ROLE_MAP, userPrincipal, type LocalRoles, type Principal } from './roles.js'
import { can } from './permissions.js'
import { reindexSubtreeAccess } from './subtree-access.js'

/** The roles the sharing page manages, with their titles (plone.app.workflow's ISharingPageRole utilities), by id. */
export const SHARING_ROLES = [
  { id: 'Contributor', title: 'Can add' },
  { id: 'Editor', title: 'Can edit' },
  { id: 'Reader', title: 'Can view' },
  { id: 'Reviewer', title: 'Can review' }
] as const

/** CMFPlone's rolemap: "Sharing page: Delegate roles", and the permission to delegate each managed role. */
const DELEGATORS = SITE_ROLE_MAP[Permission.DelegateRoles]
const DELEGATE_ROLE: Record<string, readonly string[]> = { Contributor: DELEGATORS, Editor: DELEGATORS, Reader: DELEGATORS, Reviewer: ['Manager', 'Site Administrator', 'Reviewer'] }

/** Principals an object may grant local roles to, and principals a search answers (of each kind). */
export const MAX_PRINCIPALS_PER_OBJECT = 500
export const MAX_SEARCHED = 100

export type RoleSetting = boolean | 'global' | 'acquired'
export interface SharingEntry { id: string, type: 'user' | 'group', title: string, login?: string | null, disabled?: boolean, roles: Record<string, RoleSetting> }
export interface SharingChange { entries?: Array<{ id: string, roles: Record<string, RoleSetting> }>, inherit?: boolean }
interface Known { type: 'user' | 'group', id: string, title: string, roles: string[] }

const rolesHere = (who: Principal, located: Located): Set<string> =>
  rolesOn(who, located.obj.owner, acquiring(located.lineage).map(o => o.local_roles))

/** "Sharing page: Delegate roles": whether the caller may see and change the object's sharing. */
export const mayShare = (who: Principal, located: Located): boolean => allows(DELEGATORS, rolesHere(who, located))

/** The managed roles the caller may grant or take here: one must hold a delegating role (no escalation). */
export function delegable (who: Principal, located: Located): string[] {
  const roles = rolesHere(who, located)
  return SHARING_ROLES.map(r => r.id).filter(id => allows(DELEGATE_ROLE[id], roles))
}

/** The key a content type's declaration may use for every logged-in user (core/content/declaration.ts): the sharing page's AuthenticatedUsers. */
const AUTHENTICATED_KEY = 'Authenticated'

const principalId = (key: string): string | null => key === AUTHENTICATED_KEY ? AUTHENTICATED_GROUP : key.startsWith('user:') ? key.slice('user:'.length) : null

/** The users and groups these ids name (one statement); the virtual group of every logged-in user among them. */
async function known (q: Queryable, ids: string[]): Promise<Map<string, Known>> {
  const { rows } = await q.query<Known>(`SELECT 'user' AS type, id, COALESCE(NULLIF(fullname, ''), id) AS title, roles FROM users WHERE id = ANY($1::text[])
    UNION ALL SELECT 'group', id, COALESCE(NULLIF(title, ''), id), roles FROM groups WHERE id = ANY($1::text[])`, [ids])
  const result = new Map(rows.map(r => [r.id, r]))
  if (ids.includes(AUTHENTICATED_GROUP)) result.set(AUTHENTICATED_GROUP, { type: 'group', id: AUTHENTICATED_GROUP, title: 'Logged-in users', roles: [] })
  return result
}

/** A principal a search found, with what `@principals` shows of it. */
export interface Found extends Known { fullname: string | null, email: string | null, description: string | null }

/** Users (by id, name or e-mail) and groups (by id or title) whose text contains `text`, MAX_SEARCHED of each. */
export async function searchPrincipals (q: Queryable, text: string): Promise<Found[]> {
  const { rows } = await q.query<Found>(`(SELECT 'user' AS type, id, COALESCE(NULLIF(fullname, ''), id) AS title, roles, fullname, email, description FROM users
      WHERE id ILIKE '%' || $1 || '%' OR fullname ILIKE '%' || $1 || '%' OR email ILIKE '%' || $1 || '%' ORDER BY id LIMIT ${MAX_SEARCHED})
    UNION ALL (SELECT 'group', id, COALESCE(NULLIF(title, ''), id), roles, NULL, email, description FROM groups
      WHERE id ILIKE '%' || $1 || '%' OR title ILIKE '%' || $1 || '%' ORDER BY id LIMIT ${MAX_SEARCHED})`, [escapeLike(text)])
  return rows
}

/**
 * Plone's sharing page (plone.app.workflow) on the content tree: local roles
 * stored on an object (`content.local_roles`, principal `user:<id>` → roles)
 * and the blocking of those acquired from above (`local_roles_block`). A
 * change re-computes who may view the object and everything inside it,
 * set-based (core/security/subtree-access.ts).
 */
export class Sharing {
  constructor (private readonly store: ContentStore, private readonly q: Queryable) {}

  /** What `@sharing` answers: the principals with roles here (local or acquired), and those `search` finds. */
  async settings (located: Located, who: Principal, search?: string): Promise<{ available_roles: Array<{ id: string, title: string }>, entries: SharingEntry[], inherit: boolean }> {
    const available = delegable(who, located)
    const { obj } = located
    const above = acquiring(located.lineage).filter(o => o !== obj)
    const inherited = obj.local_roles_block === true ? [] : above
    const acquired = rolesByPrincipal(inherited.map(o => o.local_roles))
    const local = rolesByPrincipal([obj.local_roles])
    const ids = [...new Set([...acquired.keys(), ...local.keys(), AUTHENTICATED_GROUP])]
    const principals = await known(this.q, ids)
    const entries: SharingEntry[] = []
    for (const id of ids) {
      const principal = principals.get(id) ?? { type: 'user' as const, id, title: id, roles: [] }
      const roles: Record<string, RoleSetting> = {}
      let held = false
      // As plone.app.workflow: a global role shows as such, then an acquired one, then a local one.
      for (const role of available) {
        const setting: RoleSetting = principal.roles.includes(role) ? 'global' : acquired.get(id)?.has(role) === true ? 'acquired' : local.get(id)?.has(role) === true
        roles[role] = setting
        if (setting === 'acquired' || setting === true) held = true
      }
      if (!held && id !== AUTHENTICATED_GROUP) continue
      const login = principal.type === 'group' ? null : id
      entries.push({ id, type: principal.type, title: principal.title, ...(login !== principal.title ? { login } : {}), disabled: id === who.userId, roles })
    }
    if (search !== undefined && search !== '') {
      const listed = new Set(entries.map(e => `${e.type}:${e.id}`))
      for (const found of await searchPrincipals(this.q, search)) {
        if (listed.has(`${found.type}:${found.id}`)) continue
        const roles = Object.fromEntries(available.map(role => [role, found.roles.includes(role) ? 'global' as const : false]))
        entries.push({ id: found.id, type: found.type, title: found.title, login: found.type === 'group' ? null : found.id, roles })
      }
    }
    entries.sort((a, b) => compare(a.type + a.title, b.type + b.title))
    return { available_roles: SHARING_ROLES.filter(r => available.includes(r.id)).map(r => ({ ...r })), entries, inherit: obj.local_roles_block !== true }
  }

  /**
   * Changes the object's local roles and inheritance as plone.restapi's
   * deserializer does: of the managed roles, each entry sets those it marks
   * `true` and removes the others — those the caller may delegate only (the
   * rest stay as they are); a role outside them is 400. Inheritance needs
   * "Modify portal content"; blocking it copies the caller's acquired roles
   * onto the object, so that nobody locks themself out (plone.app.workflow).
   * Checked and written against the object as it is now, locked.
   */
  async update (path: string, who: Principal, change: SharingChange): Promise<void> {
    await this.store.write(async write => {
      // Top down, as moves, deletes and the writes' guards lock: the folders above first (held for the
      // re-index, core/security/subtree-access.ts), then the object. Locking the object first waited
      // crosswise with a move of a folder above it, which holds that folder and then wants the object.
      await write.tx.query('SELECT 1 FROM content WHERE path = ANY($1) AND path <> $2 ORDER BY path FOR SHARE', [pathParents(path), path])
      const { rows: [row] } = await write.tx.query<{ uid: string }>('SELECT uid FROM content WHERE path = $1 FOR UPDATE', [path])
      const located = row === undefined ? null : (await this.store.locate(path, write.tx)).found
      if (located === null) throw NotFound(path, `${path} was deleted while the request ran.`)
      if (!mayShare(who, located)) throw Forbidden(`You may not change the sharing of ${path}.`)
      const { obj } = located
      const roles: LocalRoles = structuredClone(obj.local_roles)
      let block = obj.local_roles_block === true
      if (change.inherit !== undefined && change.inherit === block) {
        // "Modify portal content", as plone.app.workflow's update_inherit asks.
        if (!can(who, Permission.Modify, located)) throw Forbidden(`You may not change the inheritance of roles on ${path}.`)
        if (!change.inherit && who.userId !== null) keepOwnRoles(roles, who, located)
        block = !change.inherit
      }
      await this.apply(write.tx, roles, change.entries ?? [], delegable(who, located))
      if (JSON.stringify(roles) === JSON.stringify(obj.local_roles) && block === (obj.local_roles_block === true)) return
      await write.tx.query('UPDATE content SET local_roles = $2, local_roles_block = $3 WHERE uid = $1', [obj.uid, JSON.stringify(roles), block])
      await reindexSubtreeAccess(write, path, r => this.store.typeOf(r))
    })
  }

  private async apply (q: Queryable, roles: LocalRoles, entries: NonNullable<SharingChange['entries']>, delegated: string[]): Promise<void> {
    const managed: readonly string[] = SHARING_ROLES.map(r => r.id)
    const granting = new Set<string>()
    for (const entry of entries) {
      const key = userPrincipal(entry.id)
      const wanted = new Set(Object.entries(entry.roles).filter(([, value]) => value === true).map(([role]) => role))
      const unknown = [...wanted].find(role => !managed.includes(role))
      if (unknown !== undefined) throw BadRequest(`The role '${unknown}' cannot be granted on the sharing page (only ${managed.join(', ')}).`)
      const existing = Object.hasOwn(roles, key) ? roles[key] : []
      // What a declaration granted every logged-in user is the same principal's: it moves to the key the sharing page writes.
      if (entry.id === AUTHENTICATED_GROUP && Object.hasOwn(roles, AUTHENTICATED_KEY)) {
        existing.push(...roles[AUTHENTICATED_KEY].filter(role => !existing.includes(role)))
        delete roles[AUTHENTICATED_KEY]
      }
      // Roles the caller may not delegate stay as they are, granted or not (Plone's managed roles).
      const next = new Set(existing.filter(role => !delegated.includes(role)))
      for (const role of wanted) if (delegated.includes(role)) next.add(role)
      if ([...next].some(role => !existing.includes(role))) granting.add(entry.id)
      if (next.size === 0) delete roles[key]
      else roles[key] = [...next].sort()
    }
    if (Object.keys(roles).length > MAX_PRINCIPALS_PER_OBJECT) throw BadRequest(`An object grants local roles to ${MAX_PRINCIPALS_PER_OBJECT} principals at most.`)
    // A grant names an existing user or group: a principal created later under that id must not find roles waiting.
    const found = await known(q, [...granting])
    const missing = [...granting].find(id => !found.has(id))
    if (missing !== undefined) throw BadRequest(`There is no user or group '${missing}'.`)
  }
}

/** The caller's roles acquired from above, kept on the object itself when it stops acquiring. */
function keepOwnRoles (roles: LocalRoles, who: Principal, located: Located): void {
  const above = acquiring(located.lineage).slice(0, -1)
  const own = rolesOn({ ...who, roles: [] }, null, above.map(o => o.local_roles))
  const kept = [...own].filter(role => !['Anonymous', 'Authenticated'].includes(role))
  if (kept.length === 0) return
  const key = userPrincipal(who.userId!)
  roles[key] = [...new Set([...(Object.hasOwn(roles, key) ? roles[key] : []), ...kept])].sort()
}

/** Principal id (without `user:`) → roles granted to it in these maps. */
function rolesByPrincipal (maps: LocalRoles[]): Map<string, Set<string>> {
  const result = new Map<string, Set<string>>()
  for (const map of maps) {
    for (const [key, roles] of Object.entries(map)) {
      const id = principalId(key)
      if (id === null) continue
      const held = result.get(id) ?? new Set<string>()
      for (const role of roles) held.add(role)
      result.set(id, held)
    }
  }
  return result
}

const compare = (a: string, b: string): number => a < b ? -1 : a > b ? 1 : 0
