import { escapeLike, type Queryable } from '../db/db.js'
import { BadRequest } from '../errors.js'
import { column } from '../catalog/catalog.js'
import { pathParents } from './paths.js'
import { takePositions } from './positions.js'
import { CONTENT_COLUMNS as COLUMNS, type ContentRow } from './rows.js'

/** The path of the object `id` in the folder at `folder`. */
export const childPath = (folder: string, id: string): string => folder === '/' ? `/${id}` : `${folder}/${id}`

/** Whether `path` is `root` or below it. */
export const within = (path: string, root: string): boolean => path === root || root === '/' || path.startsWith(`${root}/`)

/**
 * Locks an object (by uid, wherever it is now) and every folder inside it
 * (FOR UPDATE, in path order, again until no folder it has not locked
 * appears), as a delete does (core/content/subtree.ts), and answers its row
 * as it is once locked (null: it is gone). From then on its path cannot
 * change under the caller (a move of a folder above it waits), and an
 * insert into the subtree either committed before (and is part of what the
 * caller reads) or waits for the caller's commit and then sees the folder's
 * new path (infra/migrations/021_redirects.sql).
 */
export async function lockSubtree (tx: Queryable, uid: string, folderish: string[]): Promise<ContentRow | null> {
  let held = new Set<string>()
  for (;;) {
    const { rows: [root] } = await tx.query<ContentRow>(`SELECT ${COLUMNS} FROM content WHERE uid = $1 FOR UPDATE`, [uid])
    if (root === undefined) return null
    const { rows } = await tx.query<{ uid: string }>(`SELECT uid FROM content
      WHERE path LIKE $1 || '/%' AND portal_type = ANY($2::text[]) ORDER BY path FOR UPDATE`, [escapeLike(root.path), folderish])
    const locked = new Set(rows.map(r => r.uid))
    if ([...locked].every(u => held.has(u))) return root
    held = locked
  }
}

/**
 * The folder a move or a copy goes to, as it is now: its row is read FOR KEY
 * SHARE, so that a move of it that is under way is waited for (its new path
 * is read) and a delete of it waits for the caller. Null: it is gone.
 */
export async function destination (tx: Queryable, uid: string): Promise<ContentRow | null> {
  const { rows: [row] } = await tx.query<ContentRow>(`SELECT ${COLUMNS} FROM content WHERE uid = $1 FOR KEY SHARE`, [uid])
  return row ?? null
}

/** 400 for a folder put into itself or into one of its descendants, as Zope refuses the paste. */
export function refuseIntoItself (root: ContentRow, folder: ContentRow): void {
  if (within(folder.path, root.path)) throw BadRequest(`${root.path} cannot be put into itself or into an object inside it (${folder.path}).`)
}

/**
 * Moves the locked subtree of `root` into `folder` under `id`, set-based:
 * one UPDATE of the content rows (paths by prefix, the root's folder, id and,
 * in another folder, its next position there), one of the catalogue's path
 * columns, one INSERT of the redirects every old path leaves. Answers the
 * uids moved, root first. Access (local roles inherited from the new
 * folders) is the caller's: core/security/subtree-access.ts.
 */
export async function moveSubtree (tx: Queryable, root: ContentRow, folder: ContentRow, id: string): Promise<string[]> {
  const from = root.path
  const to = childPath(folder.path, id)
  const otherFolder = root.parent_uid !== folder.uid
  const params = [root.uid, to, from, escapeLike(from), folder.uid, id]
  const position = otherFolder ? '(SELECT position FROM taken)' : 'position'
  const { rows } = await tx.query<{ uid: string }>(`${otherFolder ? `WITH taken AS (${takePositions('$5::uuid', '1')}) ` : ''}UPDATE content SET
      path = $2 || substr(path, length($3) + 1),
      parent_uid = CASE WHEN uid = $1 THEN $5::uuid ELSE parent_uid END,
      id = CASE WHEN uid = $1 THEN $6 ELSE id END,
      position = CASE WHEN uid = $1 THEN ${position} ELSE position END
    WHERE uid = $1 OR path LIKE $4 || '/%' RETURNING uid`, params)
  const uids = [root.uid, ...rows.map(r => r.uid).filter(uid => uid !== root.uid)]
  const [pathString, parents, depth, getId, idColumn, positionColumn] = ['path_string', 'path_parents', 'path_depth', 'getId', 'id', 'getObjPositionInParent'].map(column)
  // The catalogue's paths as core/catalog/indexes.ts derives them: the new folder's parents, then the moved part's, rewritten.
  await tx.query(`UPDATE catalog SET
      ${pathString} = $2 || substr(${pathString}, length($3) + 1),
      ${parents} = $5::text[] || ARRAY(SELECT $2 || substr(p, length($3) + 1) FROM unnest(${parents}) WITH ORDINALITY AS u(p, n)
        WHERE p = $3 OR p LIKE $4 || '/%' ORDER BY n),
      ${depth} = ${depth} + $6::int,
      ${getId} = CASE WHEN catalog.uid = $1 THEN $7 ELSE ${getId} END,
      ${idColumn} = CASE WHEN catalog.uid = $1 THEN $7 ELSE ${idColumn} END,
      ${positionColumn} = CASE WHEN catalog.uid = $1 THEN (SELECT position FROM content WHERE uid = $1) ELSE ${positionColumn} END
    WHERE catalog.uid = ANY($8::uuid[])`,
  [root.uid, to, from, escapeLike(from), pathParents(folder.path), pathParents(to).length - pathParents(from).length, id, uids])
  await leaveRedirects(tx, from, to, uids)
  return uids
}

/**
 * Every object now under `to` leaves its old path (under `from`) as a
 * redirect to itself (plone.app.redirector), one statement; a redirect of a
 * path an object now holds is dropped (the object is found first anyway).
 */
async function leaveRedirects (tx: Queryable, from: string, to: string, uids: string[]): Promise<void> {
  await tx.query(`INSERT INTO redirects (path, uid) SELECT $1 || substr(path, length($2) + 1), uid FROM content WHERE uid = ANY($3::uuid[])
    ON CONFLICT (path) DO UPDATE SET uid = EXCLUDED.uid, manual = false, created = now()`, [from, to, uids])
  await tx.query('DELETE FROM redirects WHERE path IN (SELECT path FROM content WHERE uid = ANY($1::uuid[]))', [uids])
}
