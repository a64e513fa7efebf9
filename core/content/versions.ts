import type { Queryable } from '../db/db.js'
import { ValidationFailed } from '../errors.js'
import type { ContentType } from './registry.js'
import type { ContentRow } from './rows.js'
import type { Statement } from './statement.js'

/** The behavior that makes a type versionable (Plone's `plone.versioning`, with its `changeNote` field). */
export const VERSIONING_BEHAVIOR = 'plone.versioning'
/** The comment of version 0 when the create sent no change note (plone.app.versioningbehavior's). */
export const INITIAL_VERSION_NOTE = 'Initial version'
/** The longest change note kept: Plone's is a line of any length; one that fills the table is not a note. */
export const MAX_CHANGE_NOTE = 2000
/** Versions kept per object when the operator says nothing (VERSIONS_KEPT), and the most they may keep. */
export const DEFAULT_VERSIONS_KEPT = 50
export const MAX_VERSIONS_KEPT = 1000
/** Version ids a request may name: a PostgreSQL `integer`. */
export const MAX_VERSION_ID = 2 ** 31 - 1

/** Who made a version and why: the edit's (or the create's, or the revert's) actor and comment. */
export interface VersionNote { actor: string | null, comment: string }

/** A version as `@history` lists it. */
export interface VersionEntry { version: number, actor: string | null, time: Date, comment: string }

/** A version as `GET @history/<n>` serves it: the object's state as that write left it. */
export interface StoredVersion extends VersionEntry { review_state: string | null, creators: string[], data: Record<string, unknown> }

/** Whether objects of the type keep versions. */
export const versionable = (type: ContentType): boolean => type.declaration.behaviors.some(b => b.name === VERSIONING_BEHAVIOR)

/**
 * The CTEs that keep the version a write of one object leaves, added to that
 * write's statement (core/content/store.ts): `changed` is the data-modifying CTE
 * that returns the object's `uid` and `data` as written, so that nothing is
 * kept when it changed nothing. The next id is one above the highest kept
 * (the object's row, locked by the write, orders the writes of one object);
 * with `kept`, the versions that fall out of the newest `kept` are deleted by
 * the same statement, which never sees (nor deletes) the one it adds.
 */
export function addVersion (statement: Statement, changed: string, obj: ContentRow, note: VersionNote, kept: number): void {
  const { p } = statement
  statement.with('next_version', `SELECT ${changed}.uid, ${changed}.data,
    COALESCE((SELECT max(version_id) FROM versions WHERE versions.uid = ${changed}.uid), -1) + 1 AS version_id FROM ${changed}`)
  statement.with('versioned', `INSERT INTO versions (uid, version_id, actor, time, comment, review_state, creators, data)
    SELECT uid, version_id, ${p(note.actor)}, ${p(obj.modified)}, ${p(note.comment)}, ${p(obj.review_state)}, ${p(obj.creators)}, data FROM next_version`)
  statement.with('pruned', `DELETE FROM versions USING next_version
    WHERE versions.uid = next_version.uid AND versions.version_id <= next_version.version_id - ${p(kept)}`)
}

/**
 * The change note a write sends (plone.versioning's `changeNote`, which is
 * never stored on the object): '' when absent or null, else a line of at
 * most MAX_CHANGE_NOTE characters (400 otherwise).
 */
export function changeNoteOf (body: unknown, fallback = ''): string {
  if (body === null || typeof body !== 'object' || !Object.hasOwn(body, 'changeNote')) return fallback
  const note = (body as { changeNote: unknown }).changeNote
  if (note === null || note === '') return fallback
  if (typeof note !== 'string') throw badNote('Must be a string.')
  if (note.length > MAX_CHANGE_NOTE) throw badNote(`Must not have more than ${MAX_CHANGE_NOTE} characters.`)
  return note
}

const badNote = (message: string): Error => ValidationFailed([{ field: 'changeNote', message, error: 'ValidationError' }])

/** A version id as a path segment names it (`@history/3`): digits only, within PostgreSQL's integer; null otherwise. */
export function versionIdOf (segment: string): number | null {
  if (!/^\d{1,10}$/.test(segment)) return null
  const id = Number(segment)
  return id <= MAX_VERSION_ID ? id : null
}

/**
 * What a revert writes: the version's value of every field the write path
 * takes from a body, and null for what the version did not have. Images and
 * files are left as they are now: their bytes are kept once an object, not a
 * version, so a version's description of them may name bytes that are gone.
 */
export function revertBody (type: ContentType, version: Record<string, unknown>, current: Record<string, unknown>): Record<string, unknown> {
  const body: Record<string, unknown> = {}
  for (const [name, field] of type.fields) {
    if (field.kind === 'image' || field.kind === 'file' || name === 'changeNote') continue
    if (Object.hasOwn(version, name)) body[name] = version[name]
    else if (Object.hasOwn(current, name) && !type.required.has(name)) body[name] = null
  }
  return body
}

/** The versions of objects, as `@history` reads them (written only by the statements of writes: `addVersion`). */
export class Versions {
  constructor (private readonly db: Queryable) {}

  /** The object's versions kept, newest first. */
  async list (uid: string): Promise<VersionEntry[]> {
    const { rows } = await this.db.query<VersionEntry>(`SELECT version_id AS version, actor, time, comment FROM versions
      WHERE uid = $1 ORDER BY version_id DESC LIMIT ${MAX_VERSIONS_KEPT + 1}`, [uid])
    return rows
  }

  /** One version of the object; null when it has none of that id (never kept, or no longer). */
  async get (uid: string, version: number): Promise<StoredVersion | null> {
    const { rows } = await this.db.query<StoredVersion>(`SELECT version_id AS version, actor, time, comment, review_state, creators, data
      FROM versions WHERE uid = $1 AND version_id = $2`, [uid, version])
    return rows[0] ?? null
  }
}
