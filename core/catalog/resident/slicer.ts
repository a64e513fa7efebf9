/**
 * How long work lets other work run: `due` says whether the current slice
 * has run long enough, `pause` lets the event loop turn (answering other
 * requests, applying other changes) and starts the next slice.
 */
export interface Slicer {
  due: () => boolean
  pause: () => Promise<void>
}

/** Slices of about `ms` milliseconds, each ended by a turn of the event loop (setImmediate: I/O callbacks run first). */
export function timeSlicer (ms: number): Slicer {
  let deadline = performance.now() + ms
  return {
    due: () => performance.now() >= deadline,
    pause: async () => {
      await new Promise<void>(resolve => setImmediate(resolve))
      deadline = performance.now() + ms
    }
  }
}
