// What a burst of requests cost the process that answered them: the longest time the event loop
// was held, and the heap it kept once they were answered (not a test file). The resource-bounds
// suites use it to find work that grows without bound with its input — one request holding every
// other for seconds, or a cache pinning what it was sent. The limits the suites set are an order
// of magnitude above what a bounded request costs on a loaded CI machine and an order below what
// the unbounded ones did (docs/api.md, Security): they tell the classes apart, they time nothing.
import { monitorEventLoopDelay } from 'node:perf_hooks'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'

/** The longest a request may hold the event loop before a suite calls its work unbounded. */
export const HELD_LOOP_LIMIT_MS = 500
/** The heap a burst of requests may leave behind, once collected, before a suite calls it retained. */
export const RETAINED_HEAP_LIMIT_BYTES = 64 * 1024 * 1024

// `gc` is not exposed to test files (tap starts them), so it is fetched once through V8's flags.
setFlagsFromString('--expose-gc')
const gc = runInNewContext('gc') as () => void

/** The heap in use after a full collection (twice: the first may only queue finalisers). */
export function collectedHeap (): number {
  gc()
  gc()
  return process.memoryUsage().heapUsed
}

export interface WorkCost {
  /** The longest single delay of the event loop while `work` ran (ms). */
  heldLoopMs: number
  /** Heap in use after `work` and a full collection, less the same before it (bytes; may be negative). */
  retainedHeapBytes: number
}

/**
 * Runs `work` (requests sent with `inject`, so that the service answers in this process) and
 * measures what it cost. The loop is sampled every 10 ms: a delay shorter than that is not seen,
 * which is far below any limit a suite sets.
 */
export async function costOf (work: () => Promise<unknown>): Promise<WorkCost> {
  const before = collectedHeap()
  const histogram = monitorEventLoopDelay({ resolution: 10 })
  histogram.enable()
  try {
    await work()
  } finally {
    histogram.disable()
  }
  return { heldLoopMs: histogram.max / 1e6, retainedHeapBytes: collectedHeap() - before }
}
