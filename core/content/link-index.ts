import { escapeLike, type Queryable } from '../db/db.js'
import { byUid, linksOfField } from './links.js'
import type { ContentType } from './registry.js'
import type { Located } from './rows.js'
import type { Statement } from './statement.js'

/**
 * The index of links between objects by UID (`links`, migration 022), which
 * `@linkintegrity` reads backwards: who links to what is about to be deleted.
 * An object's links are those its blocks and rich texts keep by UID
 * (core/content/links.ts) and a Link's `remoteUrl` when it names a UID
 * (Plone keeps `${portal_url}/resolveuid/<uid>` there). They are written by
 * the statement that writes the object, so that the index is never behind
 * its content, and leave with it (the foreign key's cascade).
 */

/** A `resolveuid/<uid>` anywhere in a Link's address (Plone's `${portal_url}/resolveuid/<uid>`, or relative). */
const REMOTE_BY_UID = /(?:^|\/)resolveuid\/([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})(?:[/?#]|$)/i

/** The field of a Link that holds its address. */
const REMOTE_URL = 'remoteUrl'

/** Whether objects of this type may link to others: only their writes keep the index. */
export const holdsLinks = (type: ContentType): boolean =>
  type.fields.has(REMOTE_URL) || [...type.fields.values()].some(field => field.kind === 'blocks' || field.kind === 'richtext')

/** The UIDs an object of `type` with `data` links to, each once. */
export function linkedUidsOf (type: ContentType, data: Record<string, unknown>): string[] {
  const uids = new Set<string>()
  for (const [name, field] of type.fields) {
    const value = data[name]
    if (name === REMOTE_URL && typeof value === 'string') {
      const match = REMOTE_BY_UID.exec(value)
      if (match !== null) uids.add(match[1].toLowerCase())
      continue
    }
    for (const link of linksOfField(field.kind, value)) {
      const kept = byUid(link)
      if (kept !== null) uids.add(kept.uid)
    }
  }
  return [...uids]
}

/**
 * Adds to a write's statement the index's change for the object `source`
 * (a CTE returning its `uid`) writes: the links it no longer holds go, the
 * new ones come. Nothing happens when `source` returns nothing (a version
 * check that failed). `before`: what the object held before an update
 * (absent: a create); a write that holds no link before or after adds nothing.
 */
export function indexLinks (statement: Statement, source: string, located: Located, before?: Located): void {
  if (!holdsLinks(located.type)) return
  const targets = linkedUidsOf(located.type, located.obj.data)
  const held = before === undefined ? [] : linkedUidsOf(before.type, before.obj.data)
  if (targets.length === 0 && held.length === 0) return
  const t = statement.p(targets)
  statement.with('links_dropped', `DELETE FROM links USING ${source} WHERE links.source = ${source}.uid AND links.target <> ALL(${t}::uuid[])`)
  statement.with('links_added', `INSERT INTO links (source, target) SELECT ${source}.uid, target FROM ${source}, unnest(${t}::uuid[]) AS target ON CONFLICT DO NOTHING`)
}

/** The links of new objects (a bulk import), in one statement, inside the import's transaction. */
export async function indexLinksOfMany (tx: Queryable, objects: Located[]): Promise<void> {
  const sources: string[] = []
  const targets: string[] = []
  for (const { obj, type } of objects) {
    if (!holdsLinks(type)) continue
    for (const target of linkedUidsOf(type, obj.data)) {
      sources.push(obj.uid)
      targets.push(target)
    }
  }
  if (sources.length === 0) return
  await tx.query('INSERT INTO links (source, target) SELECT * FROM unnest($1::uuid[], $2::uuid[]) ON CONFLICT DO NOTHING', [sources, targets])
}

/** A link that would break: `source` links to `target`, which is `root` or inside it. */
export interface Breach { root: string, target: string, source: string }

/**
 * The links into each of `roots` (an object and everything inside it) from
 * objects outside it, in one query however many objects are inside: at most
 * `limit` of them, by root, target path and source path. Who may see the
 * sources is the caller's to decide.
 */
export async function breachesOf (q: Queryable, roots: Array<{ uid: string, path: string }>, limit: number): Promise<Breach[]> {
  if (roots.length === 0) return []
  // The site root's path is '/': what is inside it starts with '/', not '//'.
  const prefixes = roots.map(({ path }) => `${escapeLike(path === '/' ? '' : path)}/%`)
  const { rows } = await q.query<Breach>(`SELECT r.uid::text AS root, l.target::text AS target, l.source::text AS source
    FROM unnest($1::uuid[], $2::text[]) WITH ORDINALITY AS r(uid, prefix, n)
    JOIN content t ON t.uid = r.uid OR t.path LIKE r.prefix
    JOIN links l ON l.target = t.uid
    JOIN content s ON s.uid = l.source
    WHERE s.uid <> r.uid AND s.path NOT LIKE r.prefix
    ORDER BY r.n, t.path, s.path
    LIMIT $3`, [roots.map(root => root.uid), prefixes, limit])
  return rows
}
