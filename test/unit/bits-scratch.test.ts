import fc from 'fast-check'
import t from 'tap'
import { Bits } from '../../core/catalog/resident/bits.js'

/**
 * The temporary sets of a query's evaluation (Bits.temporary, temporaryClone
 * inside Bits.scoped) reuse the buffers of earlier evaluations: each must
 * start empty whatever its buffer held, none may share a buffer with another
 * set alive in the same scope, and a set made outside any scope is a set of
 * its own. The oracle: the same operations on plain arrays of numbers.
 */
const capacity = fc.integer({ min: 0, max: 300 })
const docsUnder = (limit: number): fc.Arbitrary<number[]> => fc.uniqueArray(fc.integer({ min: 0, max: Math.max(0, limit - 1) }), { maxLength: 40 })

t.test('temporary sets start empty and never share a buffer within a scope', async t => {
  fc.assert(fc.property(fc.array(fc.tuple(capacity, fc.array(fc.integer({ min: 0, max: 299 }), { maxLength: 40 })), { minLength: 1, maxLength: 12 }), fc.integer({ min: 1, max: 4 }), (sets, rounds) => {
    for (let round = 0; round < rounds; round++) {
      Bits.scoped(() => {
        const made = sets.map(([size, docs]) => {
          const bits = Bits.temporary(size)
          if (!bits.empty) throw new Error(`a temporary set of ${size} came with documents`)
          for (const doc of docs) bits.add(doc)
          return { bits, docs: new Set(docs) }
        })
        // Every set still holds exactly its own documents: none wrote into another's buffer.
        for (const { bits, docs } of made) {
          const held = bits.toArray()
          if (held.length !== docs.size || held.some(doc => !docs.has(doc))) throw new Error(`a set holds ${held.join(',')}, not ${[...docs].join(',')}`)
        }
      })
    }
  }))
  t.pass('checked')
})

t.test('a temporary clone holds what its original holds, and changing one leaves the other alone', async t => {
  fc.assert(fc.property(capacity.chain(size => fc.tuple(fc.constant(size), docsUnder(size), docsUnder(size))), ([size, docs, more]) => {
    const original = Bits.of(docs)
    Bits.scoped(() => {
      // A buffer given back dirty by an earlier scope.
      Bits.temporary(size).words.fill(0xffffffff)
    })
    Bits.scoped(() => {
      const copy = original.temporaryClone()
      if (copy.toArray().join() !== [...docs].sort((a, b) => a - b).join()) throw new Error('the clone differs from its original')
      for (const doc of more) copy.add(doc)
      if (original.toArray().join() !== [...docs].sort((a, b) => a - b).join()) throw new Error('changing the clone changed the original')
    })
  }))
  t.pass('checked')
})

t.test('outside a scope a temporary set is a set of its own, kept after any scope', async t => {
  const kept = Bits.temporary(64)
  kept.add(5)
  Bits.scoped(() => {
    for (let i = 0; i < 40; i++) Bits.temporary(64).words.fill(0xffffffff)
  })
  Bits.scoped(() => { Bits.temporary(64).add(63) })
  t.same(kept.toArray(), [5])
})

t.test('a scope that throws gives its buffers back, and the next scope starts clean', async t => {
  t.throws(() => Bits.scoped(() => {
    Bits.temporary(64).words.fill(0xffffffff)
    throw new Error('fails midway')
  }), /fails midway/)
  t.ok(Bits.scoped(() => Bits.temporary(64).empty))
})
