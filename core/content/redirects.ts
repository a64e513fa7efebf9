import { escapeLike, type Db, type Queryable } from '../db/db.js'
import { ApiError, BadRequest } from '../errors.js'
import { pathParents } from './paths.js'

/** An alias (plone.app.redirector's redirect): the path it answers, where the object is now, since when, whether a person added it. */
export interface Alias { path: string, target: string, created: Date, manual: boolean }

/** What a site-wide listing of aliases asks for. */
export interface AliasQuery {
  /** Paths (the alias's or its object's) that start with it, as plone.restapi's `query`. */
  q?: string
  manual?: boolean
  start?: Date
  end?: Date
  offset: number
  limit: number
}

/** A new alias: the path and the object it names, optionally when (else now). */
export interface NewAlias { path: string, uid: string, created?: Date, manual?: boolean }

/** Characters of an alias path at most (a content path's ids are 255 each; this bounds the index). */
export const MAX_ALIAS_PATH = 2000

/**
 * An alias's path: site-relative, starting with `/`, segments neither empty
 * nor `.`/`..`/`++api++`, no NUL or service segment (`@…`), bounded.
 * Answers it with a trailing slash dropped, or throws 400.
 */
export function aliasPath (path: unknown): string {
  if (typeof path !== 'string' || !path.startsWith('/') || path.length > MAX_ALIAS_PATH) {
    throw BadRequest(`An alias is a path in the site starting with '/', of at most ${MAX_ALIAS_PATH} characters.`)
  }
  const segments = path.split('/').slice(1)
  if (segments[segments.length - 1] === '') segments.pop()
  if (segments.length === 0 || segments.some(s => s === '' || s === '.' || s === '..' || s.startsWith('@') || s.startsWith('++') || s.includes('\0'))) {
    throw BadRequest(`'${path.slice(0, 100)}' is not a path an alias may have.`)
  }
  return '/' + segments.join('/')
}

/** `aliasPath` for a file read line by line: the path, or why it is none (instead of a 400). */
export function aliasPathOrProblem (path: string): string | { problem: string } {
  try {
    return aliasPath(path)
  } catch (err) {
    if (err instanceof ApiError) return { problem: err.message }
    throw err
  }
}

/**
 * The redirects of moved and renamed objects and the aliases added by hand
 * (infra/migrations/021_redirects.sql): an old path names an object by uid,
 * so a chain of moves leads to where it is now; an object at the path is
 * always found first. Moves record theirs in their own statements
 * (core/content/move.ts).
 */
export class Redirects {
  constructor (private readonly db: Db) {}

  /**
   * Where a request for `path` that names no object goes: the longest of
   * `path` and its ancestors that is an alias (and names no object), the
   * object's uid and path now, and what of `path` lies below the alias.
   */
  async find (path: string): Promise<{ uid: string, target: string, rest: string } | null> {
    const candidates = pathParents(path).filter(p => p !== '/')
    if (candidates.length === 0) return null
    const { rows: [hit] } = await this.db.query<{ alias: string, uid: string, target: string }>(`SELECT r.path AS alias, r.uid, c.path AS target
      FROM redirects r JOIN content c ON c.uid = r.uid
      WHERE r.path = ANY($1) AND NOT EXISTS (SELECT 1 FROM content x WHERE x.path = r.path)
      ORDER BY length(r.path) DESC LIMIT 1`, [candidates])
    return hit === undefined ? null : { uid: hit.uid, target: hit.target, rest: path.slice(hit.alias.length) }
  }

  /** The aliases of one object, oldest first. */
  async of (uid: string): Promise<Alias[]> {
    const { rows } = await this.db.query<Alias>(`SELECT r.path, c.path AS target, r.created, r.manual FROM redirects r JOIN content c ON c.uid = r.uid
      WHERE r.uid = $1 ORDER BY r.path`, [uid])
    return rows
  }

  /**
   * Adds aliases in one statement, each replacing the alias of the same
   * path (plone.app.redirector's storage replaces it too; of one path given
   * twice, the last counts). Added by hand unless `manual` says otherwise.
   * A path that names an object, or the object's own path, is refused (400),
   * nothing added.
   */
  async add (given: NewAlias[], q: Queryable = this.db): Promise<void> {
    const aliases = [...new Map(given.map(a => [a.path, a])).values()]
    if (aliases.length === 0) return
    const { rows: taken } = await q.query<{ path: string }>('SELECT path FROM content WHERE path = ANY($1)', [aliases.map(a => a.path)])
    if (taken.length > 0) throw BadRequest(`'${taken[0].path.slice(0, 100)}' is the path of an object; an alias cannot take it.`)
    await q.query(`INSERT INTO redirects (path, uid, manual, created)
      SELECT a.path, a.uid, a.manual, COALESCE(a.created, now()) FROM unnest($1::text[], $2::uuid[], $3::timestamptz[], $4::boolean[]) AS a(path, uid, created, manual)
      JOIN content c ON c.uid = a.uid
      ON CONFLICT (path) DO UPDATE SET uid = EXCLUDED.uid, manual = EXCLUDED.manual, created = EXCLUDED.created`,
    [aliases.map(a => a.path), aliases.map(a => a.uid), aliases.map(a => a.created ?? null), aliases.map(a => a.manual ?? true)])
  }

  /** Removes these aliases (of one object when `uid` is given); answers how many went. */
  async remove (paths: string[], uid?: string): Promise<number> {
    const { rows } = await this.db.query<{ path: string }>(`DELETE FROM redirects WHERE path = ANY($1) ${uid !== undefined ? 'AND uid = $2' : ''} RETURNING path`,
      uid !== undefined ? [paths, uid] : [paths])
    return rows.length
  }

  /** The site's aliases, by path: a page of them and how many match. */
  async list (query: AliasQuery): Promise<{ items: Alias[], total: number }> {
    const params: unknown[] = []
    const p = (value: unknown): string => { params.push(value); return `$${params.length}` }
    const where: string[] = []
    if (query.q !== undefined) where.push(`(r.path LIKE ${p(escapeLike(query.q))} || '%' OR c.path LIKE $${params.length} || '%')`)
    if (query.manual !== undefined) where.push(`r.manual = ${p(query.manual)}`)
    if (query.start !== undefined) where.push(`r.created >= ${p(query.start)}`)
    if (query.end !== undefined) where.push(`r.created <= ${p(query.end)}`)
    const { rows } = await this.db.query<Alias & { total: string }>(`SELECT r.path, c.path AS target, r.created, r.manual, count(*) OVER () AS total
      FROM redirects r JOIN content c ON c.uid = r.uid ${where.length > 0 ? `WHERE ${where.join(' AND ')}` : ''}
      ORDER BY r.path LIMIT ${p(query.limit)} OFFSET ${p(query.offset)}`, params)
    const total = rows.length > 0 ? Number(rows[0].total) : query.offset > 0 ? (await this.count(query)) : 0
    return { items: rows.map(({ total: _, ...alias }) => alias), total }
  }

  /** The number of aliases a listing matches, for a page past its end. */
  private async count (query: AliasQuery): Promise<number> {
    return (await this.list({ ...query, offset: 0, limit: 1 })).total
  }
}
