import rrule from 'rrule'

/**
 * An event's recurrence (RFC 5545 RRULE/RDATE/EXDATE lines) read by rrule, a
 * well-kept parser of it: the rule grammar is not hand-written code here.
 */
export type Recurrence = InstanceType<typeof rrule.RRuleSet>

/**
 * The recurrence `value` read from `start`; throws with rrule's reason when it
 * is not one a calendar client would read. rrule reads a number it cannot
 * read as NaN (`COUNT=x`): a rule must say how often and how many in whole
 * positive numbers.
 */
export function readRecurrence (value: string, start: Date | null): Recurrence {
  const set = rrule.rrulestr(value, { forceset: true, ...(start !== null ? { dtstart: start } : {}) }) as Recurrence
  const unread = set.rrules().find(rule => [rule.options.count, rule.options.interval].some(n => n !== null && !(Number.isInteger(n) && n > 0)))
  if (unread !== undefined) throw new Error(`'${unread.toString()}' has a COUNT or INTERVAL that is not a positive whole number`)
  return set
}
