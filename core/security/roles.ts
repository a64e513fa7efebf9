/**
 * Roles, permissions and principals, modelled on Plone's: a permission is
 * granted to roles; a user has global roles plus local roles on an object
 * (the creator is its `Owner`; a folder may grant roles to principals on
 * everything inside it). Which roles may View depends on the workflow state
 * (core/workflow.ts).
 */

export const GLOBAL_ROLES = ['Manager', 'Site Administrator', 'Reviewer', 'Editor', 'Contributor', 'Member'] as const
export type Role = typeof GLOBAL_ROLES[number] | 'Owner' | 'Reader' | 'Authenticated' | 'Anonymous'

export const Permission = {
  View: 'View',
  Modify: 'Modify portal content',
  Add: 'Add portal content',
  Delete: 'Delete objects',
  Review: 'Review portal content',
  RequestReview: 'Request review',
  AccessInactive: 'Access inactive portal content',
  ManagePortal: 'Manage portal',
  AccessPreviousVersions: 'CMFEditions: Access previous versions',
  RevertToPreviousVersions: 'CMFEditions: Revert to previous versions',
  /** `@sharing` (plone.app.workflow): who may see and change an object's local roles. */
  DelegateRoles: 'Sharing page: Delegate roles'
} as const
export type PermissionName = typeof Permission[keyof typeof Permission]

/** Role map of the permissions that do not depend on the workflow state (CMFPlone's rolemap). */
export const SITE_ROLE_MAP: Record<PermissionName, readonly string[]> = {
  [Permission.View]: ['Anonymous'],
  [Permission.Modify]: ['Manager', 'Site Administrator', 'Owner', 'Editor'],
  [Permission.Add]: ['Manager', 'Site Administrator', 'Owner', 'Contributor'],
  [Permission.Delete]: ['Manager', 'Site Administrator', 'Owner', 'Editor'],
  [Permission.Review]: ['Manager', 'Site Administrator', 'Reviewer'],
  [Permission.RequestReview]: ['Manager', 'Site Administrator', 'Owner', 'Editor'],
  [Permission.AccessInactive]: ['Manager', 'Site Administrator', 'Owner'],
  [Permission.ManagePortal]: ['Manager'],
  // CMFEditions' (docs/versions.md): not Contributor, which every user holds in the talks' folder.
  [Permission.AccessPreviousVersions]: ['Manager', 'Site Administrator', 'Owner', 'Editor', 'Reviewer'],
  [Permission.RevertToPreviousVersions]: ['Manager', 'Site Administrator', 'Owner', 'Editor', 'Reviewer'],
  [Permission.DelegateRoles]: ['Manager', 'Site Administrator', 'Owner', 'Editor']
}

/** The caller as the security checks see it. */
export interface Principal {
  /** null for anonymous callers. */
  userId: string | null
  fullname: string | null
  roles: string[]
  /** The groups the user is in (their roles are in `roles` already); absent: none. */
  groups?: string[]
}

export const ANONYMOUS: Principal = Object.freeze({ userId: null, fullname: null, roles: [] }) as Principal

export const userPrincipal = (userId: string): string => `user:${userId}`

/**
 * The principal ids a caller matches in `allowedRolesAndUsers` and in local
 * role maps: `Anonymous`, and for users `Authenticated`, `user:<id>`, their
 * global roles and `user:<group>` of each of their groups (Plone's
 * `_listAllowedRolesAndUsers`: users and groups share one namespace), with
 * Plone's virtual group of every logged-in user.
 */
export function principalsOf (who: Principal): string[] {
  if (who.userId === null) return ['Anonymous']
  return ['Anonymous', 'Authenticated', userPrincipal(who.userId), ...who.roles, userPrincipal(AUTHENTICATED_GROUP), ...(who.groups ?? []).map(userPrincipal)]
}

/** Plone's virtual group of every logged-in user: local roles may be granted to it. */
export const AUTHENTICATED_GROUP = 'AuthenticatedUsers'

/** Local roles as stored on an object: principal id → roles. */
export type LocalRoles = Record<string, string[]>

/**
 * The part of a lineage (root first) whose local roles count for its last
 * object: from the nearest object that blocks acquisition (Plone's
 * `__ac_local_roles_block__`: its own local roles count, those above it do
 * not), else all of it. Global roles are not local: a block never ends them.
 */
export function acquiring<T extends { local_roles_block?: boolean }> (lineage: T[]): T[] {
  for (let at = lineage.length - 1; at > 0; at--) if (lineage[at].local_roles_block === true) return lineage.slice(at)
  return lineage
}

/**
 * The roles a caller has on an object: global roles, `Owner` when they own it,
 * and local roles granted on it or on any ancestor (Plone's acquisition; the
 * maps of `acquiring(lineage)`).
 */
export function rolesOn (who: Principal, owner: string | null, localRoleMaps: LocalRoles[]): Set<string> {
  const roles = new Set<string>(who.userId === null ? ['Anonymous'] : ['Anonymous', 'Authenticated', ...who.roles])
  if (who.userId !== null && owner === who.userId) roles.add('Owner')
  const principals = principalsOf(who)
  for (const map of localRoleMaps) {
    // Own keys only: a principal named like a property of Object.prototype must find nothing.
    for (const principal of principals) if (Object.hasOwn(map, principal)) for (const role of map[principal]) roles.add(role)
  }
  return roles
}

export function allows (grantedTo: readonly string[], roles: Set<string>): boolean {
  if (roles.has('Manager')) return true
  return grantedTo.some(r => roles.has(r))
}
