import fc from 'fast-check'
import t from 'tap'
import { coreIndexes } from '../../core/catalog/indexes.js'
import { StringColumn } from '../../core/catalog/resident/string-column.js'

/**
 * The text column keeps its values as UTF-8 bytes in one arena and compares
 * them there; the oracle is a plain array of the strings set, ordered as the
 * catalogue orders text: code-point order (PostgreSQL's C collation), which
 * for UTF-16 is unit by unit with the surrogates above every other unit; a
 * lone surrogate (no UTF-8 form: PostgreSQL cannot hold one) takes its place
 * by that same rule. After any sequence of sets and clears — shared values,
 * unique ones, the empty string, multi-byte and astral characters, lone
 * surrogates and NUL, with the arena laid again after a few bytes of
 * garbage — every document shows its value, compares and equals as the
 * oracle says, and holds exactly its own value.
 */
const ranks = (text: string): number[] => Array.from({ length: text.length }, (_, i) => {
  const unit = text.charCodeAt(i)
  return unit >= 0xd800 && unit <= 0xdfff ? 0x10000 + unit : unit
})
const order = (a: string | null, b: string | null): number => {
  if (a === null) return b === null ? 0 : 1
  if (b === null) return -1
  const x = ranks(a)
  const y = ranks(b)
  for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return x[i] - y[i]
  return x.length - y.length
}

const corpus = ['', 'a', 'ab', 'b', 'published', 'private', 'é', 'e\u0301', '\u00ff', '\uffff', '\ud83d\ude00', '\ud800', '\udfff', 'a\u0000', '\u0000', 'talks/über-π', 'x'.repeat(40)]
const value = fc.oneof(fc.constantFrom(...corpus), fc.string({ unit: 'binary', maxLength: 6 }), fc.constant(null))
const DOCS = 6
const step = fc.tuple(fc.nat({ max: DOCS - 1 }), value, fc.boolean())
const sign = (n: number): number => Math.sign(n)

t.test('values, order (between documents, and against a value), equality and holds agree with plain strings, through sets, clears and compactions, values shared or not', async t => {
  const index = coreIndexes.find(i => i.kind === 'field')!
  fc.assert(fc.property(fc.array(step, { maxLength: 80 }), fc.integer({ min: 0, max: 64 }), fc.integer({ min: 0, max: 4 }), (steps, leastGarbage, mostShared) => {
    const column = new StringColumn(index, 'x', { leastGarbage, mostShared })
    const oracle: Array<string | null> = Array(DOCS).fill(null)
    for (const [doc, v, clear] of steps) {
      if (clear) { column.clear(doc); oracle[doc] = null } else { column.set(doc, v); oracle[doc] = v }
      for (let a = 0; a < DOCS; a++) {
        if (column.get(a) !== oracle[a]) throw new Error(`doc ${a} shows ${JSON.stringify(column.get(a))}, not ${JSON.stringify(oracle[a])}`)
        if (column.isNull(a) !== (oracle[a] === null)) throw new Error(`doc ${a}: isNull disagrees`)
        for (let b = 0; b < DOCS; b++) {
          if (sign(column.compare(a, b)) !== sign(order(oracle[a], oracle[b]))) throw new Error(`compare(${JSON.stringify(oracle[a])}, ${JSON.stringify(oracle[b])}) is ${column.compare(a, b)}`)
          if (column.same(a, b) !== (oracle[a] === oracle[b])) throw new Error(`same(${JSON.stringify(oracle[a])}, ${JSON.stringify(oracle[b])}) is ${String(column.same(a, b))}`)
        }
        for (const other of corpus) {
          if (sign(column.compareTo(a, other)) !== sign(order(oracle[a], other))) throw new Error(`compareTo(${JSON.stringify(oracle[a])}, ${JSON.stringify(other)}) is ${column.compareTo(a, other)}`)
        }
        for (const other of [...corpus, null, ...oracle]) {
          if (column.holds(a, other) !== (oracle[a] === other)) throw new Error(`doc ${a} holding ${JSON.stringify(oracle[a])}: holds(${JSON.stringify(other)}) is ${String(column.holds(a, other))}`)
        }
      }
    }
  }), { numRuns: 300 })
  t.pass('checked')
})

t.test('a document far beyond the others, and a value longer than the arena has room for', async t => {
  const column = new StringColumn(coreIndexes.find(i => i.kind === 'uuid')!, 'x')
  const long = 'ü'.repeat(100_000)
  column.set(5000, long)
  column.set(3, 'b')
  t.equal(column.get(5000), long)
  t.equal(column.get(4999), null)
  t.ok(column.compare(3, 5000) < 0)
  t.ok(column.holds(5000, long))
})
