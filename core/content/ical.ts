import type { Located } from './rows.js'
import { urlOf } from './urls.js'

/**
 * An event as iCalendar (RFC 5545), as plone.app.event's `ics_view` writes
 * it, for calendar clients (Volto's event view links to it): one VEVENT with
 * its times, its recurrence lines, where and whom to ask.
 */

/** TEXT as RFC 5545 escapes it (3.3.11). */
const text = (value: string): string => value.replace(/\\/g, '\\\\').replace(/;/g, '\\;').replace(/,/g, '\\,').replace(/\r\n|\r|\n/g, '\\n')

/** A content line folded at 75 octets (3.1), a continuation starting with a space; never within a character's UTF-8 bytes. */
function fold (line: string): string {
  const parts: string[] = []
  let current = ''
  let octets = 0
  for (const character of line) {
    const size = Buffer.byteLength(character)
    if (octets + size > (parts.length === 0 ? 75 : 74)) {
      parts.push(current)
      current = ''
      octets = 0
    }
    current += character
    octets += size
  }
  parts.push(current)
  return parts.join('\r\n ')
}

/** A UTC date-time (`20261012T090000Z`) or, for a whole day, a date (`20261012`). */
const stamp = (date: Date): string => date.toISOString().replace(/[-:]/g, '').replace(/\.\d{3}/, '')
const day = (date: Date): string => date.toISOString().slice(0, 10).replace(/-/g, '')

/** The recurrence lines Plone stores (`RRULE:…`, `RDATE:…`, `EXDATE:…`), as they are; a bare rule gets its `RRULE:`; any other line (a DTSTART of its own) is the event's business, not written. */
function recurrenceLines (recurrence: unknown): string[] {
  if (typeof recurrence !== 'string') return []
  return recurrence.split(/\r\n|\r|\n/).map(line => line.trim())
    .flatMap(line => /^(RRULE|RDATE|EXDATE|EXRULE)[:;]/i.test(line) ? [line] : /^FREQ=/i.test(line) ? [`RRULE:${line}`] : [])
}

/** The iCalendar text of an object with a start (an Event, a talk); null for one without. */
export function icalendar (baseUrl: string, { obj }: Located): string | null {
  const data = obj.data
  if (typeof data.start !== 'string') return null
  const start = new Date(data.start)
  const end = typeof data.end === 'string' && data.open_end !== true ? new Date(data.end) : null
  const wholeDay = data.whole_day === true
  const lines = [
    'BEGIN:VCALENDAR', 'VERSION:2.0', 'PRODID:-//Plone REST content service//NONSGML events//EN', `X-WR-CALNAME:${text(String(data.title ?? ''))}`,
    'BEGIN:VEVENT',
    `UID:${obj.uid}`,
    `SUMMARY:${text(String(data.title ?? ''))}`,
    ...typeof data.description === 'string' && data.description !== '' ? [`DESCRIPTION:${text(data.description)}`] : [],
    wholeDay ? `DTSTART;VALUE=DATE:${day(start)}` : `DTSTART:${stamp(start)}`,
    // A whole day's end is the day after its last (DTEND is exclusive).
    ...end === null ? [] : [wholeDay ? `DTEND;VALUE=DATE:${day(new Date(end.getTime() + 86_400_000))}` : `DTEND:${stamp(end)}`],
    ...recurrenceLines(data.recurrence),
    ...typeof data.location === 'string' && data.location !== '' ? [`LOCATION:${text(data.location)}`] : [],
    ...typeof data.contact_name === 'string' ? [`CONTACT:${text([data.contact_name, data.contact_email, data.contact_phone].filter(v => typeof v === 'string' && v !== '').join(', '))}`] : [],
    // A parameter value is quoted (3.2) and may hold no quote (an attendee is one line: no break reaches here).
    ...Array.isArray(data.attendees) ? data.attendees.map(a => `ATTENDEE;CN="${String(a).replace(/"/g, '')}":invalid:nomail`) : [],
    `URL:${typeof data.event_url === 'string' ? data.event_url : urlOf(baseUrl, obj.path)}`,
    `CREATED:${stamp(obj.created)}`, `LAST-MODIFIED:${stamp(obj.modified)}`, `DTSTAMP:${stamp(obj.modified)}`,
    'END:VEVENT', 'END:VCALENDAR'
  ]
  return lines.map(fold).join('\r\n') + '\r\n'
}
