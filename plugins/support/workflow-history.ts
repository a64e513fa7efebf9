import type { Located } from '../../core/content/rows.js'
import { urlOf } from '../../core/content/urls.js'
import { can } from '../../core/security/permissions.js'
import { Permission, type Principal } from '../../core/security/roles.js'
import { stateOf } from '../../core/security/workflow.js'

/** A state's title in the object's workflow (its id when the workflow does not name it). */
export const stateTitle = (located: Located, state: string): string =>
  (located.type.workflow !== null ? stateOf(located.type.workflow, state)?.title : undefined) ?? state

/** The workflow history is shown to those who may review or request review, as in Plone. */
export const mayReadHistory = (located: Located, who: Principal): boolean =>
  can(who, Permission.Review, located) || can(who, Permission.RequestReview, located)

/**
 * The actor of a history entry, as plone.restapi's `@history` writes it, but named by id alone:
 * the full name is a fact only `@users` shows (docs/api.md, "Security"), and the history is read
 * by more than those who may list users.
 */
export const actorOf = (baseUrl: string, userId: string | null): Record<string, unknown> =>
  ({ '@id': urlOf(baseUrl, `/@users/${userId ?? ''}`), fullname: userId, id: userId, username: null })
