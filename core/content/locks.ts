import { randomBytes } from 'node:crypto'
import { sameSecret } from '../security/same-secret.js'
import type { Db } from '../db/db.js'
import { notification } from '../db/notifications.js'
import { Conflict } from '../errors.js'
import { isoDate, urlOf } from './urls.js'

/** The notification topic of a lock taken, refreshed or released (objects kept for reading hear it: core/content/kept-objects.ts). */
export const LOCKS_CHANGED = 'locks'

/** A lock as stored: who holds it, since when, for how long. */
export interface LockRow { uid: string, token: string, creator: string, created: Date, timeout: number, stealable: boolean }

/** plone.locking's default timeout (seconds), and the longest a client may ask for (a day). */
export const DEFAULT_LOCK_TIMEOUT = 600
export const MAX_LOCK_TIMEOUT = 86_400

/** A lock is live until its timeout has passed (`alias`: the row it is asked of). */
const live = (alias: string): string => `(${alias}.created + ${alias}.timeout * interval '1 second' > now())`
const COLUMNS = 'uid, token, creator, created, timeout, stealable'

/**
 * Joins each `content` row to its object's live lock (columns `lock_*`, null without one),
 * so that traversal reads the lock in the query that finds the object: every GET, PATCH and
 * DELETE needs it, and a round trip of its own costs more than the join.
 */
export const LIVE_LOCK_JOIN = `LEFT JOIN LATERAL (SELECT token AS lock_token, creator AS lock_creator, created AS lock_created,
  timeout AS lock_timeout, stealable AS lock_stealable FROM locks WHERE locks.uid = content.uid AND ${live('locks')}) live_lock ON true`

/** The columns LIVE_LOCK_JOIN adds to a row. */
export interface LiveLockColumns {
  lock_token: string | null
  lock_creator: string | null
  lock_created: Date | null
  lock_timeout: number | null
  lock_stealable: boolean | null
}

/** Splits a row read with LIVE_LOCK_JOIN into the row itself and the object's live lock. */
export function splitLiveLock<Row extends { uid: string }> (joined: Row & LiveLockColumns): { row: Row, lock: LockRow | null } {
  const { lock_token: token, lock_creator: creator, lock_created: created, lock_timeout: timeout, lock_stealable: stealable, ...row } = joined
  const lock = token === null ? null : { uid: joined.uid, token, creator: creator!, created: created!, timeout: timeout!, stealable: stealable! }
  return { row: row as unknown as Row, lock }
}

/**
 * Locks of objects being edited (plone.locking through plone.restapi's
 * `@lock`): a live lock makes writes of the object need its token
 * (`Lock-Token`); it ends when unlocked, stolen (when stealable) or past its
 * timeout. Who may lock is the caller's business (Modify portal content).
 */
export class Locks {
  /**
   * `changed`: told after each lock this process took, refreshed or released;
   * other processes hear the notification, keyed `writerId` (ContentStore.writerId).
   */
  constructor (private readonly db: Db, private readonly changed: () => void = () => {}, private readonly writerId?: string) {}

  /**
   * Runs a change of the locks table, `sql(told)` with `told` the notification
   * to select from the changed rows: every process hears of it at the commit,
   * and only when a row changed.
   */
  private async change<Row> (sql: (told: string) => string, params: unknown[]): Promise<Row[]> {
    const p = (value: unknown): string => { params.push(value); return `$${params.length}` }
    const { rows } = await this.db.query<Row & { told: unknown }>(sql(`${notification(p, LOCKS_CHANGED, this.writerId)} AS told`), params)
    if (rows.length > 0) this.changed()
    return rows.map(({ told: _, ...row }) => row as Row)
  }

  /** The live lock of an object, if any. */
  async live (uid: string): Promise<LockRow | null> {
    const { rows } = await this.db.query<LockRow>(`SELECT ${COLUMNS} FROM locks WHERE uid = $1 AND ${live('locks')}`, [uid])
    return rows[0] ?? null
  }

  /**
   * Locks an object for `userId`: a new lock when there is none live; the
   * user's own live lock is refreshed (and keeps its token); another user's
   * live lock stays as it is and is returned.
   */
  async lock (uid: string, userId: string, options: { stealable?: boolean, timeout?: number }): Promise<LockRow> {
    const token = randomBytes(24).toString('base64url')
    const rows = await this.change<LockRow>(told => `WITH locked AS (INSERT INTO locks (${COLUMNS}) VALUES ($1, $2, $3, now(), $4, $5)
      ON CONFLICT (uid) DO UPDATE SET
        token = CASE WHEN locks.creator = EXCLUDED.creator AND ${live('locks')} THEN locks.token ELSE EXCLUDED.token END,
        creator = EXCLUDED.creator, created = now(),
        timeout = CASE WHEN $6 THEN EXCLUDED.timeout ELSE locks.timeout END,
        stealable = CASE WHEN $7 THEN EXCLUDED.stealable ELSE locks.stealable END
      WHERE locks.creator = EXCLUDED.creator OR NOT ${live('locks')}
      RETURNING ${COLUMNS}) SELECT ${COLUMNS}, ${told} FROM locked`,
    [uid, token, userId, options.timeout ?? DEFAULT_LOCK_TIMEOUT, options.stealable ?? true, options.timeout !== undefined, options.stealable !== undefined])
    return rows[0] ?? (await this.live(uid))!
  }

  /** Refreshes the user's own live lock (null when they hold none). */
  async refresh (uid: string, userId: string): Promise<LockRow | null> {
    const rows = await this.change<LockRow>(told => `WITH refreshed AS (UPDATE locks SET created = now() WHERE uid = $1 AND creator = $2 AND ${live('locks')}
      RETURNING ${COLUMNS}) SELECT ${COLUMNS}, ${told} FROM refreshed`, [uid, userId])
    return rows[0] ?? null
  }

  /**
   * Unlocks: the holder's own lock, or with `steal` another's stealable one.
   * Returns false when a live lock stays (another's, not stolen).
   */
  async unlock (uid: string, userId: string, steal: boolean): Promise<boolean> {
    await this.change(told => `WITH released AS (DELETE FROM locks WHERE uid = $1 AND (creator = $2 OR NOT ${live('locks')} OR ($3 AND stealable))
      RETURNING uid) SELECT ${told} FROM released`, [uid, userId, steal])
    return await this.live(uid) === null
  }

  /**
   * 409 when the object has a live lock and the request does not carry its token (plone.restapi:
   * "Resource is locked"). `known`: the lock as traversal read it (`Located.lock`), when it did.
   */
  async assertWritable (uid: string, token: string | undefined, known?: LockRow | null): Promise<void> {
    const lock = known !== undefined ? known : await this.live(uid)
    if (lock !== null && (token === undefined || !sameSecret(lock.token, token))) {
      throw Conflict(`The object is locked for editing by '${lock.creator}'; send its Lock-Token, or wait until it is unlocked.`)
    }
  }
}

/**
 * plone.restapi's lock info as `who` sees it: `stealable` says whether they
 * may take it over (`mayModify`: they may edit the object); the token only
 * to its holder (plone.restapi shows it to everyone, which lets anyone write
 * through someone else's lock).
 */
export function lockInfo (baseUrl: string, lock: LockRow | null, who: string | null, mayModify: boolean): Record<string, unknown> {
  if (lock === null) return { locked: false, stealable: true }
  const holder = who !== null && who === lock.creator
  return {
    locked: true,
    stealable: holder || (lock.stealable && mayModify),
    creator: lock.creator,
    creator_name: lock.creator,
    creator_url: urlOf(baseUrl, `/author/${lock.creator}`),
    time: lock.created.getTime() / 1000,
    created: isoDate(lock.created),
    timeout: lock.timeout,
    name: lock.stealable ? 'plone.locking.stealable' : 'plone.locking.nonstealable',
    ...(holder ? { token: lock.token } : {})
  }
}
