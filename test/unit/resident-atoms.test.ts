import fc from 'fast-check'
import t from 'tap'
import { Atoms, type AtomSpec } from '../../core/catalog/resident/atoms.js'
import { Bits } from '../../core/catalog/resident/bits.js'

/**
 * The kept filters of the resident catalogue stay exact under changes: after
 * any sequence of filters asked, documents changed (some columns, or all) and
 * removed, with a budget small enough that filters are evicted and read again,
 * every filter asked answers what testing every live document answers now
 * (the oracle: a scan of the documents' current values, written here). A
 * change of some columns tests only the filters that read one of them; a new
 * document only the ungated filters and those gated by a value it holds (the
 * keyword column `k`, a list of words).
 */
const DOCS = 8
const COLUMNS = ['a', 'b', 'c'] as const
const WORDS = ['x', 'y', 'z'] as const
type Column = typeof COLUMNS[number]
type Doc = Record<Column, number> & { k: string[] }

/** A filter: a value wanted in one column, or in either of two. */
const filter = fc.oneof(
  fc.record({
    columns: fc.constantFrom<Column[]>(['a'], ['b'], ['c'], ['a', 'b'], ['b', 'c']),
    value: fc.integer({ min: 0, max: 1 })
  }),
  // A keyword's filter: the documents whose `k` holds the word, gated by it.
  fc.record({ word: fc.constantFrom(...WORDS) })
)
const words = fc.subarray([...WORDS])
const step = fc.oneof(
  fc.record({ kind: fc.constant('ask' as const), filter }),
  // A change of one column or of several, the columns told or not (a new document's values: every filter tests it).
  fc.record({
    kind: fc.constant('change' as const),
    doc: fc.integer({ min: 0, max: DOCS - 1 }),
    values: fc.oneof(
      fc.record({ column: fc.constantFrom(...COLUMNS), value: fc.integer({ min: 0, max: 1 }) }).map(({ column, value }) => ({ [column]: value })),
      fc.record({ a: fc.integer({ min: 0, max: 1 }), b: fc.integer({ min: 0, max: 1 }), c: fc.integer({ min: 0, max: 1 }) }, { requiredKeys: [] })
    ),
    told: fc.boolean()
  }),
  fc.record({ kind: fc.constant('remove' as const), doc: fc.integer({ min: 0, max: DOCS - 1 }) }),
  // A new document, numbered after every other.
  fc.record({ kind: fc.constant('add' as const), a: fc.integer({ min: 0, max: 1 }), b: fc.integer({ min: 0, max: 1 }), k: words })
)

t.test('kept filters answer what a scan of the documents answers, under changes and evictions', async t => {
  fc.assert(fc.property(fc.array(step, { maxLength: 120 }), fc.integer({ min: 1, max: 4 }), (steps, budgetSets) => {
    const docs: Array<Doc | null> = Array.from({ length: DOCS }, (_, n) => ({ a: n % 2, b: (n >> 1) % 2, c: 0, k: WORDS.filter((_, w) => (n >> w) % 2 === 1) }))
    const live = Bits.of(docs.keys())
    // A budget of one to four sets: some are kept, the others evicted and read again.
    const atoms = new Atoms(budgetSets * new Bits(live.capacity).byteSize)
    const tested = new Set<string>()
    type Filter = { columns: Column[], value: number } | { word: string }
    const keyOf = (f: Filter): string => 'word' in f ? `k=${f.word}` : `${f.columns.join('|')}=${f.value}`
    const passes = (f: Filter, doc: Doc | null | undefined): boolean => doc != null && ('word' in f ? doc.k.includes(f.word) : f.columns.some(column => doc[column] === f.value))
    const spec = (f: Filter): AtomSpec => ({
      key: keyOf(f),
      columns: 'word' in f ? ['k'] : f.columns,
      ...'word' in f ? { gate: { column: 'k', value: f.word } } : {},
      test: doc => {
        tested.add(keyOf(f))
        return passes(f, docs[doc])
      }
    })
    for (const s of steps) {
      if (s.kind === 'ask') {
        const found = atoms.get(spec(s.filter), live)
        const expected = docs.flatMap((doc, n) => passes(s.filter, doc) ? [n] : [])
        const answered: number[] = []
        found.forEach(doc => { answered.push(doc) })
        if (answered.join() !== expected.join()) return false
      } else if (s.kind === 'change') {
        const doc = docs[s.doc]
        if (doc === null) continue
        const changed = new Set(Object.keys(s.values).filter(column => s.values[column as Column] !== doc[column as Column]))
        Object.assign(doc, s.values)
        tested.clear()
        atoms.changed(s.doc, true, s.told ? changed : undefined)
        if (s.told && [...tested].some(key => key.startsWith('k=') || !key.split('=')[0].split('|').some(column => changed.has(column)))) return false
      } else if (s.kind === 'add') {
        const doc: Doc = { a: s.a, b: s.b, c: 0, k: s.k }
        const n = docs.push(doc) - 1
        live.add(n)
        tested.clear()
        atoms.added(n, column => column === 'k' ? doc.k : doc[column as Column])
        // Of the keyword filters, only those of its own words test it.
        if ([...tested].some(key => key.startsWith('k=') && !doc.k.includes(key.slice(2)))) return false
      } else {
        docs[s.doc] = null
        live.delete(s.doc)
        atoms.changed(s.doc, false)
      }
    }
    return true
  }), { numRuns: 2000 })
  t.pass('2 000 sequences')
})

t.test('a filter that reads two changed columns is tested once', async t => {
  const docs = [{ a: 1, b: 1 }]
  let tests = 0
  const atoms = new Atoms(1024)
  atoms.get({ key: 'a|b', columns: ['a', 'b'], test: doc => { tests++; return docs[doc].a === 2 && docs[doc].b === 2 } }, Bits.of([0]))
  tests = 0
  docs[0] = { a: 2, b: 2 }
  atoms.changed(0, true, new Set(['a', 'b']))
  t.equal(tests, 1)
  const kept: number[] = []
  atoms.get({ key: 'a|b', columns: ['a', 'b'], test: () => false }, Bits.of([0])).forEach(doc => { kept.push(doc) })
  t.same(kept, [0], 'kept, and now holding the document')
})
