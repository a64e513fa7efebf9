import type { Located } from '../content/rows.js'
import { can, holdsSiteWide } from './permissions.js'
import { Permission, type PermissionName, type Principal } from './roles.js'

export interface Action { id: string, title: string, icon: string }
export type ActionCategories = Record<'object' | 'object_buttons' | 'user' | 'document_actions' | 'portal_tabs' | 'site_actions', Action[]>

const action = (id: string, title: string): Action => ({ id, title, icon: '' })

/** An action shown when the caller holds one of the permissions on the object. */
interface ObjectAction { action: Action, needs: PermissionName[], folderishOnly?: boolean, notOnRoot?: boolean, workflowOnly?: boolean, signedInOnly?: boolean }

/**
 * Plone's object actions that this service implements, with the permissions
 * Plone guards them with: Volto's toolbar shows Edit and Contents from `edit`
 * and `folderContents`; folder contents its buttons from `object_buttons`.
 */
const OBJECT_ACTIONS: ObjectAction[] = [
  { action: action('view', 'View'), needs: [Permission.View] },
  // The site root too: its title, description and blocks (Volto's home page).
  { action: action('edit', 'Edit'), needs: [Permission.Modify] },
  // Plone's "List folder contents": whoever may add or change content in the folder.
  { action: action('folderContents', 'Contents'), needs: [Permission.Add, Permission.Modify], folderishOnly: true },
  // The workflow history (`@history`), shown to those who may review or request review, as `@workflow`'s.
  { action: action('history', 'History'), needs: [Permission.Review, Permission.RequestReview], workflowOnly: true },
  // Plone's `local_roles` action: the sharing page (`@sharing`), for those who may delegate roles there.
  { action: action('local_roles', 'Sharing'), needs: [Permission.DelegateRoles] }
]
/** Plone's order. Cut and rename are moves (`@move`), which take the object from its folder: Delete objects, as Plone guards them. */
const OBJECT_BUTTONS: ObjectAction[] = [
  { action: action('cut', 'Cut'), needs: [Permission.Delete], notOnRoot: true },
  // A copy is read where it is and added where it goes (`@copy` checks Add there): whoever may view it, signed in.
  { action: action('copy', 'Copy'), needs: [Permission.View], notOnRoot: true, signedInOnly: true },
  { action: action('paste', 'Paste'), needs: [Permission.Add], folderishOnly: true },
  { action: action('delete', 'Delete'), needs: [Permission.Delete], notOnRoot: true },
  { action: action('rename', 'Rename'), needs: [Permission.Delete], notOnRoot: true }
]

/**
 * `@actions` (plone.restapi): each category of actions as this caller may
 * take them on this object.
 */
export function actionsFor (who: Principal, located: Located): ActionCategories {
  const isRoot = located.obj.path === '/'
  const held = (entries: ObjectAction[]): Action[] => entries
    .filter(e => (e.folderishOnly !== true || located.type.folderish) && (e.notOnRoot !== true || !isRoot) && (e.workflowOnly !== true || located.type.workflow !== null) &&
      (e.signedInOnly !== true || who.userId !== null))
    .filter(e => e.needs.some(p => can(who, p, located)))
    .map(e => e.action)
  const user = who.userId === null
    ? [action('login', 'Log in')]
    : [
        action('preferences', 'Preferences'),
        ...(holdsSiteWide(who, Permission.ManagePortal) ? [action('plone_setup', 'Site Setup')] : []),
        action('logout', 'Log out')
      ]
  return {
    object: held(OBJECT_ACTIONS),
    object_buttons: held(OBJECT_BUTTONS),
    user,
    document_actions: [],
    portal_tabs: [action('index_html', 'Home')],
    site_actions: [action('sitemap', 'Site Map'), action('accessibility', 'Accessibility'), action('contact', 'Contact')]
  }
}
