import fc from 'fast-check'
import t from 'tap'
import { RecencyMap } from '../../core/recency.js'

/**
 * RecencyMap holds what a Map holds, in the order of use: against a list of
 * [key, value] from the least to the most recently used, kept the slow way.
 */
type Op =
  | { kind: 'set', key: string, value: number }
  | { kind: 'use' | 'peek' | 'delete', key: string }
  | { kind: 'clear' }
  | { kind: 'evict', count: number }
  | { kind: 'sweep' }

const keys = ['a', 'b', 'c', 'd', 'e', 'f', 'g', '__proto__', 'constructor', '\u0000', '\ud800']
const ops = fc.array(fc.oneof(
  { arbitrary: fc.record({ kind: fc.constant('set' as const), key: fc.constantFrom(...keys), value: fc.integer() }), weight: 4 },
  { arbitrary: fc.record({ kind: fc.constantFrom('use' as const, 'peek' as const, 'delete' as const), key: fc.constantFrom(...keys) }), weight: 5 },
  { arbitrary: fc.record({ kind: fc.constant('evict' as const), count: fc.integer({ min: 0, max: 4 }) }), weight: 1 },
  { arbitrary: fc.record({ kind: fc.constant('clear' as const) }), weight: 1 },
  { arbitrary: fc.record({ kind: fc.constant('sweep' as const) }), weight: 1 }
), { maxLength: 200 })

t.test('the values of a Map, in the order of use', async t => {
  fc.assert(fc.property(ops, (steps: Op[]) => {
    const map = new RecencyMap<string, number>()
    let model: Array<[string, number]> = []
    const at = (key: string): number => model.findIndex(([k]) => k === key)
    const toNewest = (key: string, value: number): void => { model = [...model.filter(([k]) => k !== key), [key, value]] }
    for (const step of steps) {
      if (step.kind === 'clear') {
        map.clear()
        model = []
      } else if (step.kind === 'evict') {
        // As a cache evicts: the oldest first, one after the other, each answering its value.
        for (let left = step.count; left > 0; left--) {
          if (map.removeOldest() !== model.shift()?.[1]) return false
        }
      } else if (step.kind === 'sweep') {
        // As a write clears what it made stale: every entry visited in order, the even values deleted as they are visited.
        const visited: string[] = []
        map.forEach((value, key) => {
          visited.push(key)
          if (value % 2 === 0) map.delete(key)
        })
        if (JSON.stringify(visited) !== JSON.stringify(model.map(([key]) => key))) return false
        model = model.filter(([, value]) => value % 2 !== 0)
      } else if (step.kind === 'delete') {
        const i = at(step.key)
        if (map.delete(step.key) !== (i >= 0)) return false
        if (i >= 0) model.splice(i, 1)
      } else if (step.kind === 'set') {
        map.set(step.key, step.value)
        toNewest(step.key, step.value)
      } else {
        const i = at(step.key)
        if ((step.kind === 'use' ? map.use(step.key) : map.peek(step.key)) !== (i < 0 ? undefined : model[i][1])) return false
        if (i >= 0 && step.kind === 'use') toNewest(step.key, model[i][1])
      }
      const entries: Array<[string, number]> = []
      map.forEach((value, key) => { entries.push([key, value]) })
      if (map.size !== model.length || JSON.stringify(entries) !== JSON.stringify(model)) return false
      if (map.oldestKey() !== model[0]?.[0]) return false
    }
    return true
  }), { numRuns: 1000 })
  t.pass('RecencyMap agreed with the list')
})
