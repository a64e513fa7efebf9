import type { Db } from '../db/db.js'
import { ApiError } from '../errors.js'
import type { Groups } from '../security/groups.js'
import { KNOWN_SCHEMES } from '../security/legacy-hashes.js'
import type { Users } from '../security/users.js'
import { isObject } from './format.js'
import type { ExchangeReport } from './report.js'

/** Users and groups an import takes at most (principals.json is bounded in bytes too). */
const MAX_PRINCIPALS = 100_000
/** A hash that no password verifies: a user exported without one logs in after a password reset only. */
const NO_PASSWORD = '!'

const text = (value: unknown, max = 1000): string | null => typeof value === 'string' && value !== '' ? value.slice(0, max) : null
const texts = (value: unknown): string[] => Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string').slice(0, 100) : []
const list = (value: unknown): Array<Record<string, unknown>> => Array.isArray(value) ? value.filter(isObject).slice(0, MAX_PRINCIPALS) : []

/**
 * The users and groups of principals.json: a user keeps its password hash
 * (Plone's are verified at its first login and replaced by the service's,
 * core/security/legacy-hashes.ts); one the site has is updated, its password
 * left as it is. What the service refuses (a taken e-mail, an id retired) is
 * counted in the report.
 */
export async function importPrincipals (principals: unknown, users: Users, groups: Groups, report: ExchangeReport): Promise<void> {
  if (!isObject(principals)) return
  const memberships = new Map<string, string[]>()
  for (const member of list(principals.members)) {
    const id = text(member.username, 100)
    if (id === null) { report.problem('bad user', JSON.stringify(member).slice(0, 100), 'A user has a username.'); continue }
    const hash = text(member.password, 1000)
    if (hash === null) report.problem('user without password', id, 'The user logs in once its password is reset.')
    else if (!hash.startsWith('scrypt$') && !KNOWN_SCHEMES.some(scheme => hash.startsWith(scheme))) report.problem('password scheme not known', id, `${hash.replace(/^(\{[^}]{0,20}\}).*$/s, '$1').slice(0, 20)}: the user logs in once its password is reset.`)
    const email = text(member.email, 254)
    const properties = { ...(email !== null ? { email } : {}), fullname: text(member.fullname) ?? undefined, roles: texts(member.roles), description: text(member.description), home_page: text(member.home_page), location: text(member.location) }
    try {
      if (await users.get(id) !== undefined) await users.update(id, properties)
      else {
        // Logins are user names and e-mail addresses, one namespace: a new user without one gets an address of the reserved .invalid domain.
        if (email === null) report.problem('user without e-mail', id, `The user's e-mail address is ${id}@invalid until it is changed.`)
        await users.create({ ...properties, email: email ?? `${id}@invalid`, username: id, password: '', passwordHash: hash ?? NO_PASSWORD })
      }
      report.count('users imported')
      for (const group of texts(member.groups)) memberships.set(group, [...(memberships.get(group) ?? []), id])
    } catch (err) {
      if (!(err instanceof ApiError)) throw err
      report.problem('user not imported', id, err.message)
    }
  }
  for (const group of list(principals.groups)) {
    const id = text(group.groupid, 100)
    if (id === null) continue
    const fields = { title: text(group.title) ?? '', description: text(group.description) ?? '', email: text(group.email, 254) ?? '', roles: texts(group.roles) }
    const members = memberships.get(id) ?? []
    try {
      if (await groups.get(id) !== undefined) await groups.update(id, { ...fields, users: Object.fromEntries(members.map(m => [m, true])) })
      else await groups.create({ ...fields, id, users: members })
      report.count('groups imported')
    } catch (err) {
      if (!(err instanceof ApiError)) throw err
      report.problem('group not imported', id, err.message)
    }
  }
}

/** principals.json as plone.exportimport writes it: users with their password hashes, groups with their roles, sorted by id. */
export async function exportPrincipals (db: Db): Promise<Record<string, unknown>> {
  const { rows: users } = await db.query<Record<string, unknown>>(`SELECT id AS username, coalesce(email, '') AS email, coalesce(fullname, '') AS fullname,
    password_hash AS password, roles, coalesce(description, '') AS description, coalesce(home_page, '') AS home_page, coalesce(location, '') AS location,
    ARRAY(SELECT group_id FROM group_members WHERE user_id = users.id ORDER BY group_id) AS groups
    FROM users ORDER BY id COLLATE "C"`)
  const { rows: groups } = await db.query<Record<string, unknown>>(`SELECT id AS groupid, title, description, email, roles,
    ARRAY[]::text[] AS groups, ARRAY(SELECT user_id FROM group_members WHERE group_id = groups.id ORDER BY user_id) AS principals
    FROM groups ORDER BY id COLLATE "C"`)
  return { groups, members: users }
}
