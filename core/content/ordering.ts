import { column } from '../catalog/catalog.js'
import type { Queryable } from '../db/db.js'
import { BadRequest } from '../errors.js'
import { takePositions } from './positions.js'
import type { Located } from './rows.js'
import type { ContentStore } from './store.js'

/**
 * The order of a folder's items (plone.restapi's `ordering` and `sort` of a
 * PATCH, plone.folder's explicit ordering): a reorder gives the folder's
 * items their positions (core/content/positions.ts) in another order, in one
 * transaction of three statements whatever their number, with their
 * catalogue rows (`getObjPositionInParent`) and their index operations, so
 * that every listing by position, in every process, answers the new order
 * once it commits.
 *
 * A reorder holds the folder's position counter (the row every create in the
 * folder takes first) from its read of the items to its commit: creates and
 * other reorders of the folder wait for it, and it reads every item committed
 * before it. It reuses the positions the items hold, in a new order: they stay
 * distinct, and below the counter. Only the rows whose position changes are
 * written: a move by k places writes k + 1 rows; a move of one item to the
 * very top or bottom, one (a position before the first, or the counter's
 * next), so that positions then have gaps, as after a delete.
 */

/** What a reorder reads of an item: its uid, its id, its position. */
export interface Item { uid: string, id: string, position: number }

/** `ordering` of a PATCH: which item moves, how far (`top`, `bottom`, or up (< 0) or down (> 0) by that many), among which. */
export interface Move { objId: string, delta: 'top' | 'bottom' | number, subsetIds?: string[] }

/** How a folder's items are sorted by `sort`: by a sortable catalogue index, either way. */
export interface Sort { index: string, descending: boolean }

/** The most ids a `subset_ids` may name (a body holds at most 10,000 JSON values: core/security/json-body.ts). */
export const MAX_SUBSET_IDS = 5_000

/**
 * The ids in their new order after `move` (plone.folder's
 * `moveObjectsByDelta` for one id): the item moves within the subset (all
 * items when none is given), and the subset's items take, in their new
 * order, the places the subset held. 400 for a subset that is not in the
 * folder's order (`Client/server ordering mismatch`, as plone.restapi), or
 * names an id twice or one the folder does not hold, and for an unknown item.
 */
export function moved (order: string[], move: Move): string[] {
  const place = new Map(order.map((id, i) => [id, i]))
  if (!place.has(move.objId)) throw BadRequest(`The folder holds no item '${move.objId}'.`)
  const subset = move.subsetIds === undefined || move.subsetIds.length === 0 ? [...order] : [...move.subsetIds]
  if (new Set(subset).size !== subset.length) throw BadRequest('subset_ids names an id twice.')
  for (const id of subset) if (!place.has(id)) throw BadRequest(`The folder holds no item '${id}'.`)
  for (let i = 1; i < subset.length; i++) if (place.get(subset[i - 1])! > place.get(subset[i])!) throw BadRequest('Client/server ordering mismatch')
  const delta = move.delta === 'top' ? -order.length : move.delta === 'bottom' ? order.length : move.delta
  const from = subset.indexOf(move.objId)
  // Not in the subset: nothing moves (plone.folder skips it).
  if (from < 0 || delta === 0) return order
  const to = Math.min(Math.max(from + delta, 0), subset.length - 1)
  subset.splice(from, 1)
  subset.splice(to, 0, move.objId)
  const inSubset = new Set(subset)
  let next = 0
  return order.map(id => inSubset.has(id) ? subset[next++] : id)
}

/** How often a reorder that PostgreSQL ended as a deadlock (with a write that locks in another order) starts over. */
const MAX_DEADLOCK_ATTEMPTS = 5

/**
 * Gives the items of `folder` the order `plan` answers (the uids of all of
 * them, from the items in their order now, or in the order of `sort`): see
 * above. Answers how many items changed place.
 */
export async function reorder (store: ContentStore, folder: Located, plan: (items: Item[]) => string[], sort?: Sort): Promise<number> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await store.write(async ({ tx, reindexed }) => {
        // The folder's counter, held until the commit: creates in the folder wait, and the read below sees every item before it.
        const held = async (count: number): Promise<number> => (await tx.query<{ position: number }>(`WITH held AS (${takePositions('$1::uuid', '$2::bigint')})
          SELECT position FROM held`, [folder.obj.uid, count])).rows[0].position
        await held(0)
        const items = await itemsOf(tx, folder.obj.uid, sort)
        const order = plan(items)
        let changed = placed(items, order)
        if (changed.uids.length === 0) return 0
        // One item to the very top or bottom (Volto's buttons): a position before the first or after the last, one row written.
        const end = changed.uids.length > 1 ? endOf(items, order) : null
        if (end === 'top') changed = { uids: [order[0]], positions: [items.reduce((first, item) => Math.min(first, item.position), Infinity) - 1] }
        if (end === 'bottom') changed = { uids: [order[order.length - 1]], positions: [await held(1)] }
        // Content rows first, then catalogue rows, in two statements: the order of every write of an object (its PATCH).
        await tx.query(`UPDATE content SET position = v.position FROM unnest($1::uuid[], $2::bigint[]) AS v(uid, position)
          WHERE content.uid = v.uid AND content.parent_uid = $3`, [changed.uids, changed.positions, folder.obj.uid])
        await tx.query(`UPDATE catalog SET ${column('getObjPositionInParent')} = v.position FROM unnest($1::uuid[], $2::bigint[]) AS v(uid, position)
          WHERE catalog.uid = v.uid`, [changed.uids, changed.positions])
        await reindexed(changed.uids)
        return changed.uids.length
      })
    } catch (err) {
      if ((err as { code?: string }).code === '40P01' && attempt < MAX_DEADLOCK_ATTEMPTS) continue
      throw err
    }
  }
}

/** The items of a folder in their order now, or in the order of `sort` (then by the catalogue's tie-breakers, as a listing). */
async function itemsOf (tx: Queryable, folder: string, sort?: Sort): Promise<Item[]> {
  const order = sort === undefined
    ? 'c.position, c.id'
    : `k.${column(sort.index)} ${sort.descending ? 'DESC' : 'ASC'} NULLS LAST, k.created, k.uid`
  const { rows } = await tx.query<Item>(`SELECT c.uid::text AS uid, c.id, c.position FROM content c
    ${sort === undefined ? '' : 'LEFT JOIN catalog k ON k.uid = c.uid'} WHERE c.parent_uid = $1 ORDER BY ${order}`, [folder])
  return rows
}

/** Whether `order` is the items' order by position but for one item moved to the top or the bottom. */
function endOf (items: Item[], order: string[]): 'top' | 'bottom' | null {
  const now = [...items].sort((a, b) => a.position - b.position).map(item => item.uid)
  const same = (a: string[], b: string[]): boolean => a.length === b.length && a.every((uid, i) => uid === b[i])
  if (same(order.slice(1), now.filter(uid => uid !== order[0]))) return 'top'
  if (same(order.slice(0, -1), now.filter(uid => uid !== order[order.length - 1]))) return 'bottom'
  return null
}

/** The ids of a folder's items in their order now (one read, no lock: a check before the write). */
export async function itemIds (q: Queryable, folder: string): Promise<string[]> {
  const { rows } = await q.query<{ id: string }>('SELECT id FROM content WHERE parent_uid = $1 ORDER BY position, id', [folder])
  return rows.map(row => row.id)
}

/** The items whose position changes when `order` (uids) takes the positions the items hold, lowest first. */
function placed (items: Item[], order: string[]): { uids: string[], positions: number[] } {
  const positions = items.map(item => item.position).sort((a, b) => a - b)
  const now = new Map(items.map(item => [item.uid, item.position]))
  const changed: { uids: string[], positions: number[] } = { uids: [], positions: [] }
  order.forEach((uid, i) => {
    if (now.get(uid) !== positions[i]) {
      changed.uids.push(uid)
      changed.positions.push(positions[i])
    }
  })
  return changed
}
