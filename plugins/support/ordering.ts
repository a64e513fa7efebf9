import type { FastifyInstance, FastifyRequest } from 'fastify'
import { callerOf } from './access.js'
import { itemIds, MAX_SUBSET_IDS, moved, reorder, type Move, type Sort } from '../../core/content/ordering.js'
import type { Located } from '../../core/content/rows.js'
import { BadRequest } from '../../core/errors.js'

/**
 * The ordering keys of a PATCH of a folder (plone.restapi's OrderingMixin):
 * `ordering` moves one item, `sort` sorts them all by a catalogue index.
 * They are not fields: the rest of the body is the object's change.
 */
export interface OrderingKeys { ordering?: Move, sort?: { on: string, descending: boolean } }

/** The longest id an item has (core/content/validation.ts). */
const MAX_ID_LENGTH = 255

const isObject = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value)

/** A delta as plone.restapi reads it: `top`, `bottom`, or what Python's `int()` takes (an integer, or its decimal text). */
function deltaOf (value: unknown): Move['delta'] {
  if (value === 'top' || value === 'bottom') return value
  const number = typeof value === 'string' && /^\s*[+-]?\d{1,15}\s*$/.test(value) ? Number(value) : value
  if (typeof number !== 'number' || !Number.isSafeInteger(number)) throw BadRequest("ordering.delta must be 'top', 'bottom' or an integer.")
  return number
}

const idOf = (value: unknown, name: string): string => {
  if (typeof value !== 'string' || value === '' || value.length > MAX_ID_LENGTH) throw BadRequest(`${name} must be the id of an item of the folder.`)
  return value
}

function moveOf (value: unknown): Move {
  if (!isObject(value)) throw BadRequest('ordering must be an object: {"obj_id": …, "delta": …, "subset_ids": […]}.')
  const subset = value.subset_ids
  if (subset !== undefined && subset !== null && !(Array.isArray(subset) && subset.length <= MAX_SUBSET_IDS)) {
    throw BadRequest(`ordering.subset_ids must be a list of at most ${MAX_SUBSET_IDS} ids.`)
  }
  return {
    objId: idOf(value.obj_id, 'ordering.obj_id'),
    delta: deltaOf(value.delta),
    ...(Array.isArray(subset) ? { subsetIds: subset.map((id, i) => idOf(id, `ordering.subset_ids[${i}]`)) } : {})
  }
}

function sortOf (value: unknown): OrderingKeys['sort'] {
  if (!isObject(value) || typeof value.on !== 'string' || value.on === '' || value.on.length > MAX_ID_LENGTH) {
    throw BadRequest('sort must be an object: {"on": <index>, "order": "ascending" | "descending"}.')
  }
  const order = value.order ?? 'ascending'
  if (order !== 'ascending' && order !== 'descending' && order !== 'reverse') throw BadRequest("sort.order must be 'ascending' or 'descending'.")
  return { on: value.on, descending: order !== 'ascending' }
}

/** A PATCH body's ordering keys, parsed (400 for a malformed one), and the rest of it: the fields it changes. */
export function splitOrdering (body: unknown): { fields: unknown, keys: OrderingKeys | null } {
  if (!isObject(body) || (!Object.hasOwn(body, 'ordering') && !Object.hasOwn(body, 'sort'))) return { fields: body, keys: null }
  const { ordering, sort, ...fields } = body
  return {
    fields,
    keys: { ...(ordering !== undefined ? { ordering: moveOf(ordering) } : {}), ...(sort !== undefined ? { sort: sortOf(sort) } : {}) }
  }
}

/** Whether a body changes any field (keys that start with `@`, such as `@type`, change none). */
export const changesFields = (fields: unknown): boolean => !isObject(fields) || Object.keys(fields).some(key => !key.startsWith('@'))

/**
 * The ordering keys checked against `folder` as it is now, before anything
 * is written (400 for an object that holds no items, a sort on an index that
 * cannot be sorted on, a move its items refuse), and the reorder they make,
 * `ordering` first as plone.restapi does: run it once the fields are written.
 * The caller checked that the request may modify the folder.
 */
export async function prepareOrdering (fastify: FastifyInstance, request: FastifyRequest, folder: Located, keys: OrderingKeys): Promise<() => Promise<void>> {
  if (!folder.type.folderish) throw BadRequest('Content ordering is not supported by this resource')
  const { ordering, sort } = keys
  let by: Sort | undefined
  if (sort !== undefined) {
    // The index as a listing sorts on it (Title is sortable_title), or the listing's 400.
    const query = fastify.listings.query(callerOf(request), {
      criteria: {}, sortOn: [sort.on], descending: sort.descending, batch: { start: 0, size: 1 }, metadataFields: [], fullobjects: false
    })
    const [key] = query.sort
    if (key === undefined || 'relevance' in key) throw BadRequest(`The index '${sort.on}' cannot be sorted on.`)
    by = { index: key.index.name, descending: sort.descending }
  }
  // Checked now against the items as they are, and again by the reorder under the folder's counter.
  if (ordering !== undefined) moved(await itemIds(fastify.db, folder.obj.uid), ordering)
  return async () => {
    if (ordering !== undefined) {
      await reorder(fastify.content, folder, items => {
        const uidOf = new Map(items.map(item => [item.id, item.uid]))
        return moved(items.map(item => item.id), ordering).map(id => uidOf.get(id)!)
      })
    }
    if (by !== undefined) await reorder(fastify.content, folder, items => items.map(item => item.uid), by)
  }
}
