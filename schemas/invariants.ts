import rrule from 'rrule'
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

/**
 * A recurrence must be RFC 5545 that rrule (a well-kept parser of it) reads,
 * from the event's start: what a calendar client would refuse is refused
 * when it is written.
 */
export function recurrenceReads (field: string, start: string): Invariant {
  return data => {
    const value = data[field]
    if (typeof value !== 'string' || value.trim() === '') return []
    const dtstart = time(data[start])
    try {
      const set = rrule.rrulestr(value, { forceset: true, ...(dtstart !== null ? { dtstart: new Date(dtstart) } : {}) }) as InstanceType<typeof rrule.RRuleSet>
      // rrule reads a number it cannot read as NaN (`COUNT=x`): a rule must say how often and how many in numbers.
      const unread = set.rrules().find(rule => [rule.options.count, rule.options.interval].some(n => n !== null && !(Number.isInteger(n) && n > 0)))
      if (unread !== undefined) throw new Error(`'${unread.toString()}' has a COUNT or INTERVAL that is not a positive whole number`)
      return []
    } catch (err) {
      return [{ field, message: `Not a recurrence rule: ${err instanceof Error ? err.message : String(err)}.`, error: 'ValidationError' }]
    }
  }
}
