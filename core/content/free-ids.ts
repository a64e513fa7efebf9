import type { Queryable } from '../db/db.js'
import type { Located } from './rows.js'

/** Creates with one title racing in one folder: each lost race means a rival won, so this bounds the rivals one create waits out. */
export const MAX_ID_ATTEMPTS = 100

/**
 * The first free id of `base`, `base-1`, `base-2` … as the folder is now
 * (the contract's order, without gaps). Of creates with one title that race,
 * each round one wins: a create retries at most once per rival.
 */
export async function freeId (q: Queryable, parent: Located, base: string): Promise<string> {
  const { rows } = await q.query<{ id: string }>("SELECT id FROM content WHERE parent_uid = $1 AND (id = $2 OR id LIKE $2 || '-%')", [parent.obj.uid, base])
  const used = new Set(rows.map(r => r.id))
  let n = 0
  while (used.has(n === 0 ? base : `${base}-${n}`)) n++
  return n === 0 ? base : `${base}-${n}`
}
