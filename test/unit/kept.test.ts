import fc from 'fast-check'
import t from 'tap'
import { Kept } from '../../core/kept.js'

/**
 * What a process keeps stays within its budget, and the least recently
 * used goes first: Kept against a list that does the same the slow way.
 */
type Op = { kind: 'set', key: string, size: number } | { kind: 'get', key: string }

const ops = fc.array(fc.oneof(
  fc.record({ kind: fc.constant('set' as const), key: fc.constantFrom('a', 'b', 'c', 'd', 'e', '__proto__'), size: fc.integer({ min: 0, max: 12 }) }),
  fc.record({ kind: fc.constant('get' as const), key: fc.constantFrom('a', 'b', 'c', 'd', 'e', '__proto__') })
), { maxLength: 60 })

t.test('within the budget, the least recently used first', async t => {
  const budget = 10
  fc.assert(fc.property(ops, (steps: Op[]) => {
    const kept = new Kept<number>(budget, size => size)
    // The model: [key, size] from the least to the most recently used.
    let model: Array<[string, number]> = []
    for (const step of steps) {
      if (step.kind === 'get') {
        const found = kept.get(step.key)
        const i = model.findIndex(([key]) => key === step.key)
        if (found !== (i < 0 ? undefined : model[i][1])) return false
        if (i >= 0) model = [...model.slice(0, i), ...model.slice(i + 1), model[i]]
        continue
      }
      kept.set(step.key, step.size)
      if (step.size > budget) continue
      model = [...model.filter(([key]) => key !== step.key), [step.key, step.size]]
      while (model.reduce((sum, [, size]) => sum + size, 0) > budget) model.shift()
    }
    // Everything the model holds is kept, and nothing else.
    return ['a', 'b', 'c', 'd', 'e', '__proto__'].every(key => kept.get(key) === model.find(([k]) => k === key)?.[1])
  }), { numRuns: 500 })
  t.pass('Kept agreed with the model')
})

t.test('a value kept before a write, or past its time, is not found', async t => {
  const kept = new Kept<string>(10)
  kept.set('q', 'rows', 1000)
  t.equal(kept.get('q', 999), 'rows')
  kept.clear()
  t.equal(kept.get('q', 999), undefined, 'after a write')
  kept.set('q', 'rows', 1000)
  t.equal(kept.get('q', 1000), undefined, 'at the moment an object becomes effective or expires')
})
