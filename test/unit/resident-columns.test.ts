import fc from 'fast-check'
import t from 'tap'
import { coreIndexes, type IndexDefinition } from '../../core/catalog/indexes.js'
import { columnOf } from '../../core/catalog/resident/columns.js'

/**
 * A column `holds` a value exactly when storing it would change nothing the
 * column shows (its value, and for keyword columns the documents of each
 * value): the resident catalogue moves a changed document only in the orders
 * whose columns do not hold their new values. The oracle stores the value in
 * a second column and compares what both show.
 */
const kinds = ['date', 'int', 'boolean', 'keyword', 'uuid', 'field'] as const
const sample = (kind: string): IndexDefinition => {
  const index = coreIndexes.find(i => i.kind === kind)
  if (index === undefined) throw new Error(`no core index of kind ${kind}`)
  return index
}
const valuesOf: Record<typeof kinds[number], fc.Arbitrary<unknown>> = {
  date: fc.oneof(fc.constantFrom(null, undefined, 0, -0, '0', 1.5e15), fc.integer({ min: -3, max: 3 })),
  int: fc.oneof(fc.constantFrom(null, undefined, '2', 2, NaN), fc.integer({ min: -3, max: 3 })),
  boolean: fc.constantFrom(null, undefined, true, false),
  keyword: fc.oneof(fc.constant(null), fc.array(fc.constantFrom('a', 'b', 'Anonymous', '__proto__', 'a\u0000', '\ud800'), { maxLength: 4 })),
  uuid: fc.constantFrom(null, undefined, '00000000-0000-0000-0000-000000000001', '00000000-0000-0000-0000-000000000002'),
  field: fc.constantFrom(null, undefined, '', 'a', 'b', '\ud83d\ude00', '\ud800', 'a\u0000')
}

for (const kind of kinds) {
  t.test(`${kind}: holds(doc, v) exactly when set(doc, v) changes nothing`, async t => {
    const index = sample(kind)
    fc.assert(fc.property(fc.array(fc.tuple(fc.nat({ max: 3 }), valuesOf[kind]), { maxLength: 30 }), valuesOf[kind], fc.nat({ max: 3 }), (writes, next, doc) => {
      const column = columnOf(index)!
      for (const [d, v] of writes) column.set(d, v)
      const holds = column.holds(doc, next)
      const shown = (): string => JSON.stringify([column.get(doc), ...['a', 'b', 'Anonymous', '__proto__', 'a\u0000', '\ud800'].map(v => column.docsWith?.(v) ?? [])])
      const before = shown()
      column.set(doc, next)
      return holds === (shown() === before)
    }), { numRuns: 2000 })
    t.pass('holds agreed with storing the value')
  })
}
