import { escapeLike, type Queryable } from '../db/db.js'
import type { ContentRow } from './rows.js'

/**
 * Deletes an object with everything inside it, inside the delete's
 * transaction, and answers the uids of the objects it deleted, so that each
 * leaves the indexes: nothing is deleted that the answer does not name.
 *
 * Under READ COMMITTED, a create or import that commits while the delete
 * runs would otherwise add objects the delete never read and that the
 * foreign key's cascade removes without a word to the outbox (issue 22:
 * orphan documents in Solr). An insert into a folder takes a KEY SHARE lock
 * on the folder's row (the foreign key's check), so the delete first locks
 * the object and every folder inside it (FOR UPDATE, in path order, so that
 * deletes of nested folders wait in one order), again until no folder it
 * has not locked appears (one created meanwhile in a folder it had not
 * locked yet). From then on a write that adds to the subtree either
 * committed before the lock was granted, and its objects are read and
 * deleted here, or waits for this delete and then finds its folder gone (a
 * 404, nothing written). `folderish`: the types that may hold objects.
 *
 * An object deleted (or deleted and created again at its path) by another
 * delete meanwhile is left alone: nothing is deleted then.
 */
export async function removeSubtree (tx: Queryable, root: ContentRow, folderish: string[]): Promise<string[]> {
  const within = [root.uid, escapeLike(root.path), folderish]
  let held = new Set<string>()
  for (;;) {
    const { rows } = await tx.query<{ uid: string }>(`SELECT uid FROM content
      WHERE uid = $1 OR (path LIKE $2 || '/%' AND portal_type = ANY($3::text[])) ORDER BY path FOR UPDATE`, within)
    const locked = new Set(rows.map(r => r.uid))
    if (!locked.has(root.uid)) return []
    if ([...locked].every(uid => held.has(uid))) break
    held = locked
  }
  const { rows } = await tx.query<{ uid: string }>("DELETE FROM content WHERE uid = $1 OR path LIKE $2 || '/%' RETURNING uid", within.slice(0, 2))
  return rows.map(r => r.uid)
}
