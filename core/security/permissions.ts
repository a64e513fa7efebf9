import type { ContentType } from '../content/registry.js'
import type { ContentRow, Located } from '../content/rows.js'
import { acquiring, allows, Permission, rolesOn, SITE_ROLE_MAP, userPrincipal, type PermissionName, type Principal } from './roles.js'
import { rolesFor } from './workflow.js'

/**
 * Whether `who` holds `permission` on an object: the roles the object's
 * workflow state grants it to, against the caller's global roles, `Owner`
 * when they own it, and local roles granted down its lineage.
 */
export function can (who: Principal, permission: PermissionName, located: Pick<Located, 'lineage' | 'type'>): boolean {
  const obj = located.lineage[located.lineage.length - 1]
  const roles = rolesOn(who, obj.owner, acquiring(located.lineage).map(o => o.local_roles))
  return allows(rolesFor(permission, located.type.workflow, obj.review_state), roles)
}

/** A permission held site-wide, by global roles alone (managing the site, seeing inactive content everywhere). */
export function holdsSiteWide (who: Principal, permission: PermissionName): boolean {
  return allows(SITE_ROLE_MAP[permission], new Set(who.roles))
}

/** What access is decided from: an object's state and owner, its lineage's local roles (core/security/subtree-access.ts reads no more). */
export type AccessRow = Pick<ContentRow, 'review_state' | 'owner' | 'local_roles' | 'local_roles_block'>

/** Plone's allowedRolesAndUsers: the roles that may View, plus `user:<id>` of every local holder of one. */
export function allowedRolesAndUsers (type: ContentType, obj: AccessRow, lineage: AccessRow[]): string[] {
  const viewers = rolesFor(Permission.View, type.workflow, obj.review_state)
  if (viewers.includes('Anonymous')) return ['Anonymous']
  const allowed = new Set<string>(viewers.filter(r => r !== 'Owner'))
  if (viewers.includes('Owner') && obj.owner !== null) allowed.add(userPrincipal(obj.owner))
  for (const holder of acquiring(lineage)) {
    for (const [principal, roles] of Object.entries(holder.local_roles)) {
      if (roles.some(r => viewers.includes(r))) allowed.add(principal)
    }
  }
  return [...allowed]
}
