import t from 'tap'
import { type CatalogRow, KeptRows, mayView } from '../../core/catalog/kept-rows.js'

const rowOf = (title: string, allowed: string[] | null = ['Anonymous']): CatalogRow =>
  ({ values: [title], allowed, effective: null, expires: null, creator: null })

/** A read that answers what `table` holds when it is let go (`release`), counting the uids each read asked for. */
function reader (table: Map<string, CatalogRow>): { read: (uids: string[]) => Promise<Map<string, CatalogRow>>, asked: string[][], release: () => void, fail: (err: Error) => void } {
  const asked: string[][] = []
  let pending: Array<{ resolve: () => void, reject: (err: Error) => void }> = []
  return {
    asked,
    read: async uids => {
      asked.push(uids)
      await new Promise<void>((resolve, reject) => { pending.push({ resolve, reject }) })
      return new Map(uids.flatMap(uid => table.has(uid) ? [[uid, table.get(uid) as CatalogRow]] : []))
    },
    release: () => { const now = pending; pending = []; for (const p of now) p.resolve() },
    fail: err => { const now = pending; pending = []; for (const p of now) p.reject(err) }
  }
}

const tick = async (): Promise<void> => { await new Promise(resolve => setImmediate(resolve)) }

t.test('rows are read once, kept by uid for every later page, and forgotten when they change', async t => {
  const table = new Map([['a', rowOf('A')], ['b', rowOf('B')], ['c', rowOf('C')]])
  const rows = new KeptRows(1024 * 1024)
  const { read, asked, release } = reader(table)
  const first = rows.rows(['a', 'b', 'x'], true, read)
  await tick()
  release()
  t.same([...(await first).keys()], ['a', 'b'], 'a uid without a row is not found')
  const second = rows.rows(['b', 'c', 'a'], true, read)
  await tick()
  release()
  t.same([...(await second).keys()].sort(), ['a', 'b', 'c'])
  t.same(asked, [['a', 'b', 'x'], ['c']], 'only the row not kept is read')
  table.set('b', rowOf('B, changed'))
  rows.changed(['b'])
  const third = rows.rows(['a', 'b'], true, read)
  await tick()
  release()
  t.equal((await third).get('b')?.values[0], 'B, changed')
  t.same(asked.at(-1), ['b'], 'the changed row alone is read again')
  rows.changed()
  const fourth = rows.rows(['a', 'c'], true, read)
  await tick()
  release()
  await fourth
  t.same(asked.at(-1), ['a', 'c'], 'a change that does not say which rows: every row is read again')
})

t.test('a row that changes while it is read is given to its caller, not kept; callers do not wait for each other', async t => {
  const table = new Map([['a', rowOf('A')], ['b', rowOf('B')]])
  const rows = new KeptRows(1024 * 1024)
  const { read, asked, release } = reader(table)
  const first = rows.rows(['a', 'b'], true, read)
  await tick()
  rows.changed(['a'])
  release()
  t.same([...(await first).keys()], ['a', 'b'])
  const second = rows.rows(['a', 'b'], true, read)
  await tick()
  release()
  await second
  t.same(asked, [['a', 'b'], ['a']], 'the row that changed while it was read was not kept; the other was')
  // Two callers at once: each reads what is not kept.
  rows.changed()
  const [third, fourth] = [rows.rows(['a'], true, read), rows.rows(['a', 'b'], true, read)]
  await tick()
  t.same(asked.slice(-2), [['a'], ['a', 'b']])
  release()
  t.same([...(await third).keys()], ['a'])
  t.same([...(await fourth).keys()], ['a', 'b'])
  const fifth = rows.rows(['b', 'a'], true, read)
  t.equal(asked.length, 4, 'both kept')
  t.same([...(await fifth).keys()], ['b', 'a'])
})

t.test('a failed read fails its caller and keeps nothing', async t => {
  const rows = new KeptRows(1024 * 1024)
  const { read, asked, fail, release } = reader(new Map([['a', rowOf('A')]]))
  const first = rows.rows(['a'], true, read)
  await tick()
  fail(new Error('connection lost'))
  await t.rejects(first, /connection lost/)
  const second = rows.rows(['a'], true, read)
  await tick()
  release()
  t.same([...(await second).keys()], ['a'])
  t.equal(asked.length, 2, 'read again after the failure')
  t.ok(rows.bytes > 0, 'and kept')
})

t.test('while other processes\' writes are not heard, nothing is kept or shared', async t => {
  const rows = new KeptRows(1024 * 1024)
  const { read, asked, release } = reader(new Map([['a', rowOf('A')]]))
  for (let n = 0; n < 2; n++) {
    const reading = rows.rows(['a'], false, read)
    await tick()
    release()
    await reading
  }
  t.equal(asked.length, 2)
  t.equal(rows.bytes, 0)
})

t.test('the budget bounds the rows kept, the least recently used first out', async t => {
  const table = new Map(Array.from({ length: 200 }, (_, i) => [`u${i}`, rowOf('x'.repeat(1000))]))
  const rows = new KeptRows(64 * 1024)
  const { read, release } = reader(table)
  for (let i = 0; i < 200; i += 20) {
    const reading = rows.rows([...table.keys()].slice(i, i + 20), true, read)
    await tick()
    release()
    t.equal((await reading).size, 20)
  }
  t.ok(rows.bytes <= 64 * 1024 && rows.bytes > 32 * 1024, `within the budget (${rows.bytes} bytes)`)
})

t.test('mayView: the access clause of the catalogue, on one row', async t => {
  const at = Date.parse('2024-06-01T12:00:00Z') * 1000
  const row = (over: Partial<CatalogRow>): CatalogRow => ({ ...rowOf('x', ['Member', 'user:olga']), ...over })
  const member = { principals: ['Anonymous', 'Authenticated', 'Member'], showInactive: false }
  t.ok(mayView(row({}), member, at))
  t.notOk(mayView(row({ allowed: ['Manager'] }), member, at), 'no principal in common')
  t.notOk(mayView(row({ allowed: null }), member, at), 'no principals allowed (NULL)')
  t.notOk(mayView(row({ allowed: [] }), member, at))
  t.ok(mayView(row({ effective: at }), member, at), 'effective at this very microsecond')
  t.notOk(mayView(row({ effective: at + 1 }), member, at), 'effective a microsecond later')
  t.notOk(mayView(row({ expires: at }), member, at), 'expired at this very microsecond')
  t.ok(mayView(row({ expires: at + 1 }), member, at))
  t.ok(mayView(row({ expires: at }), { ...member, showInactive: true }, at), 'who sees inactive objects sees it')
  t.ok(mayView(row({ expires: at, creator: 'olga' }), { ...member, showInactiveOf: 'olga' }, at), 'its creator, asking for inactive objects of theirs')
  t.notOk(mayView(row({ expires: at, creator: 'paul' }), { ...member, showInactiveOf: 'olga' }, at), 'another\'s')
  t.notOk(mayView(row({ allowed: ['Manager'], creator: 'olga' }), { ...member, showInactiveOf: 'olga' }, at), 'the creator, without a principal allowed')
})
