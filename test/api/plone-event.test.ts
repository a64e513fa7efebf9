import rrule from 'rrule'
import t from 'tap'
import { build, talkBody } from '../helper.js'

/**
 * Plone's Event (content-types/event, plone.app.event's behaviors) and its
 * iCalendar (`ics_view`), read back here as a calendar client reads RFC 5545:
 * lines unfolded, text unescaped, the recurrence expanded by rrule.
 */
function readCalendar (ics: string): Array<[string, string]> {
  if (!ics.endsWith('\r\n') || /[^\r]\n/.test(ics)) throw new Error('lines must end with CRLF')
  const lines = ics.slice(0, -2).split('\r\n')
  if (lines.some(line => Buffer.byteLength(line) > 75)) throw new Error('a line longer than 75 octets')
  const unfolded: string[] = []
  for (const line of lines) {
    if (line.startsWith(' ')) unfolded[unfolded.length - 1] += line.slice(1)
    else unfolded.push(line)
  }
  return unfolded.map(line => {
    const colon = line.indexOf(':')
    return [line.slice(0, colon), line.slice(colon + 1).replace(/\\n/g, '\n').replace(/\\([,;\\])/g, '$1')]
  })
}

t.test('Event', async t => {
  const { call, inject, tokenFor } = await build(t)
  const admin = await tokenFor('admin')
  const event = {
    '@type': 'Event',
    id: 'sprint',
    title: 'Sprint; Plone, Fastify — and a very long title that folds across more than seventy-five octets ✓',
    description: 'Two lines:\nhack, eat',
    start: '2026-10-12T09:00:00Z',
    end: '2026-10-12T17:00:00Z',
    recurrence: 'RRULE:FREQ=WEEKLY;COUNT=3',
    location: 'Room 101, Bonn',
    attendees: ['Ada', 'Grace "the admiral"'],
    contact_name: 'Jane',
    contact_email: 'jane@example.org',
    event_url: 'https://sprint.example.org/'
  }

  t.test('required start and end, a recurrence rrule reads', async t => {
    const missing = await call('POST', '/', { '@type': 'Event', title: 'When?' }, admin)
    t.equal(missing.statusCode, 400)
    t.same(missing.json().errors.map((e: { field: string }) => e.field).sort(), ['end', 'start'])
    t.equal((await call('POST', '/', { '@type': 'Event', title: 'Open', start: '2026-10-12T09:00:00Z', open_end: true }, admin)).statusCode, 201, 'an open end needs no end')
    for (const recurrence of ['RRULE:FREQ=BOGUS', 'hello world', 'RRULE:FREQ=DAILY;COUNT=x']) {
      const bad = await call('POST', '/', { ...event, id: undefined, recurrence }, admin)
      t.equal(bad.statusCode, 400, recurrence)
      t.match(bad.json().errors, [{ field: 'recurrence', message: /Not a recurrence rule/ }], recurrence)
    }
    const created = await call('POST', '/', event, admin)
    t.equal(created.statusCode, 201, created.body)
    t.match(created.json(), { '@type': 'Event', layout: 'event_view', is_folderish: true, location: 'Room 101, Bonn', recurrence: 'RRULE:FREQ=WEEKLY;COUNT=3', whole_day: null, open_end: null, blocks: {} })
    t.equal((await call('POST', '/sprint/@workflow/publish', {}, admin)).statusCode, 200)
  })

  t.test('ics_view: what a calendar client reads back is the event', async t => {
    const res = await inject({ method: 'GET', url: '/sprint/ics_view' })
    t.equal(res.statusCode, 200)
    t.match(res.headers['content-type'], /^text\/calendar/)
    t.match(res.headers['content-disposition'], /attachment; filename="sprint.ics"/)
    const lines = readCalendar(res.body)
    const value = (name: string): string | undefined => lines.find(([key]) => key === name)?.[1]
    t.same(lines.filter(([key]) => key === 'BEGIN').map(([, v]) => v), ['VCALENDAR', 'VEVENT'])
    t.equal(value('SUMMARY'), event.title)
    t.equal(value('DESCRIPTION'), event.description)
    t.equal(value('DTSTART'), '20261012T090000Z')
    t.equal(value('DTEND'), '20261012T170000Z')
    t.equal(value('LOCATION'), event.location)
    t.equal(value('URL'), event.event_url)
    t.same(lines.filter(([key]) => key.startsWith('ATTENDEE')).map(([key]) => key), ['ATTENDEE;CN="Ada"', 'ATTENDEE;CN="Grace the admiral"'])
    const rule = rrule.rrulestr(`DTSTART:${value('DTSTART')!}\nRRULE:${value('RRULE')!}`)
    t.same(rule.all().map(d => d.toISOString()), ['2026-10-12T09:00:00.000Z', '2026-10-19T09:00:00.000Z', '2026-10-26T09:00:00.000Z'], 'three weekly occurrences')
    t.equal((await inject({ method: 'GET', url: '/sprint/@@ics_view' })).body, res.body, 'with @@ too')
  })

  t.test('a whole day is dates, its end the day after; a talk has its calendar; no start, no calendar', async t => {
    t.equal((await call('POST', '/', { '@type': 'Event', id: 'day', title: 'Day', start: '2026-10-13T00:00:00Z', end: '2026-10-13T23:59:59Z', whole_day: true }, admin)).statusCode, 201)
    const day = readCalendar((await inject({ method: 'GET', url: '/day/ics_view', headers: { authorization: `Bearer ${admin}` } })).body)
    t.same(day.filter(([key]) => key.startsWith('DT') && key !== 'DTSTAMP'), [['DTSTART;VALUE=DATE', '20261013'], ['DTEND;VALUE=DATE', '20261014']])
    t.equal((await inject({ method: 'GET', url: '/day/ics_view' })).statusCode, 401, 'a private event\'s calendar is not anonymous callers\'')
    const talk = await call('POST', '/talks', talkBody({ start: '2026-10-14T10:00:00Z', end: '2026-10-14T10:30:00Z' }), admin)
    t.equal((await inject({ method: 'GET', url: `${new URL(talk.headers.location as string).pathname}/ics_view`, headers: { authorization: `Bearer ${admin}` } })).statusCode, 200)
    t.equal((await inject({ method: 'GET', url: '/talks/ics_view', headers: { authorization: `Bearer ${admin}` } })).statusCode, 404, 'a folder has no start')
  })

  t.test('found by its dates as any object with a start', async t => {
    const found = (await call('GET', '/@search?portal_type=Event&start.query=2026-10-12T00:00:00Z&start.query=2026-10-12T23:59:59Z&start.range=min:max')).json()
    t.same(found.items.map((i: { '@id': string }) => i['@id']), ['http://localhost:80/sprint'])
  })
})
