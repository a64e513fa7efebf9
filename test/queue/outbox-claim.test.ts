import fc from 'fast-check'
import { deepStrictEqual } from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import t from 'tap'
import type { Queryable } from '../../core/db/db.js'
import { Outbox, type Claimed } from '../../core/indexing/outbox.js'
import { build } from '../helper.js'

/**
 * What the queue's workers take from the outbox (Outbox.claimNext), against
 * an oracle written from its contract: of the oldest `limit × 8` operations
 * not refused, the objects in the order of their oldest operation there, at
 * most `limit`, each with its operations there (oldest first), none that
 * another delivery holds.
 */
const WINDOW_PER_OBJECT = 8

interface Operation { id: number, uid: string, refused: boolean }

function expectedClaim (operations: Operation[], limit: number, held: Set<string> = new Set()): Claimed[] {
  const window = operations.filter(o => !o.refused).sort((a, b) => a.id - b.id).slice(0, limit * WINDOW_PER_OBJECT)
  const objects = new Map<string, number[]>()
  for (const o of window) objects.set(o.uid, [...objects.get(o.uid) ?? [], o.id])
  return [...objects].sort(([, a], [, b]) => a[0] - b[0]).filter(([uid]) => !held.has(uid)).slice(0, limit).map(([uid, ids]) => ({ uid, ids }))
}

const sortedByUid = (claimed: Claimed[]): Claimed[] => [...claimed].sort((a, b) => a.uid.localeCompare(b.uid))

t.test('claimNext against its oracle, and at 20 000 waiting with statistics taken while the outbox was empty', async t => {
  const { app } = await build(t)
  const db = app.db
  const outbox = new Outbox(db)

  /** Inserts operations for these objects in this order (some refused); answers them with their ids. */
  async function record (uids: string[], refusedEvery = 0): Promise<Operation[]> {
    const { rows } = await db.query<{ id: number, uid: string, refused: boolean }>(
      `INSERT INTO index_outbox (uid, op, refused)
       SELECT u.uid, 'index', CASE WHEN $2 > 0 AND u.n % $2 = 0 THEN 'refused by the test' END
       FROM unnest($1::uuid[]) WITH ORDINALITY AS u(uid, n) ORDER BY u.n
       RETURNING id, uid::text, refused IS NOT NULL AS refused`, [uids, refusedEvery])
    return rows
  }

  t.test('drawn outboxes: objects, refusals, limits', async t => {
    const pool = Array.from({ length: 12 }, () => randomUUID())
    await fc.assert(fc.asyncProperty(
      fc.array(fc.constantFrom(...pool), { maxLength: 60 }), fc.integer({ min: 0, max: 5 }), fc.integer({ min: 1, max: 6 }),
      async (uids, refusedEvery, limit) => {
        await db.query('DELETE FROM index_outbox')
        const operations = await record(uids, refusedEvery)
        const claimed = await db.transaction(async tx => await outbox.claimNext(tx, limit))
        deepStrictEqual(claimed, expectedClaim(operations, limit))
      }), { numRuns: 60 })
    t.pass('60 drawn outboxes: each claim is what the oracle takes')
  })

  t.test('a second delivery skips the objects the first holds', async t => {
    await db.query('DELETE FROM index_outbox')
    const operations = await record(Array.from({ length: 30 }, (_, n) => n % 3 === 0 ? `00000000-0000-4000-8000-00000000000${n % 9}` : randomUUID()))
    let first: Claimed[] = []
    let second: Claimed[] = []
    await db.transaction(async tx => {
      first = await outbox.claimNext(tx, 4)
      second = await db.transaction(async other => await outbox.claimNext(other, 4))
    })
    t.same(first, expectedClaim(operations, 4))
    t.same(second, expectedClaim(operations, 4, new Set(first.map(c => c.uid))))
  })

  t.test('a delivery removes the operations it read, never one committed after its read, whatever its id', async t => {
    for (const [name, claim] of [['claim', async (tx: Queryable, uid: string) => await outbox.claim(tx, [uid])], ['claimNext', async (tx: Queryable) => await outbox.claimNext(tx, 10)]] as const) {
      await db.query('DELETE FROM index_outbox')
      const uid = randomUUID()
      // A write (a delete, say) records first and commits last: its id is older than the update's the delivery reads.
      let commitOlder = (): void => {}
      let olderRecorded = (): void => {}
      const recorded = new Promise<void>(resolve => { olderRecorded = resolve })
      const older = db.transaction(async tx => {
        await tx.query("INSERT INTO index_outbox (uid, op) VALUES ($1, 'unindex')", [uid])
        olderRecorded()
        await new Promise<void>(resolve => { commitOlder = resolve })
      })
      await recorded
      await record([uid])
      await db.transaction(async tx => {
        const claimed = await claim(tx, uid)
        t.equal(claimed.length, 1, `${name}: the delivery reads the committed operation`)
        // The older write commits while the delivery sends what it read.
        commitOlder()
        await older
        await outbox.acknowledge(tx, claimed, 0)
      })
      const { rows } = await db.query<{ op: string }>('SELECT op FROM index_outbox WHERE uid = $1', [uid])
      t.same(rows.map(r => r.op), ['unindex'], `${name}: the operation committed after the read waits for its own delivery`)
    }
  })

  t.test('20 000 objects waiting, the outbox analysed while empty: the claim reads its window once', async t => {
    await db.query('DELETE FROM index_outbox')
    // What a queue table looks like to the planner most of the time: empty when last analysed.
    await db.query('ANALYZE index_outbox')
    const waiting = Array.from({ length: 20_000 }, () => randomUUID())
    // Operations delivered earlier (dead rows before the window), then the waiting ones, then newer operations of some of them.
    const delivered = await record(Array.from({ length: 10_000 }, () => randomUUID()))
    await db.query('DELETE FROM index_outbox WHERE id <= $1', [delivered.at(-1)!.id])
    const operations = [...await record(waiting, 97), ...await record(waiting.filter((_, n) => n % 50 === 0))]

    // The statement's plan as it runs, with the buffers it touched (its locks end with it).
    let plan: Record<string, any> = {}
    const explaining: Queryable = {
      query: async (sql, params) => {
        const { rows } = await db.query(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${sql}`, params)
        plan = rows[0]['QUERY PLAN'][0].Plan
        return { rows: [], rowCount: 0 }
      }
    }
    await outbox.claimNext(explaining, 1000)
    const pages = Number(plan['Shared Hit Blocks']) + Number(plan['Shared Read Blocks'])
    const looked = 1000 * WINDOW_PER_OBJECT + delivered.length
    // The statement that read each claimed object's newest operation from the whole outbox went through the primary key under
    // these statistics: 291 000 pages here, 17 million in the bench's database.
    t.ok(pages <= 3 * looked, `the claim touched ${pages} pages for ${looked} operations in its window or passed over`)

    const claimed = await db.transaction(async tx => await outbox.claimNext(tx, 1000))
    t.same(sortedByUid(claimed), sortedByUid(expectedClaim(operations, 1000)), 'the thousand oldest objects, each with its operations in the window')
  })
})
