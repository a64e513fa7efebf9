import { storedData } from '../content/new-object.js'
import type { ContentType } from '../content/registry.js'
import type { ContentRow } from '../content/rows.js'
import { checkWrite, type WriteContext } from '../content/validation.js'
import { MAX_VERSION_ID, MAX_VERSIONS_KEPT, versionable, versionIdOf } from '../content/versions.js'
import type { Queryable } from '../db/db.js'
import { ApiError } from '../errors.js'
import { isObject, ploneUid, uidLinksPlone } from './format.js'
import { refusal, type ExchangeReport } from './report.js'

/**
 * Versions (CMFEditions) as plone.exportimport and collective.exportimport
 * write them: `exportimport.versions` maps each version id but the newest to
 * the object as that version had it; the newest is the object itself, its
 * `changeNote` and `changeActor` beside its fields. Here they are the rows of
 * `versions` (core/content/versions.ts), the newest the object's own state.
 */

/** The key of a data.json that holds its older versions. */
export const VERSIONS_KEY = 'exportimport.versions'

/** An older version of an exported object, its fields read as the object's are (binaries apart: they are the object's). */
export interface ExportedVersion { id: number, fields: Record<string, unknown>, time: Date | null, actor: string | null, comment: string, reviewState: string | null, creators: string[] }

/** What an export says of an object's versions: the older ones, oldest first, and who made the newest and why (null: it kept none). */
export interface ExportedHistory { older: ExportedVersion[], newest: { actor: string | null, comment: string } | null }

export const NO_VERSIONS: ExportedHistory = { older: [], newest: null }

const text = (value: unknown): string | null => typeof value === 'string' ? value : null

/**
 * The versions of a data.json: each older one's fields by `fieldsOf` (the
 * reader's, as for the object), its id a version id (else reported and left
 * out), at most MAX_VERSIONS_KEPT of them (the newest).
 */
export function readVersions (data: Record<string, unknown>, file: string, report: ExchangeReport,
  fieldsOf: (version: Record<string, unknown>) => Record<string, unknown>, date: (value: unknown) => Date | null): ExportedHistory {
  const exported = data[VERSIONS_KEY]
  const older: ExportedVersion[] = []
  if (isObject(exported)) {
    for (const [key, version] of Object.entries(exported)) {
      const id = versionIdOf(key)
      // The newest is one above the highest older one: that one must fit too.
      if (id === null || id === MAX_VERSION_ID || !isObject(version)) { report.problem('version not imported', `${file} ${key.slice(0, 20)}`, 'A version is an object under its version id (digits, below 2^31 - 1).'); continue }
      older.push({
        id,
        fields: fieldsOf(version),
        time: date(version.modified),
        actor: text(version.changeActor),
        comment: text(version.changeNote) ?? '',
        reviewState: text(version.review_state),
        creators: Array.isArray(version.creators) ? version.creators.filter((c): c is string => typeof c === 'string') : []
      })
    }
  }
  older.sort((a, b) => a.id - b.id)
  if (older.length > MAX_VERSIONS_KEPT) report.problem('versions not kept', file, `${older.length - MAX_VERSIONS_KEPT} older version(s): at most ${MAX_VERSIONS_KEPT} are kept.`)
  const kept = older.slice(-MAX_VERSIONS_KEPT)
  const newest = kept.length > 0 || typeof data.changeNote === 'string' ? { actor: text(data.changeActor), comment: text(data.changeNote) ?? '' } : null
  return { older: kept, newest }
}

/** An object being imported, as its versions need it: what was written of it now. */
export interface Versioned { uid: string, type: ContentType, versions: ExportedHistory, owner: string | null, modified: Date, reviewState: string | null, creators: string[], data: Record<string, unknown>, source: string }

/**
 * The versions of imported objects, in the import's transaction: those the
 * site kept of them are replaced by the exported ones (each checked as a
 * create of the type; one that fails is reported and left out), then the
 * object as written now as the newest, the newest `kept` in all. Nothing when
 * versioning is off (`kept` 0) or the type keeps no versions.
 */
export async function keepVersions (tx: Queryable, objects: Versioned[], kept: number, ctx: Omit<WriteContext, 'mode' | 'stored'>, report: ExchangeReport): Promise<void> {
  const rows: KeptVersion[] = []
  const replaced: string[] = []
  for (const object of objects) {
    const { older, newest } = object.versions
    if (kept === 0 || !versionable(object.type) || newest === null) continue
    const versions: KeptVersion[] = []
    for (const version of older) {
      try {
        const write = await checkWrite(object.type, version.fields, { ...ctx, mode: 'create', stored: {} })
        const data = storedData(write)
        versions.push({ uid: object.uid, version_id: version.id, actor: version.actor, time: version.time ?? object.modified, comment: version.comment, review_state: version.reviewState ?? object.reviewState, creators: version.creators, data })
      } catch (err) {
        if (!(err instanceof ApiError)) throw err
        report.problem('version not imported', `${object.source} ${version.id}`, refusal(err))
      }
    }
    const next = older.length > 0 ? older[older.length - 1].id + 1 : 0
    versions.push({ uid: object.uid, version_id: next, actor: newest.actor ?? object.owner, time: object.modified, comment: newest.comment, review_state: object.reviewState, creators: object.creators, data: object.data })
    rows.push(...versions.slice(-kept))
    replaced.push(object.uid)
  }
  if (replaced.length === 0) return
  await tx.query('DELETE FROM versions WHERE uid = ANY($1::uuid[])', [replaced])
  await tx.query(`INSERT INTO versions (uid, version_id, actor, time, comment, review_state, creators, data)
    SELECT v.uid, v.version_id, v.actor, v.time, v.comment, v.review_state, v.creators, v.data
    FROM jsonb_to_recordset($1::jsonb) AS v(uid uuid, version_id integer, actor text, time timestamptz, comment text, review_state text, creators text[], data jsonb)`, [JSON.stringify(rows)])
  report.count('versions imported', rows.length)
}

/** A version as `versions` keeps it, for an export. */
export interface KeptVersion { uid: string, version_id: number, actor: string | null, time: Date, comment: string, review_state: string | null, creators: string[], data: Record<string, unknown> }

/** The versions kept of these objects, oldest first. */
export async function versionsOf (q: Queryable, uids: string[]): Promise<Map<string, KeptVersion[]>> {
  const { rows } = await q.query<KeptVersion>('SELECT uid, version_id, actor, time, comment, review_state, creators, data FROM versions WHERE uid = ANY($1::uuid[]) ORDER BY uid, version_id', [uids])
  const byUid = new Map<string, KeptVersion[]>()
  for (const row of rows) byUid.set(row.uid, [...(byUid.get(row.uid) ?? []), row])
  return byUid
}

/**
 * What a data.json holds of an object's versions: the older ones under
 * `exportimport.versions` (their fields but binaries, which are the
 * object's), and the newest's note and actor; nothing when it kept none.
 */
export function exportedVersions (obj: ContentRow, type: ContentType | undefined, versions: KeptVersion[]): Record<string, unknown> {
  const newest = versions.at(-1)
  if (newest === undefined) return {}
  const older: Record<string, unknown> = {}
  for (const version of versions.slice(0, -1)) {
    const fields = Object.fromEntries(Object.entries(version.data).filter(([name]) => !['image', 'file'].includes(type?.fields.get(name)?.kind ?? '')))
    older[String(version.version_id)] = {
      ...(uidLinksPlone(fields) as Record<string, unknown>),
      '@type': obj.portal_type,
      UID: ploneUid(obj.uid),
      id: obj.id,
      modified: version.time.toISOString(),
      review_state: version.review_state,
      creators: version.creators,
      changeNote: version.comment,
      changeActor: version.actor
    }
  }
  return { [VERSIONS_KEY]: older, changeNote: newest.comment, changeActor: newest.actor }
}
