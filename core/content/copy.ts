import { column } from '../catalog/catalog.js'
import { escapeLike, type Queryable } from '../db/db.js'
import { childPath } from './move.js'
import { takePositions } from './positions.js'
import type { ContentRow } from './rows.js'

/** Bytes of a file copied a call of lo_put: a copy never holds a whole file in the server's memory. */
const FILE_SLICE_BYTES = 1024 * 1024

/** The content columns a copy sets itself; every other column (those other features add) is copied as it is. */
const SET_BY_COPY = new Set(['uid', 'parent_uid', 'id', 'path', 'review_state', 'owner', 'position', 'created', 'modified'])

/** What a copy makes of each object it copies, besides what it keeps. */
export interface CopyOptions {
  /** The copier: owner of every copy (Zope's `manage_fixupOwnershipAfterAdd`, recursive). */
  owner: string | null
  /** The initial workflow state of each type (null: none): a copy starts its workflow again, as CMFCore drops `workflow_history` on copy. */
  initialStates: Record<string, string | null>
  now: Date
  /** The copier's principals (core/security/roles.ts, `principalsOf`): only what they may view is copied. */
  viewers: string[]
}

let contentColumns: Promise<string[]> | null = null

/** The content table's columns as the database has them (migrations of other features add some). */
async function columnsOf (q: Queryable): Promise<string[]> {
  contentColumns ??= q.query<{ name: string }>("SELECT attname AS name FROM pg_attribute WHERE attrelid = 'content'::regclass AND attnum > 0 AND NOT attisdropped ORDER BY attnum")
    .then(({ rows }) => rows.map(r => r.name))
  try {
    return await contentColumns
  } catch (err) {
    contentColumns = null
    throw err
  }
}

/**
 * Copies the subtree of `root` into `folder` under `id`, set-based whatever
 * its size: one statement maps every object to a new uid, one INSERT…SELECT
 * writes the copies (paths by prefix, in path order so that each folder is
 * written before what it holds), one their creation history entries, one
 * their images, two their files. Answers the new uids, root first; the
 * caller writes their catalogue rows (uids, owners, states and access all
 * changed) and index operations.
 *
 * A file's large object is copied, not shared: the `files` table's trigger
 * unlinks the large object of a row replaced or deleted, and sharing would
 * need a count of holders that two deletes of two sharers could both read
 * as "another holds it" (a leak) or neither (a file lost). The copy goes a
 * slice at a time, server-side.
 */
export async function copySubtree (tx: Queryable, root: ContentRow, folder: ContentRow, id: string, options: CopyOptions): Promise<string[]> {
  const { rows: read } = await tx.query<{ old: string, new: string, parent: string }>(`SELECT c.uid AS old, gen_random_uuid() AS new, c.parent_uid AS parent
    FROM content c JOIN catalog k ON k.uid = c.uid
    WHERE c.uid = $1 OR (c.path LIKE $2 || '/%' AND k.${column('allowedRolesAndUsers')} && $3::text[]) ORDER BY c.path`, [root.uid, escapeLike(root.path), options.viewers])
  // What the copier may not view is not copied, nor anything inside it (path order: a folder before what it holds).
  const kept = new Set<string>()
  const mapping: typeof read = []
  for (const m of read) {
    if (m.old !== root.uid && !kept.has(m.parent)) continue
    kept.add(m.old)
    mapping.push(m)
  }
  const map = [mapping.map(m => m.old), mapping.map(m => m.new)]
  const set: Record<string, string> = {
    uid: 'm.new',
    parent_uid: 'CASE WHEN c.uid = $1 THEN $4::uuid ELSE pm.new END',
    id: 'CASE WHEN c.uid = $1 THEN $5 ELSE c.id END',
    path: '$6 || substr(c.path, length($7) + 1)',
    review_state: '$8::jsonb ->> c.portal_type',
    owner: '$9',
    position: 'CASE WHEN c.uid = $1 THEN (SELECT position FROM taken) ELSE c.position END',
    created: '$10',
    modified: '$10'
  }
  const columns = (await columnsOf(tx)).filter(name => /^[a-z_]+$/.test(name))
  const values = columns.map(name => SET_BY_COPY.has(name) ? set[name] : `c.${name}`)
  // An object deleted since the mapping was read is not copied; nor is what it held (its row's parent is then missing from the join).
  const { rows } = await tx.query<{ uid: string }>(`WITH m AS (SELECT * FROM unnest($2::uuid[], $3::uuid[]) AS m(old, new)),
      taken AS (${takePositions('$4::uuid', '1')})
    INSERT INTO content (${columns.join(', ')})
    SELECT ${values.join(', ')} FROM content c JOIN m ON m.old = c.uid LEFT JOIN m AS pm ON pm.old = c.parent_uid
    WHERE c.uid = $1 OR pm.new IS NOT NULL ORDER BY c.path RETURNING uid`,
  [root.uid, ...map, folder.uid, id, childPath(folder.path, id), root.path, JSON.stringify(options.initialStates), options.owner, options.now])
  const copied = new Set(rows.map(r => r.uid))
  const pairs = mapping.filter(m => copied.has(m.new))
  const [olds, news] = [pairs.map(m => m.old), pairs.map(m => m.new)]
  await tx.query(`INSERT INTO workflow_history (uid, seq, action, actor, comments, review_state, time)
    SELECT uid, 0, NULL, $2, '', review_state, $3 FROM content WHERE uid = ANY($1::uuid[]) AND review_state IS NOT NULL`, [news, options.owner, options.now])
  const pairsSql = 'unnest($1::uuid[], $2::uuid[]) AS m(old, new)'
  await tx.query(`INSERT INTO blobs (uid, field, bytes) SELECT m.new, b.field, b.bytes FROM ${pairsSql} JOIN blobs b ON b.uid = m.old`, [olds, news])
  await tx.query(`INSERT INTO files (uid, field, oid, size) SELECT m.new, f.field, lo_create(0), f.size FROM ${pairsSql} JOIN files f ON f.uid = m.old`, [olds, news])
  await tx.query(`SELECT count(*) FROM (SELECT lo_put(n.oid, at, lo_get(o.oid, at, least(${FILE_SLICE_BYTES}, o.size - at)::int))
    FROM ${pairsSql} JOIN files o ON o.uid = m.old JOIN files n ON n.uid = m.new AND n.field = o.field,
    generate_series(0::bigint, o.size - 1, ${FILE_SLICE_BYTES}) AS at) AS put`, [olds, news])
  return mapping.map(m => m.new).filter(uid => copied.has(uid))
}
