import t from 'tap'
import { heapBytes } from '../../core/heap-size.js'
import { collectedHeap } from '../security/work-watch.js'

/**
 * The estimate that caches are budgeted in is never below what the values
 * really hold: the oracle is V8's own count of the heap in use, before and
 * after a thousand distinct copies of each kind of value a cache keeps
 * (catalogue rows, facet counts with many keys, object rows with their
 * lineage, long texts in one and two bytes a character) are made and held.
 */
const COPIES = 1000

const shapes: Record<string, (n: number) => unknown> = {
  'a catalogue row': n => ({ UID: `uid-${n}-${'0'.repeat(30)}`, Title: `Talk ${n}`, Description: `d${n}`.repeat(500), review_state: 'published', portal_type: 'talk', Subject: [`tag${n}`, `other${n}`], start: new Date(n), getObjPositionInParent: n }),
  'facet counts over many tags (an object in dictionary mode)': n => ({ total: n, facets: { Subject: Object.fromEntries(Array.from({ length: 300 }, (_, i) => [`t${i}-${n}`, i])) } }),
  'a content row with its lineage': n => [0, 1, 2].map(level => ({
    uid: `${n}-${level}`,
    parent_uid: null,
    id: `id${n}`,
    path: `/talks/id${n}`,
    portal_type: 'talk',
    review_state: 'private',
    owner: 'admin',
    creators: ['admin'],
    local_roles: { admin: ['Owner'] },
    position: n,
    created: new Date(n),
    modified: new Date(n),
    data: JSON.parse(JSON.stringify({ title: `T${n}`, details: { data: `<p>${'x'.repeat(2000)}${n}</p>`, 'content-type': 'text/html', encoding: 'utf-8' }, audience: ['Beginner'] }))
  })),
  'numbers in a list': n => Array.from({ length: 500 }, (_, i) => i * 1.5 + n),
  'a long text': n => `${n}:${'x'.repeat(20_000)}`,
  'a long text in two bytes a character': n => `${n}:${'€'.repeat(20_000)}`
}

for (const [name, make] of Object.entries(shapes)) {
  t.test(name, async t => {
    const before = collectedHeap()
    // Cloned, so that each copy holds its own flat strings, as values read from a database or parsed from JSON do (`repeat` and templates share parts).
    const held = Array.from({ length: COPIES }, (_, n) => structuredClone(make(n)))
    const real = collectedHeap() - before
    const estimated = held.reduce((sum: number, value) => sum + heapBytes(value), 0)
    t.ok(real <= estimated, `${COPIES} copies hold ${real} bytes; estimated ${estimated}`)
    t.ok(held.length === COPIES)
  })
}
