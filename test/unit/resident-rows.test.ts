import t from 'tap'
import { ResidentRows, type MetadataRow } from '../../core/catalog/resident/rows.js'

/**
 * The rows of the resident catalogue's pages are kept by document and shown
 * only when they are the row the page was decided on (the transaction that
 * wrote it): the table plays here as a map of rows the test changes, and
 * `read` records what it was asked.
 */
function table (): { rows: Map<string, MetadataRow>, asked: string[][], read: (uids: string[]) => Promise<MetadataRow[]>, write: (uid: string, title: string, writer: number) => void } {
  const rows = new Map<string, MetadataRow>()
  const asked: string[][] = []
  return {
    rows,
    asked,
    read: async uids => { asked.push(uids); return uids.flatMap(uid => rows.has(uid) ? [{ ...rows.get(uid) as MetadataRow }] : []) },
    write: (uid, title, writer) => { rows.set(uid, { uid, changed_by: String(writer), Title: title }) }
  }
}

t.test('a row is read once, then shown from memory while its writer is the one the page names', async t => {
  const db = table()
  db.write('a', 'A', 10)
  db.write('b', 'B', 11)
  const rows = new ResidentRows(1 << 20)
  t.same((await rows.rowsOf(['a', 'b'], [10, 11], db.read)).map(r => r.Title), ['A', 'B'])
  t.same((await rows.rowsOf(['b', 'a'], [11, 10], db.read)).map(r => r.Title), ['B', 'A'], 'in the order of the page')
  t.same(db.asked, [['a', 'b']], 'the second page read nothing')
  t.ok(Object.isFrozen((await rows.rowsOf(['a'], [10], db.read))[0]), 'shared rows are frozen')
})

t.test('a page decided on a later writer reads the row again, only that row', async t => {
  const db = table()
  db.write('a', 'A', 10)
  db.write('b', 'B', 11)
  const rows = new ResidentRows(1 << 20)
  await rows.rowsOf(['a', 'b'], [10, 11], db.read)
  db.write('a', 'A2', 12)
  t.same((await rows.rowsOf(['a', 'b'], [12, 11], db.read)).map(r => r.Title), ['A2', 'B'])
  t.same(db.asked, [['a', 'b'], ['a']])
})

t.test('a row the table holds in a later version than the page was decided on is shown but not kept', async t => {
  const db = table()
  // The page was decided on writer 10; another process has since written 12, which this one has not heard of.
  db.write('a', 'newer', 12)
  const rows = new ResidentRows(1 << 20)
  t.same((await rows.rowsOf(['a'], [10], db.read)).map(r => r.Title), ['newer'], 'the table is the truth')
  t.same((await rows.rowsOf(['a'], [10], db.read)).map(r => r.Title), ['newer'])
  t.equal(db.asked.length, 2, 'not kept under the older writer: a caller checked against the page alone could see what it may not')
  await rows.rowsOf(['a'], [12], db.read)
  await rows.rowsOf(['a'], [12], db.read)
  t.equal(db.asked.length, 3, 'kept once a page is decided on the writer that wrote it')
})

t.test('a row the read leaves out (removed, or no longer visible to the caller) is left out of the page', async t => {
  const db = table()
  db.write('a', 'A', 10)
  const rows = new ResidentRows(1 << 20)
  t.same((await rows.rowsOf(['gone', 'a'], [9, 10], db.read)).map(r => r.uid), ['a'])
})

t.test('within the budget: the least recently shown rows go first', async t => {
  const db = table()
  for (let i = 0; i < 100; i++) db.write(`u${i}`, 'x'.repeat(1000), i + 1)
  const rows = new ResidentRows(20_000)
  for (let i = 0; i < 100; i++) await rows.rowsOf([`u${i}`], [i + 1], db.read)
  t.ok(rows.byteSize <= 20_000, `holds ${rows.byteSize} bytes`)
  const before = db.asked.length
  await rows.rowsOf(['u99'], [100], db.read)
  t.equal(db.asked.length, before, 'the most recent is kept')
  await rows.rowsOf(['u0'], [1], db.read)
  t.equal(db.asked.length, before + 1, 'the oldest is not')
})
