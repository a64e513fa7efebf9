// Types of bench/pauses.mjs for the TypeScript tests that use it.

export interface Pause { at: number, ms: number, gcMs: number }
export function watchPauses (onPause: (pause: Pause) => void, options?: { overMs?: number }): () => void
export function pausesWithin (records: Pause[], from: number, to: number): Pause[]
