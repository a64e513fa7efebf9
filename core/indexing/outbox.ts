import type { Db, Queryable } from '../db/db.js'

export type IndexOp = 'index' | 'unindex'

/** The first key of the per-object advisory locks that order deliveries (`claim`, `claimNext`). */
const LOCK_CLASS = 7340010
/** `claimNext` looks at this many operations per object it may take: room for the objects other workers hold. */
const CLAIM_WINDOW = 8

/**
 * What a delivery read of one object's operations: their ids, oldest first
 * (JSON from PostgreSQL: numbers with both drivers, exact up to 2^53).
 */
export interface Claimed { uid: string, ids: number[] }

/** How far the index is behind, for operators. */
export interface OutboxStatus {
  /** Objects with operations waiting for Solr. */
  pending: number
  /** Objects whose document Solr refused (kept until a new operation or `retry`). */
  refused: number
  /** Age of the oldest pending operation: how far the index is behind. */
  oldest_pending_seconds: number | null
}

/**
 * The outbox: index operations recorded in the transaction of the content
 * change (infra/migrations/003), removed only once Solr accepted them, so
 * that none is lost while Solr or Redis is down. Operations for one object
 * collapse: a delivery sends the object as it is now. With them, the objects
 * Solr accepted but has not committed yet (index_unsettled, migration 007),
 * which searches must not trust either. This module alone reads and writes
 * these two tables.
 */
export class Outbox {
  constructor (private readonly db: Db) {}

  /** Inside a content write's transaction. */
  async record (tx: Queryable, op: IndexOp, uids: string[]): Promise<void> {
    if (uids.length > 0) await tx.query('INSERT INTO index_outbox (uid, op) SELECT unnest($1::uuid[]), $2', [uids, op])
  }

  /** The same, for the objects a CTE of the write's own statement returns (`source`, with a `uid`). */
  recordFrom (source: string, op: IndexOp): string {
    return `INSERT INTO index_outbox (uid, op) SELECT uid, '${op}' FROM ${source}`
  }

  /**
   * Takes these objects for delivery inside `tx`: a transaction-scoped
   * advisory lock per object orders concurrent deliveries (other requests,
   * the loop, the queue's workers, other processes), in UID order so that
   * two never wait on each other crosswise; the one that waits then reads
   * the newer state. Returns the objects that have operations, with the
   * operations the delivery covers: those committed before this read, whose
   * effect the object's state read after it shows.
   */
  async claim (tx: Queryable, uids: string[]): Promise<Claimed[]> {
    const sorted = [...new Set(uids)].sort()
    if (sorted.length === 0) return []
    await tx.query(`SELECT pg_advisory_xact_lock(${LOCK_CLASS}, hashtext(uid)) FROM (SELECT uid FROM unnest($1::text[]) WITH ORDINALITY AS u(uid, n) ORDER BY n) AS ordered`, [sorted])
    const { rows } = await tx.query<Claimed>('SELECT uid, json_agg(id ORDER BY id) AS ids FROM index_outbox WHERE uid = ANY($1::uuid[]) GROUP BY uid', [sorted])
    return rows
  }

  /**
   * Takes up to `limit` objects with pending operations, not refused, for
   * delivery inside `tx`, oldest first, skipping those another delivery
   * holds: several queue workers drain the outbox side by side without
   * waiting on each other. The same advisory lock as `claim`, tried rather
   * than awaited, so that deliveries of one object still take turns. Only
   * the oldest `limit × CLAIM_WINDOW` operations are looked at (the primary
   * key's order), which keeps a claim cheap however long the outbox is. The
   * LIMIT of `oldest` also keeps PostgreSQL from trying the locks inside the
   * grouping, on every object of the window, rather than on the `limit` taken.
   *
   * A delivery covers the operations of its objects within the window: one
   * recorded beyond it stays for the next delivery, which sends the object again. Reading each object's newest
   * operation from the whole outbox instead depends on the planner: with
   * statistics taken while the outbox was empty (it is empty most of the time)
   * PostgreSQL scanned the primary key for each object, and a claim of 1 000
   * from 20 000 waiting took 8.6 s (docs/performance-history.md, "The queue's drain").
   */
  async claimNext (tx: Queryable, limit: number): Promise<Claimed[]> {
    const { rows } = await tx.query<Claimed>(
      `SELECT oldest.uid, oldest.ids
       FROM (SELECT uid::text AS uid, min(id) AS first, json_agg(id ORDER BY id) AS ids
             FROM (SELECT uid, id FROM index_outbox WHERE refused IS NULL ORDER BY id LIMIT $2) AS operations
             GROUP BY uid ORDER BY first LIMIT $2) AS oldest
       WHERE pg_try_advisory_xact_lock(${LOCK_CLASS}, hashtext(oldest.uid)) LIMIT $1`,
      [limit, limit * CLAIM_WINDOW])
    return rows
  }

  /**
   * Solr accepted the claimed objects as they are now: the operations the
   * claim read go, with the objects' refused ones (an earlier delivery read
   * those, so the state sent includes them). No other operation goes,
   * whatever its id: ids are handed out when a write records, not when it
   * commits, so a delete's older id may commit after a newer update of the
   * same object was read, and removing "everything up to the newest read"
   * would lose that delete (Solr would keep the document). Until `settlingMs`
   * has passed the objects stay known as unsettled (0: committed already).
   */
  async acknowledge (tx: Queryable, claimed: Claimed[], settlingMs: number): Promise<void> {
    await tx.query('DELETE FROM index_outbox WHERE id = ANY($1::bigint[]) OR (uid = ANY($2::uuid[]) AND refused IS NOT NULL)',
      [claimed.flatMap(c => c.ids), claimed.map(c => c.uid)])
    await tx.query('DELETE FROM index_unsettled WHERE settles_at < now()')
    if (settlingMs === 0) return
    await tx.query(`INSERT INTO index_unsettled (uid, settles_at) SELECT unnest($1::uuid[]), now() + $2 * interval '1 millisecond'
      ON CONFLICT (uid) DO UPDATE SET settles_at = greatest(index_unsettled.settles_at, EXCLUDED.settles_at)`, [claimed.map(c => c.uid), settlingMs])
  }

  /**
   * A delivery failed (after its transaction rolled back): its objects go to
   * the back of the queue; when Solr refused the one document sent, its
   * message is kept on the operations it refused (the others stay unmarked: they may fix it).
   */
  async failed (uids: string[], refused?: { claimed: Claimed, message: string }): Promise<void> {
    await this.db.query('UPDATE index_outbox SET attempts = attempts + 1 WHERE uid = ANY($1::uuid[])', [uids])
    if (refused !== undefined) {
      await this.db.query('UPDATE index_outbox SET refused = $2 WHERE id = ANY($1::bigint[])', [refused.claimed.ids, refused.message])
    }
  }

  /** Objects with pending operations, oldest first, those Solr keeps refusing last (the background loop's order). */
  async next (limit: number): Promise<string[]> {
    const { rows } = await this.db.query<{ uid: string }>(`SELECT uid FROM index_outbox GROUP BY uid ORDER BY max(attempts), min(id) LIMIT ${limit}`)
    return rows.map(r => r.uid)
  }

  /**
   * For the queue's relay: whether operations older than `graceMs` wait
   * (younger ones are left to the request that recorded them), not refused.
   */
  async waiting (graceMs: number): Promise<boolean> {
    const { rows } = await this.db.query<{ waiting: boolean }>(
      'SELECT EXISTS (SELECT 1 FROM index_outbox WHERE refused IS NULL AND created_at < now() - make_interval(secs => $1)) AS waiting',
      [graceMs / 1000])
    return rows[0].waiting
  }

  /** Refused operations are offered again (`npm run solr -- retry`); returns how many. */
  async unrefuse (): Promise<number> {
    return (await this.db.query('UPDATE index_outbox SET refused = NULL WHERE refused IS NOT NULL')).rowCount
  }

  async status (): Promise<OutboxStatus> {
    const { rows: [outbox] } = await this.db.query<{ pending: number, refused: number, oldest: number | null }>(
      `SELECT count(*) FILTER (WHERE NOT refused) AS pending, count(*) FILTER (WHERE refused) AS refused,
              extract(epoch FROM now() - min(oldest) FILTER (WHERE NOT refused))::float8 AS oldest
       FROM (SELECT bool_and(refused IS NOT NULL) AS refused, min(created_at) FILTER (WHERE refused IS NULL) AS oldest
             FROM index_outbox GROUP BY uid) AS objects`)
    return { pending: outbox.pending, refused: outbox.refused, oldest_pending_seconds: outbox.oldest === null ? null : Math.round(outbox.oldest) }
  }
}

/**
 * SQL for the objects Solr may still show as they were: with unapplied
 * operations, or accepted and not yet committed. A subquery for the
 * catalogue, which checks them against the caller's access (core/catalog/search.ts).
 */
export const STALE_IN_SOLR = 'SELECT uid FROM index_outbox UNION SELECT uid FROM index_unsettled WHERE settles_at > now()'
