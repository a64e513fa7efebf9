import { keepBinary } from './blobs.js'
import type { Queryable } from '../db/db.js'
import { Conflict } from '../errors.js'
import { freeId, MAX_ID_ATTEMPTS } from './free-ids.js'
import { Pacer, runsOf } from '../pacing.js'
import { CONTENT_COLUMN_TYPES, CREATORS, DATA, POSITION, contentValues, renamed, type NewObject } from './new-object.js'
import { takePositions } from './positions.js'
import { indexLinksOfMany } from './link-index.js'
import { CONTENT_COLUMNS as COLUMNS, withChanges, type ContentRow, type Located } from './rows.js'

/** The first key of the per-folder advisory lock under which an import looks for free ids. */
const IMPORT_LOCK_CLASS = 7340020

/**
 * The write of a bulk import (one attempt of ContentStore.createMany), inside
 * its transaction `tx`: the batch's rows at consecutive positions in the
 * items' order, taken by its first statement (core/content/positions.ts), an
 * object whose id another took (in the folder, or earlier in the batch) under
 * the next free one, a taken explicit id a 409; then the histories, binaries,
 * catalogue rows and index operations (`reindexMany`), and their links
 * (core/content/link-index.ts). Returns the objects
 * as written, in their order.
 */
export async function writeBatch (tx: Queryable, reindexMany: (objects: Located[]) => Promise<void>, parent: Located, objects: NewObject[]): Promise<Located[]> {
  // Each row's position is its item's offset from the first one the statement takes.
  const rows = objects.map(({ located }, i) => ({ ...located.obj, position: i }))
  // In the order of their paths, as every import inserts them: two imports of the same ids wait in one order, not crosswise.
  rows.sort((a, b) => a.path < b.path ? -1 : a.path > b.path ? 1 : 0)
  const { first, inserted } = await insertContent(tx, rows, { folder: parent.obj.uid, count: objects.length })
  const written = objects.map(({ located }, i) => withChanges(located, { position: first + i }))
  const lost = [...objects.entries()].filter(([, { located }]) => !inserted.has(located.obj.uid))
  for (const [i, { write }] of lost) {
    if (write.id !== undefined) throw Conflict(`items/${i}: the id '${write.id}' is taken in ${parent.obj.path}.`)
  }
  // The next free ids are found by one import of the folder at a time: two that looked for them
  // side by side would each take ids the other holds uncommitted, and wait for each other.
  if (lost.length > 0) await tx.query(`SELECT pg_advisory_xact_lock(${IMPORT_LOCK_CLASS}, hashtext($1))`, [parent.obj.uid])
  for (const [i, { located }] of lost) {
    const base = located.obj.id
    for (let attempt = 0; ; attempt++) {
      // Inside the transaction: the ids of this batch count as taken.
      written[i] = renamed(written[i], parent, await freeId(tx, parent, base))
      if ((await insertContent(tx, [written[i].obj])).inserted.size === 1) break
      if (attempt >= MAX_ID_ATTEMPTS) throw Conflict(`No free id for '${base}' in ${parent.obj.path}; try again.`)
    }
  }
  const history = objects.flatMap(({ history }, i) => history.map((entry, seq) => ({ uid: written[i].obj.uid, seq, ...entry })))
  if (history.length > 0) {
    await tx.query(`INSERT INTO workflow_history (uid, seq, action, actor, comments, review_state, time)
      SELECT * FROM unnest($1::uuid[], $2::bigint[], $3::text[], $4::text[], $5::text[], $6::text[], $7::timestamptz[])`,
    ['uid', 'seq', 'action', 'actor', 'comments', 'review_state', 'time'].map(key => history.map(h => h[key as keyof typeof h])))
  }
  // A binary a statement: its bytes travel as they are (a list of them would be hex-encoded text, twice their size, in one go).
  const pacer = new Pacer()
  for (const [i, { write }] of objects.entries()) {
    for (const [field, binary] of write.binaries) {
      // Only a single write ends a resumable upload (plugins/routes/tus.ts): an import's bodies carry their bytes.
      if (!('bytes' in binary)) throw new Error(`The import of ${written[i].obj.path} names an upload.`)
      await pacer.pace()
      await tx.query(keepBinary(binary.store, '(SELECT $1::uuid AS uid) AS written', '$2::text', '$3::bytea'), [written[i].obj.uid, field, binary.bytes])
    }
  }
  await indexLinksOfMany(tx, written)
  await reindexMany(written)
  return written
}

/**
 * Inserts content rows, in their order, in a statement per run of about a
 * megabyte of data (core/pacing.ts); a row whose id or path is taken is
 * skipped. Returns the uids inserted. `place`: the first statement takes
 * `count` positions in the folder (core/content/positions.ts), and each row's
 * position is an offset from the first, which it returns.
 */
async function insertContent (tx: Queryable, rows: ContentRow[], place?: { folder: string, count: number }): Promise<{ inserted: Set<string>, first: number }> {
  const pacer = new Pacer()
  // Each row's data as JSON text, a row at a time: an import's are 16 MB of text.
  const values: unknown[][] = []
  for (const row of rows) {
    await pacer.pace()
    values.push(contentValues(row))
  }
  const inserted = new Set<string>()
  let first: number | undefined
  for (const run of runsOf(values, row => (row[DATA] as string).length)) {
    await pacer.pace()
    // The runs after the first hold positions the first took: offsets from it become positions.
    const placed = first === undefined ? run : run.map(row => row.map((value, c) => c === POSITION ? first! + (value as number) : value))
    const result = await insertRun(tx, placed, first === undefined ? place : undefined)
    first ??= result.first
    for (const uid of result.inserted) inserted.add(uid)
  }
  return { inserted, first: first ?? 0 }
}

/** One statement of `insertContent`: these rows' values (contentValues), and the folder's positions when `place` says so. */
async function insertRun (tx: Queryable, values: unknown[][], place?: { folder: string, count: number }): Promise<{ inserted: string[], first: number }> {
  // One array a column, zipped by unnest; creators (a text[] a row) travel as JSON.
  const params: unknown[] = CONTENT_COLUMN_TYPES.map((_, c) => values.map(row => c === CREATORS ? JSON.stringify(row[c]) : row[c]))
  let selected = COLUMNS.replace('creators', 'ARRAY(SELECT jsonb_array_elements_text(creators))')
  let taken = ''
  if (place !== undefined) {
    params.push(place.folder, place.count)
    taken = `taken AS (${takePositions(`$${params.length - 1}::uuid`, `$${params.length}::bigint`)}),`
    selected = selected.replace(/\bposition\b/, '(SELECT position FROM taken) + position')
  }
  const { rows: [result] } = await tx.query<{ first: number | null, inserted: string[] }>(`WITH ${taken} inserted AS (INSERT INTO content (${COLUMNS})
    SELECT ${selected}
    FROM unnest(${CONTENT_COLUMN_TYPES.map((type, c) => `$${c + 1}::${c === CREATORS ? 'jsonb' : type}[]`).join(', ')}) AS r(${COLUMNS})
    ON CONFLICT DO NOTHING RETURNING uid)
    SELECT ${place !== undefined ? '(SELECT position FROM taken)' : 'NULL::bigint'} AS first, ARRAY(SELECT uid::text FROM inserted) AS inserted`, params, { prepared: true })
  return { inserted: result.inserted, first: result.first ?? 0 }
}
