import { performance } from 'node:perf_hooks'
import { setImmediate as nextTurn } from 'node:timers/promises'

/**
 * The longest stretch (ms) a loop over one request's input runs before it
 * lets the event loop serve the others. Work on untrusted input that grows
 * with the input (reading a large JSON body, checking the items of an
 * import, walking an image's structure) is cut into slices this long: the
 * request takes as long as before, the others wait at most a slice for it
 * (docs/api.md, "Bounded work per request").
 */
export const SLICE_MS = 2

/**
 * Paces one loop: `due()` says whether it has run a slice since it last
 * yielded, `yield()` lets every other callback of the event loop (I/O, timers,
 * other requests) run before it goes on. A loop whose steps are cheap asks
 * `due()` (a clock read) every few steps; `pace()` does both.
 */
export class Pacer {
  private since = performance.now()

  due (): boolean {
    return performance.now() - this.since >= SLICE_MS
  }

  async yield (): Promise<void> {
    await nextTurn()
    this.since = performance.now()
  }

  /** Yields when a slice has run. */
  async pace (): Promise<void> {
    if (this.due()) await this.yield()
  }
}

/**
 * What one statement of a bulk write sends at most (characters of its
 * parameters): the database driver serialises a statement's parameters in
 * one go, about 10 ms for 16 MB, so a bulk import writes its rows in runs of
 * this size with other requests served between them.
 */
export const STATEMENT_CHARS = 1024 * 1024

/** `items` in consecutive runs of at most `budget` by `size`, in their order (an item larger than the budget is a run of its own). */
export function runsOf<T> (items: readonly T[], size: (item: T) => number, budget = STATEMENT_CHARS): T[][] {
  const runs: T[][] = []
  let used = budget
  for (const item of items) {
    const cost = size(item)
    if (used + cost > budget) {
      runs.push([])
      used = 0
    }
    runs.at(-1)!.push(item)
    used += cost
  }
  return runs
}
