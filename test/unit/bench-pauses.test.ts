import { performance } from 'node:perf_hooks'
import { setTimeout as sleep } from 'node:timers/promises'
import t from 'tap'
import { pausesWithin, watchPauses, type Pause } from '../../bench/pauses.mjs'

// The bench charts the varied traffic's slowest second to the process whose
// event loop stood still then (bench/pauses.mjs). Here the loop is held on
// purpose, for a known stretch of wall-clock time: the watcher must report one
// pause covering that stretch, however busy the machine (a busy machine can
// only make the pause longer, or add others).
const HELD_MS = 300

t.test('a held event loop is reported as one pause covering the time it was held', async t => {
  const seen: Pause[] = []
  const unwatch = watchPauses(pause => seen.push(pause))
  t.teardown(unwatch)
  await sleep(50)
  const heldFrom = performance.timeOrigin + performance.now()
  while (performance.timeOrigin + performance.now() - heldFrom < HELD_MS) { /* holding the loop */ }
  const heldTo = performance.timeOrigin + performance.now()
  // The watcher tells a pause once its collections had time to be reported (100 ms).
  await sleep(250)
  const covering = seen.filter(pause => pause.at <= heldFrom + 15 && pause.at + pause.ms >= heldTo - 15)
  t.equal(covering.length, 1, `one pause covers the ${HELD_MS} ms held (seen: ${JSON.stringify(seen)})`)
  t.ok(covering[0].gcMs >= 0 && covering[0].gcMs <= covering[0].ms, 'the collector\'s share is within the pause')
})

t.test('pausesWithin keeps the pauses that start inside the window', async t => {
  const pause = (at: number): Pause => ({ at, ms: 60, gcMs: 0 })
  t.same(pausesWithin([pause(999), pause(1000), pause(1500), pause(2000)], 1000, 2000).map(p => p.at), [1000, 1500])
})
