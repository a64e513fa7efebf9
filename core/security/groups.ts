import type { Db, Queryable } from '../db/db.js'
import { BadRequest, Conflict } from '../errors.js'
import { USER_CHANGED } from './principal-cache.js'
import { AUTHENTICATED_GROUP } from './roles.js'

export interface GroupRecord { id: string, title: string, description: string, email: string, roles: string[], members: string[] }
export interface GroupFields { title?: string, description?: string, email?: string, roles?: string[] }
export interface NewGroup extends GroupFields { id: string, users?: string[] }
export interface GroupChanges extends GroupFields {
  /** Members to add (true) and remove (false). */
  users?: Record<string, boolean>
}

/** Plone's virtual group: every logged-in user is in it, nobody is listed, it holds no role of its own. */
export const VIRTUAL_GROUP: GroupRecord = Object.freeze({ id: AUTHENTICATED_GROUP, title: 'Authenticated Users (Virtual Group)', description: 'Automatic Group Provider', email: '', roles: [], members: [] })

/** Groups a site has from its creation that it needs: Administrators holds Manager (as `admin` does, it stays). */
export const KEPT_GROUPS = new Set(['Administrators', AUTHENTICATED_GROUP])

/** How many members one change adds or removes, and how many groups a listing answers. */
export const MAX_MEMBER_CHANGES = 1000
export const MAX_LISTED = 1000

const SELECT = `SELECT groups.id, title, description, email, roles,
  ARRAY(SELECT user_id FROM group_members WHERE group_id = groups.id ORDER BY user_id) AS members FROM groups`

/**
 * The groups of users (Plone's portal_groups): their records, members and
 * global roles. A member holds the group's roles and matches its principal
 * (`user:<group>`, as Plone spells groups in local roles and
 * allowedRolesAndUsers: core/security/roles.ts). Group ids share the users'
 * namespace (and its retired ids): a principal names one user or one group,
 * never both, and a deleted group's id never passes to a user who would
 * inherit its local roles. Who may do what is the caller's business
 * (plugins/routes/groups.ts). Every change ends the principals processes keep.
 */
export class Groups {
  private readonly listeners: Array<() => void> = []

  constructor (private readonly db: Db) {}

  /** Every group (the virtual one last, as Plone lists it), or those whose id or title contains `text`. */
  async list (text?: string, q: Queryable = this.db): Promise<GroupRecord[]> {
    const { rows } = await q.query<GroupRecord>(`${SELECT} WHERE $1::text IS NULL OR id ILIKE '%' || $1 || '%' OR title ILIKE '%' || $1 || '%'
      ORDER BY lower(id) LIMIT ${MAX_LISTED}`, [text ?? null])
    const virtual = text === undefined || [VIRTUAL_GROUP.id, VIRTUAL_GROUP.title].some(s => s.toLowerCase().includes(text.toLowerCase()))
    return virtual ? [...rows, VIRTUAL_GROUP] : rows
  }

  async get (id: string): Promise<GroupRecord | undefined> {
    if (id === VIRTUAL_GROUP.id) return VIRTUAL_GROUP
    return (await this.db.query<GroupRecord>(`${SELECT} WHERE id = $1`, [id])).rows[0]
  }

  /** 409 when the id names a user, a group, or a deleted user or group; 400 for an unknown member. */
  async create (group: NewGroup): Promise<GroupRecord> {
    return await this.changing(async tx => {
      // The users' lock (core/security/users.ts, claimLogins): a user created meanwhile is seen, and sees this group.
      await tx.query('SELECT pg_advisory_xact_lock(7340004)')
      const { rowCount } = await tx.query(`SELECT 1 FROM users WHERE lower(id) = lower($1) UNION ALL SELECT 1 FROM groups WHERE lower(id) = lower($1)
        UNION ALL SELECT 1 FROM retired_user_ids WHERE login_key = lower($1)`, [group.id])
      if (rowCount > 0 || group.id.toLowerCase() === AUTHENTICATED_GROUP.toLowerCase()) throw Conflict(`The id '${group.id}' names a user or a group, now or before: principals' ids are never reused.`)
      await tx.query('INSERT INTO groups (id, title, description, email, roles) VALUES ($1, $2, $3, $4, $5)',
        [group.id, group.title ?? '', group.description ?? '', group.email ?? '', group.roles ?? []])
      await this.addMembers(tx, group.id, group.users ?? [])
      return (await tx.query<GroupRecord>(`${SELECT} WHERE id = $1`, [group.id])).rows[0]
    })
  }

  /** False when there is no such group; 400 for an unknown member. */
  async update (id: string, changes: GroupChanges): Promise<boolean> {
    return await this.changing(async tx => {
      const { rowCount } = await tx.query(`UPDATE groups SET title = COALESCE($2, title), description = COALESCE($3, description),
        email = COALESCE($4, email), roles = COALESCE($5, roles) WHERE id = $1`,
      [id, changes.title ?? null, changes.description ?? null, changes.email ?? null, changes.roles ?? null])
      if (rowCount === 0) return false
      const entries = Object.entries(changes.users ?? {})
      await this.addMembers(tx, id, entries.filter(([, member]) => member).map(([user]) => user))
      const leaving = entries.filter(([, member]) => !member).map(([user]) => user)
      if (leaving.length > 0) await tx.query('DELETE FROM group_members WHERE group_id = $1 AND user_id = ANY($2::text[])', [id, leaving])
      return true
    })
  }

  /** False when there is no such group. Its id is retired, as a deleted user's is. */
  async remove (id: string): Promise<boolean> {
    return await this.changing(async tx => {
      const { rowCount } = await tx.query('DELETE FROM groups WHERE id = $1', [id])
      if (rowCount === 0) return false
      await tx.query('INSERT INTO retired_user_ids (login_key) VALUES (lower($1)) ON CONFLICT DO NOTHING', [id])
      return true
    })
  }

  /** Called after every change this process makes (its own principals end before it answers). */
  onChange (listener: () => void): void {
    this.listeners.push(listener)
  }

  private async addMembers (tx: Queryable, id: string, users: string[]): Promise<void> {
    if (users.length === 0) return
    const { rows } = await tx.query<{ id: string }>('SELECT id FROM users WHERE id = ANY($1::text[])', [users])
    const known = new Set(rows.map(r => r.id))
    const unknown = users.find(user => !known.has(user))
    if (unknown !== undefined) throw BadRequest(`There is no user '${unknown}' (groups hold users only).`)
    await tx.query('INSERT INTO group_members (group_id, user_id) SELECT $1, unnest($2::text[]) ON CONFLICT DO NOTHING', [id, users])
  }

  /** What processes keep of principals ends with the change's commit, everywhere (a group's roles are many users'). */
  private async changing<T> (change: (tx: Queryable) => Promise<T>): Promise<T> {
    const result = await this.db.transaction(async tx => {
      const changed = await change(tx)
      await this.db.notifications.notify(tx, USER_CHANGED)
      return changed
    })
    this.listeners.forEach(listener => { listener() })
    return result
  }
}

/** The groups of each of these users, by user id (Plone's `groups` of a user; the virtual group is everyone's). */
export async function groupsOfUsers (q: Queryable, userIds: string[]): Promise<Map<string, Array<{ id: string, title: string }>>> {
  const { rows } = await q.query<{ user_id: string, id: string, title: string }>(`SELECT user_id, groups.id, groups.title FROM group_members
    JOIN groups ON groups.id = group_id WHERE user_id = ANY($1::text[]) ORDER BY lower(groups.id)`, [userIds])
  const result = new Map(userIds.map(id => [id, [] as Array<{ id: string, title: string }>]))
  for (const row of rows) result.get(row.user_id)?.push({ id: row.id, title: row.title === '' ? row.id : row.title })
  return result
}
