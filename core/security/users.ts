import type { Db, Queryable } from '../db/db.js'
import { Conflict } from '../errors.js'
import { hashPassword } from './passwords.js'
import { USER_CHANGED } from './principal-cache.js'

/** The member properties besides the login: free text, `null` when unset. */
export interface MemberProperties { description?: string | null, home_page?: string | null, location?: string | null }
export interface UserRecord { id: string, email: string | null, fullname: string | null, roles: string[], created: Date, description: string | null, home_page: string | null, location: string | null }
/** `passwordHash`: a user brought from another site (core/exchange) keeps its hash, verified at its first login and then replaced (core/security/legacy-hashes.ts). */
export interface NewUser extends MemberProperties { username: string, email: string, password: string, passwordHash?: string, fullname?: string, roles?: string[] }
export interface UserChanges extends MemberProperties {
  email?: string
  password?: string
  fullname?: string
  /** Replaces the roles. */
  roles?: string[]
  /** Adds and removes roles, applied to the roles as they are when the change is written. */
  roleChanges?: { add: string[], remove: string[] }
}

const COLUMNS = 'id, email, fullname, roles, created, description, home_page, location'

/** The user `admin`, created at first start: it always keeps the Manager role and cannot be deleted. */
export const ADMIN_USER = 'admin'

/**
 * The users: their records, and the one rule that spans them — user names
 * and e-mail addresses form one login namespace. Who may do what with them
 * is the caller's business (plugins/routes/users.ts).
 */
export class Users {
  private readonly listeners: Array<(id: string) => void> = []

  constructor (private readonly db: Db) {}

  /** Creates `admin` (Manager) unless it exists; true when it was created now. */
  async ensureAdmin (password: string): Promise<boolean> {
    // Looked up first: every start would otherwise pay for a password hash it throws away.
    if ((await this.db.query('SELECT 1 FROM users WHERE id = $1', [ADMIN_USER])).rowCount > 0) return false
    const created = await this.db.query(`INSERT INTO users (id, fullname, password_hash, roles) VALUES ($1, 'Administrator', $2, '{Manager}')
      ON CONFLICT (id) DO NOTHING`, [ADMIN_USER, await hashPassword(password)])
    return created.rowCount > 0
  }

  /**
   * The users, by id: those whose id, name or e-mail contains `text` (all
   * without), members of one of `groups` (any group, without), the first
   * `limit` of them.
   */
  async list ({ text, groups, limit }: { text?: string, groups?: readonly string[], limit: number }): Promise<UserRecord[]> {
    const { rows } = await this.db.query<UserRecord>(`SELECT ${COLUMNS} FROM users
      WHERE ($1::text IS NULL OR id ILIKE '%' || $1 || '%' OR fullname ILIKE '%' || $1 || '%' OR email ILIKE '%' || $1 || '%')
        AND ($2::text[] IS NULL OR EXISTS (SELECT 1 FROM group_members m WHERE m.user_id = users.id AND m.group_id = ANY($2)))
      ORDER BY id LIMIT $3`, [text ?? null, groups ?? null, limit])
    return rows
  }

  async get (id: string): Promise<UserRecord | undefined> {
    return (await this.db.query<UserRecord>(`SELECT ${COLUMNS} FROM users WHERE id = $1`, [id])).rows[0]
  }

  /** 409 when the user name or the e-mail address is a login of another user. */
  async create (user: NewUser): Promise<UserRecord> {
    const passwordHash = user.passwordHash ?? await hashPassword(user.password) // before the lock: scrypt takes its time
    return await this.db.transaction(async tx => {
      await this.claimLogins(tx, user.username, user.email)
      // The unique indexes still catch a writer that did not take the lock.
      const result = await tx.query<UserRecord>(`INSERT INTO users (id, email, fullname, password_hash, roles, description, home_page, location)
        VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT DO NOTHING RETURNING ${COLUMNS}`,
      [user.username, user.email, user.fullname ?? null, passwordHash, user.roles ?? ['Member'], user.description ?? null, user.home_page ?? null, user.location ?? null])
      if (result.rowCount === 0) throw Conflict(`The user name '${user.username}' or the e-mail address is taken.`)
      return result.rows[0]
    })
  }

  /**
   * Changes a user; false when there is none. A new password draws a new
   * token key: every token of the user ends at once (core/security/sessions.ts).
   */
  async update (id: string, changes: UserChanges): Promise<boolean> {
    const hash = changes.password !== undefined ? await hashPassword(changes.password) : null
    return await this.changing(id, async tx => {
      if (changes.email !== undefined) await this.claimLogins(tx, null, changes.email, id)
      // A member property given as null is cleared; one not given stays.
      const given = (name: keyof MemberProperties): boolean => changes[name] !== undefined
      const { rowCount } = await tx.query(`UPDATE users SET email = COALESCE($2, email), fullname = COALESCE($3, fullname),
        password_hash = COALESCE($4, password_hash),
        roles = CASE WHEN $5::text[] IS NOT NULL THEN $5::text[] WHEN $12::boolean
          THEN ARRAY(SELECT DISTINCT r FROM unnest(roles || $13::text[]) r WHERE NOT (r = ANY($14::text[])) ORDER BY r) ELSE roles END,
        token_key = CASE WHEN $4::text IS NULL THEN token_key ELSE gen_random_uuid()::text END,
        description = CASE WHEN $6::boolean THEN $7 ELSE description END,
        home_page = CASE WHEN $8::boolean THEN $9 ELSE home_page END,
        location = CASE WHEN $10::boolean THEN $11 ELSE location END WHERE id = $1`,
      [id, changes.email ?? null, changes.fullname ?? null, hash, changes.roles ?? null,
        given('description'), changes.description ?? null, given('home_page'), changes.home_page ?? null, given('location'), changes.location ?? null,
        changes.roleChanges !== undefined, changes.roleChanges?.add ?? [], changes.roleChanges?.remove ?? []])
      return rowCount > 0
    })
  }

  /**
   * False when there is no such user. Its tokens end with it (they name a
   * record that is gone), and its id is retired in the same transaction: no
   * later user gets it (`claimLogins`), so that ownership and local roles that
   * name it never pass to anyone else.
   */
  async remove (id: string): Promise<boolean> {
    return await this.changing(id, async tx => {
      const deleted = await tx.query('DELETE FROM users WHERE id = $1', [id])
      if (deleted.rowCount === 0) return false
      await tx.query('INSERT INTO retired_user_ids (login_key) VALUES (lower($1)) ON CONFLICT DO NOTHING', [id])
      return true
    })
  }

  /**
   * Changes a user in a transaction. What other processes keep of the user
   * (the principals of its tokens) ends with its commit (a notification);
   * what this process keeps, right after the commit, before it answers.
   */
  private async changing<T> (id: string, change: (tx: Queryable) => Promise<T>): Promise<T> {
    const result = await this.db.transaction(async tx => {
      const changed = await change(tx)
      await this.db.notifications.notify(tx, USER_CHANGED, id)
      return changed
    })
    this.listeners.forEach(listener => { listener(id) })
    return result
  }

  /** Called with the id of every user this process changes or deletes. */
  onChange (listener: (id: string) => void): void {
    this.listeners.push(listener)
  }

  /**
   * @login accepts a user name or an e-mail address, case-insensitively, so
   * all of them form one namespace: a new user name or e-mail address may be
   * no other user's user name or e-mail address, or a login string would name
   * two users and one of them could no longer log in. No unique index spans
   * two columns of different rows, so the writers of login strings (creating
   * a user, changing an e-mail address) take one transaction-scoped advisory
   * lock, check, and write before it is released at commit: of two concurrent
   * writes, the second sees the first. The unique indexes of
   * 002_unique_logins.sql stay as the database's own guard within each column.
   *
   * A new user name may not be a retired id either (`remove`), nor a group's
   * (core/security/groups.ts: one namespace of principals). Users and
   * retired ids are read in one statement, so in one snapshot: a delete that
   * commits during the create is seen whole (the user gone and its id
   * retired) or not at all (the user still there), never half.
   */
  private async claimLogins (tx: Queryable, username: string | null, email: string | null, except: string | null = null): Promise<void> {
    await tx.query('SELECT pg_advisory_xact_lock(7340004)')
    const { rows } = await tx.query<{ id: string | null, email: string | null }>(
      `SELECT id, email FROM users WHERE (lower(id) IN (lower($1), lower($2)) OR lower(email) IN (lower($1), lower($2)))
       AND id IS DISTINCT FROM $3
       UNION ALL SELECT NULL, NULL FROM retired_user_ids WHERE login_key = lower($1)
       UNION ALL SELECT id, NULL FROM groups WHERE lower(id) = lower($1)
       LIMIT 1`, [username, email, except])
    const taken = rows[0]
    if (taken === undefined) return
    if (taken.id === null) throw Conflict(`The user name '${String(username)}' belonged to a deleted user: user ids are never reused, so that nobody inherits another user's content or roles.`)
    const takenBy = (login: string): boolean => [taken.id, taken.email].some(held => held?.toLowerCase() === login.toLowerCase())
    if (username !== null && takenBy(username)) throw Conflict(`The user name '${username}' is taken: another user logs in with it.`)
    throw Conflict(`The e-mail address '${String(email)}' is taken: another user logs in with it.`)
  }
}
