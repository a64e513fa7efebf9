/**
 * When a process's event loop stood still, and how much of it was the
 * collector: the varied traffic's slowest second is charged to every request
 * that arrived in it, whether the service, the other service process or the
 * load generator itself was held. Each of them watches itself: a timer that
 * should fire every 10 ms and is late by more than `overMs` marks a pause (the
 * loop ran something else, or the process had no core), and V8's own record of
 * each collection (`PerformanceObserver`, type 'gc') says how much of that
 * time it collected. Times are wall-clock milliseconds (epoch), so that the
 * three processes' records line up with the crowd's seconds.
 *
 * Loaded into the service by the bench as `node --import …/pauses.mjs`, which
 * appends each pause to the file `BENCH_PAUSES_FILE` names as a line of JSON;
 * the load generator calls `watchPauses` itself.
 */
import { appendFileSync } from 'node:fs'
import { PerformanceObserver, performance } from 'node:perf_hooks'

const TICK_MS = 10
/** Collections kept to attribute a pause: those of the last few seconds are enough. */
const KEPT_COLLECTIONS = 256
/** How long after a pause its collections are surely reported. */
const SETTLE_MS = 100

/** Starts watching; `onPause({ at, ms, gcMs })` is called for each pause over `overMs` (at: its start, epoch ms). */
export function watchPauses (onPause, { overMs = 50 } = {}) {
  const collections = []
  const observer = new PerformanceObserver(list => {
    for (const entry of list.getEntries()) {
      collections.push({ from: performance.timeOrigin + entry.startTime, ms: entry.duration })
      if (collections.length > KEPT_COLLECTIONS) collections.shift()
    }
  })
  observer.observe({ type: 'gc' })
  // V8 reports a collection after it ended, perhaps after the tick that saw the pause: a pause is
  // told once the next ticks had time to receive its collections.
  const pending = []
  const gcWithin = (from, to) => collections.filter(c => c.from < to && c.from + c.ms > from)
    .reduce((sum, c) => sum + Math.min(c.from + c.ms, to) - Math.max(c.from, from), 0)
  let last = performance.timeOrigin + performance.now()
  const timer = setInterval(() => {
    const now = performance.timeOrigin + performance.now()
    while (pending.length > 0 && now - (pending[0].at + pending[0].ms) > SETTLE_MS) {
      const { at, ms } = pending.shift()
      onPause({ at, ms, gcMs: gcWithin(at, at + ms) })
    }
    const late = now - last - TICK_MS
    if (late > overMs) pending.push({ at: last + TICK_MS, ms: late })
    last = now
  }, TICK_MS)
  timer.unref()
  return () => { clearInterval(timer); observer.disconnect() }
}

/** The pauses of `records` (from one process) whose start falls in [from, to). */
export const pausesWithin = (records, from, to) => records.filter(pause => pause.at >= from && pause.at < to)

const file = process.env.BENCH_PAUSES_FILE
if (file !== undefined && file !== '') watchPauses(pause => appendFileSync(file, JSON.stringify(pause) + '\n'))
