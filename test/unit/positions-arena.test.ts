import t from 'tap'
import fc from 'fast-check'
import { PositionsArena } from '../../core/catalog/resident/positions-arena.js'

/**
 * The text index's arena of runs (core/catalog/resident/positions-arena.ts),
 * driven as the text index drives it — a document's run replaced (its old run
 * released, a new one allocated, then the segment the release left mostly
 * garbage compacted) or removed — against a model that is a map of each
 * document's entries: every run reads back whole after every step, whatever
 * was moved, and what the segments hold stays within a bound of what is live.
 */
const SEGMENT = 256
const HEADER = 2

type Step = { doc: number, size: number | null }
const step = fc.record({
  doc: fc.integer({ min: 0, max: 40 }),
  // Mostly runs of up to a third of a segment; some empty; some larger than a segment (a segment of their own); null: removed.
  size: fc.oneof({ weight: 12, arbitrary: fc.integer({ min: 0, max: 85 }) }, { weight: 1, arbitrary: fc.integer({ min: SEGMENT - 1, max: 3 * SEGMENT }) }, { weight: 3, arbitrary: fc.constant(null) })
})

function run (steps: Step[]): PositionsArena {
  const arena = new PositionsArena(SEGMENT)
  const model = new Map<number, Int32Array>()
  const where = new Map<number, { segment: number, offset: number }>()
  let stamp = 0
  const release = (doc: number): number => {
    const at = where.get(doc)
    const entries = model.get(doc)
    if (at === undefined || entries === undefined) return -1
    where.delete(doc)
    model.delete(doc)
    return arena.release(at.segment, entries.length) ? at.segment : -1
  }
  const compact = (from: number): void => {
    if (from < 0) return
    arena.compact(from,
      (doc, offset) => where.get(doc)?.segment === from && where.get(doc)?.offset === offset,
      doc => { where.set(doc, { segment: arena.segment, offset: arena.offset }) })
  }
  for (const { doc, size } of steps) {
    const pending = release(doc)
    if (size !== null) {
      const entries = Int32Array.from({ length: size }, () => ++stamp)
      arena.allocate(doc, size)
      arena.segments[arena.segment].set(entries, arena.offset)
      where.set(doc, { segment: arena.segment, offset: arena.offset })
      model.set(doc, entries)
    }
    compact(pending)
    for (const [held, entries] of model) {
      const at = where.get(held)
      if (at === undefined) throw new Error(`document ${held} has no place`)
      const read = arena.segments[at.segment].subarray(at.offset, at.offset + entries.length)
      if (read.length !== entries.length || read.some((value, i) => value !== entries[i])) throw new Error(`document ${held}'s run changed`)
    }
    let live = 0
    let oversize = 0
    for (const entries of model.values()) {
      live += entries.length + HEADER
      if (entries.length + HEADER > SEGMENT) oversize += entries.length + HEADER
    }
    // Each segment of ordinary runs is more than half live, and at least 3/5 filled (a run is at most a third of one): at most 2 / (1/2 · 3/5) of the live, plus the last segment and the runs of their own.
    const bound = Math.ceil((live - oversize) * 2 / 0.6) + 2 * SEGMENT + oversize
    if (arena.byteLength / 4 > bound) throw new Error(`${arena.byteLength / 4} entries held for ${live} live (bound ${bound})`)
  }
  return arena
}

t.test('runs read back whole and the segments stay bounded, whatever the order of changes', async t => {
  fc.assert(fc.property(fc.array(step, { minLength: 1, maxLength: 400 }), steps => { run(steps) }), { numRuns: 300 })
  t.pass('300 sequences of up to 400 changes')
})

t.test('a catalogue rewritten many times over keeps few segments, their numbers used again', async t => {
  // 40 documents rewritten 5 000 times: some 250 000 entries written, a thousand segments' worth without compaction.
  const arena = run(Array.from({ length: 5000 }, (_, i) => ({ doc: i % 40, size: 20 + (i * 7) % 60 })))
  t.ok(arena.segments.length <= 16, `${arena.segments.length} segment numbers ever used`)
  t.ok(arena.byteLength / 4 <= 16 * SEGMENT, `${arena.byteLength / 4} entries held`)
})

t.test('segments that keep a few live runs among their garbage are compacted', async t => {
  // 400 documents, six to a segment, then every one but each third rewritten three times: each old segment keeps two live runs, never all garbage, so only compaction frees it.
  const first = Array.from({ length: 400 }, (_, doc) => ({ doc, size: 40 }))
  const rewrites = Array.from({ length: 3 }, () => first.filter(({ doc }) => doc % 3 !== 0)).flat()
  const arena = run([...first, ...rewrites])
  t.ok(arena.byteLength / 4 <= 1.5 * 400 * 42, `${arena.byteLength / 4} entries held for ${400 * 42} live`)
})
