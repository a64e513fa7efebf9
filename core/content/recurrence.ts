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
  // rrule reads a set's DTSTART from its text only (its `dtstart` option is ignored with `forceset`):
  // Plone stores the rule without one, the event's start being it.
  const anchored = start !== null && !/^DTSTART[:;]/im.test(value) ? `DTSTART:${start.toISOString().replace(/[-:]|\.\d{3}/g, '')}\n${value}` : value
  const set = rrule.rrulestr(anchored, { forceset: true }) as Recurrence
  const unread = set.rrules().find(rule => [rule.options.count, rule.options.interval].some(n => n !== null && !(Number.isInteger(n) && n > 0)))
  if (unread !== undefined) throw new Error(`'${unread.toString()}' has a COUNT or INTERVAL that is not a positive whole number`)
  return set
}

/**
 * The most occurrences of one event the catalogue holds (Plone's index holds
 * up to 100,000): a daily event for almost three years, a weekly one for
 * nineteen. A rule without COUNT or UNTIL repeats for ever; its occurrences
 * past these are not found by date (docs/types.md, "Event").
 */
export const MAX_INDEXED_OCCURRENCES = 1000

/**
 * The further occurrences of `date` under the recurrence `rule` anchored on
 * `anchor` (the event's start, its DTSTART): each occurrence of the rule
 * moved by `date − anchor` (an end keeps its event's length), the date
 * itself left out, in ascending order, at most MAX_INDEXED_OCCURRENCES − 1.
 * Null when there are none: no rule, no dates, a rule that does not read
 * (validation refuses it on a write; an imported one is indexed as a single
 * date), or one that repeats nothing.
 */
export function furtherOccurrences (rule: unknown, anchor: unknown, date: unknown): string[] | null {
  if (typeof rule !== 'string' || rule.trim() === '') return null
  const start = instant(anchor)
  const own = instant(date)
  if (start === null || own === null) return null
  let recurrence: Recurrence
  try {
    recurrence = readRecurrence(rule, start)
  } catch {
    return null
  }
  const shift = own.getTime() - start.getTime()
  const further: number[] = []
  // The iterator stops the expansion itself: an endless rule is never expanded beyond the bound.
  recurrence.all((occurrence, i) => {
    if (i >= MAX_INDEXED_OCCURRENCES) return false
    const time = occurrence.getTime() + shift
    if (time !== own.getTime()) further.push(time)
    return true
  })
  if (further.length === 0) return null
  return [...new Set(further)].sort((a, b) => a - b).slice(0, MAX_INDEXED_OCCURRENCES - 1).map(time => new Date(time).toISOString())
}

function instant (value: unknown): Date | null {
  if (typeof value !== 'string' && !(value instanceof Date)) return null
  const date = new Date(value)
  return Number.isNaN(date.getTime()) ? null : date
}
