import { Permission, SITE_ROLE_MAP, type PermissionName } from './roles.js'

/**
 * A workflow: states that decide who may view and modify, and transitions
 * guarded by a permission. Declared as data so that a content type can name
 * another one; `simple_publication` is Plone's default, narrowed as in the
 * training's `talks_workflow` (contributors see only their own drafts).
 */
export interface WorkflowState {
  title: string
  /** Role maps that differ from the site's in this state. */
  permissions: Partial<Record<PermissionName, readonly string[]>>
}

export interface Transition {
  title: string
  from: readonly string[]
  to: string
  guard: PermissionName
}

export interface Workflow {
  id: string
  initial: string
  states: Record<string, WorkflowState>
  transitions: Record<string, Transition>
}

// Reader: the sharing page's "Can view" (local roles only: no user holds it globally).
const privateViewers = ['Manager', 'Site Administrator', 'Owner', 'Editor', 'Reader'] as const

export const simplePublication: Workflow = {
  id: 'simple_publication_workflow',
  initial: 'private',
  states: {
    private: {
      title: 'Private',
      permissions: { [Permission.View]: privateViewers, [Permission.Modify]: ['Manager', 'Site Administrator', 'Owner', 'Editor'] }
    },
    pending: {
      title: 'Pending review',
      permissions: { [Permission.View]: [...privateViewers, 'Reviewer'], [Permission.Modify]: ['Manager', 'Site Administrator', 'Reviewer'] }
    },
    published: {
      title: 'Published',
      permissions: { [Permission.View]: ['Anonymous'], [Permission.Modify]: ['Manager', 'Site Administrator', 'Owner', 'Editor'] }
    }
  },
  transitions: {
    submit: { title: 'Submit for publication', from: ['private'], to: 'pending', guard: Permission.RequestReview },
    publish: { title: 'Publish', from: ['private', 'pending'], to: 'published', guard: Permission.Review },
    retract: { title: 'Retract', from: ['pending', 'published'], to: 'private', guard: Permission.RequestReview },
    reject: { title: 'Send back', from: ['pending', 'published'], to: 'private', guard: Permission.Review }
  }
}

/** A state of the workflow by its id (own states only: a stored `review_state` is data, not a key to trust). */
export function stateOf (workflow: Workflow, state: string): WorkflowState | undefined {
  return Object.hasOwn(workflow.states, state) ? workflow.states[state] : undefined
}

/** Roles granted a permission on an object in `state` of `workflow` (or the site map without one). */
export function rolesFor (permission: PermissionName, workflow: Workflow | null, state: string | null): readonly string[] {
  const permissions = workflow !== null && state !== null ? stateOf(workflow, state)?.permissions : undefined
  if (permissions !== undefined && Object.hasOwn(permissions, permission)) return permissions[permission]!
  return SITE_ROLE_MAP[permission]
}
