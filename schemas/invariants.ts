import type { Invariant } from '../core/content/declaration.js'

const time = (value: unknown): number | null =>
  typeof value === 'string' && value !== '' ? Date.parse(value) : null

/** `later` must not be before `earlier` when both are set. */
export function endNotBeforeStart (earlier: string, later: string, message: string): Invariant {
  return data => {
    const a = time(data[earlier])
    const b = time(data[later])
    return a !== null && b !== null && b < a ? [{ field: later, message, error: 'ValidationError' }] : []
  }
}
