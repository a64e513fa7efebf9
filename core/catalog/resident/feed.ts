import type { Queryable } from '../../db/db.js'
import { column } from '../catalog.js'
import type { ResidentRow, ResidentState } from './state.js'

/** Rows read in one statement while loading: the process answers other requests between them. */
const LOAD_BATCH = 2000

/**
 * How the resident catalogue follows the catalogue table. Every row written
 * carries the id of the transaction that wrote it (`changed_by`, set by a
 * trigger, migration 015) and every removed row leaves a tombstone with its
 * transaction's id (`catalog_removed`). A transaction this process has not
 * seen committed has an id at or above the oldest transaction running when
 * it last looked (`pg_snapshot_xmin`): so reading what was written or removed
 * at or above that mark, in one statement, finds every change since, whatever
 * order transactions commit in, whichever process wrote them, however many
 * notifications were lost. A change may be read twice; applying it is idempotent.
 */
export class ResidentFeed {
  /** Where the next refresh reads from: the snapshot's xmin taken before the last read (as text: an xid8). */
  private mark: string | null = null
  /**
   * The transactions at or above the mark whose changes a refresh read (xid8s
   * as text): the next looks leave them out. A transaction's changes are all
   * visible once it committed, so a look that saw one saw them all; a later
   * change of the same row carries the later transaction's id. Without this,
   * one long transaction (an `ANALYZE`, an import) held the mark while every
   * look read again every change committed since it began: at 50 writes a
   * second, each look of both processes re-applied more rows the longer it ran.
   */
  private readonly applied = new Set<string>()
  /** What a row is read as, after its uid. */
  private readonly values: string[]
  private readonly select: string

  constructor (private readonly state: ResidentState, withText: boolean) {
    this.values = [...withText ? ['searchable::text AS searchable'] : [], ...[...state.columns.values()].map(held => `${held.select} AS ${column(held.index)}`)]
    this.select = ['uid::text AS uid', ...this.values].join(', ')
  }

  private async snapshotMark (db: Queryable): Promise<string> {
    const { rows: [row] } = await db.query<{ mark: string }>('SELECT pg_snapshot_xmin(pg_current_snapshot())::text AS mark')
    return row.mark
  }

  /** Reads every row, in batches by uid, yielding between them; then what changed while it read. */
  async load (db: Queryable, yieldBetween: () => Promise<void>): Promise<void> {
    await adoptForeignTransactions(db)
    this.mark = await this.snapshotMark(db)
    this.applied.clear()
    let after = '00000000-0000-0000-0000-000000000000'
    let first = true
    for (;;) {
      // `catalog.uid`: the bare name would be the text it is read as, an order no index gives (every batch would sort the table).
      const { rows } = await db.query<ResidentRow>(`SELECT ${this.select} FROM catalog WHERE uid ${first ? '>=' : '>'} $1::uuid ORDER BY catalog.uid LIMIT ${LOAD_BATCH}`, [after])
      first = false
      for (const row of rows) this.state.put(row)
      if (rows.length < LOAD_BATCH) break
      after = rows[rows.length - 1].uid
      await yieldBetween()
    }
    await this.refresh(db)
  }

  /**
   * Applies what was written or removed since the last look, in one
   * statement (one snapshot: a row and its removal are never seen half),
   * which also answers where the next look starts: its own snapshot's xmin —
   * a transaction it could not see has an id at least that.
   */
  async refresh (db: Queryable): Promise<number> {
    if (this.mark === null) throw new Error('The resident catalogue refreshes only after it loaded.')
    const nulls = this.values.map(() => ', NULL').join('')
    const { rows } = await db.query<ResidentRow & { kind: 'row' | 'removed' | 'mark', by: string | null }>(`SELECT 'row' AS kind, changed_by::text AS by, ${this.select}
        FROM catalog WHERE changed_by >= $1::xid8 AND changed_by <> ALL($2::xid8[])
      UNION ALL SELECT 'removed', removed_by::text, uid::text${nulls}
        FROM catalog_removed WHERE removed_by >= $1::xid8 AND removed_by <> ALL($2::xid8[])
      UNION ALL SELECT 'mark', NULL, pg_snapshot_xmin(pg_current_snapshot())::text${nulls}`, [this.mark, [...this.applied]])
    const present = new Set(rows.filter(row => row.kind === 'row').map(row => row.uid))
    let next: string | null = null
    for (const row of rows) {
      if (row.by !== null) this.applied.add(row.by)
      if (row.kind === 'mark') next = row.uid
      else if (row.kind === 'row') this.state.put(row)
      else if (!present.has(row.uid)) this.state.remove(row.uid)
    }
    if (next === null) throw new Error('The catalogue\'s snapshot mark was not read.')
    this.mark = next
    // Below the mark the range leaves them out already.
    const mark = BigInt(next)
    for (const xid of this.applied) if (BigInt(xid) < mark) this.applied.delete(xid)
    return rows.length - 1
  }
}

/**
 * A database restored from a dump of another PostgreSQL server holds rows and
 * tombstones written by that server's transactions: ids this server may not
 * have reached yet (a newer server's counter starts low). A refresh would take
 * such an id for a transaction it has seen, and leave out this server's own
 * transaction when the counter reaches it: a write missed by every process,
 * for good. No transaction this server committed has an id at or above its
 * snapshot's xmax, so what has one is another server's: its rows are given
 * this transaction's id (the trigger writes it: every process reads them once
 * more), its tombstones dropped (every process loads whole after a restore).
 * On any other start both statements find nothing, through the ids' indexes.
 */
async function adoptForeignTransactions (db: Queryable): Promise<void> {
  await db.query('UPDATE catalog SET changed_by = pg_current_xact_id() WHERE changed_by >= pg_snapshot_xmax(pg_current_snapshot())')
  await db.query('DELETE FROM catalog_removed WHERE removed_by >= pg_snapshot_xmax(pg_current_snapshot())')
}

/** Tombstones older than this are dropped: a process that has not looked for so long reloads (ResidentCatalog). */
export const TOMBSTONE_HOURS = 1

/** Drops the tombstones no process needs any more. */
export async function dropOldTombstones (db: Queryable): Promise<void> {
  await db.query(`DELETE FROM catalog_removed WHERE at < now() - interval '${TOMBSTONE_HOURS} hours'`)
}
