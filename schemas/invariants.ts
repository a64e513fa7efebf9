import type { Invariant } from '../core/content/declaration.js'
import { readRecurrence } from '../core/content/recurrence.js'

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

/**
 * A recurrence must be RFC 5545 that rrule reads,
 * from the event's start: what a calendar client would refuse is refused
 * when it is written.
 */
export function recurrenceReads (field: string, start: string): Invariant {
  return data => {
    const value = data[field]
    if (typeof value !== 'string' || value.trim() === '') return []
    const dtstart = time(data[start])
    try {
      readRecurrence(value, dtstart !== null ? new Date(dtstart) : null)
      return []
    } catch (err) {
      return [{ field, message: `Not a recurrence rule: ${err instanceof Error ? err.message : String(err)}.`, error: 'ValidationError' }]
    }
  }
}
