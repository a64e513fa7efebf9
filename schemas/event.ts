import Type from 'typebox'
import { defineBehavior } from '../core/content/declaration.js'
import { DateTime, TextLine } from './fields.js'
import { endNotBeforeStart, recurrenceReads } from './invariants.js'

/**
 * Start and end of an event (Plone's `plone.eventbasic`): optional here, as
 * the talk has them; the Event requires them (content-types/event).
 * `whole_day`: the days of start and end, times aside; `open_end`: no end.
 */
export const eventBasic = defineBehavior({
  name: 'plone.eventbasic',
  schema: Type.Object({
    start: Type.Optional(DateTime({ title: 'Start', index: 'date' })),
    end: Type.Optional(DateTime({ title: 'End', index: 'date' })),
    whole_day: Type.Optional(Type.Boolean({ title: 'Whole Day', description: 'Event lasts whole day.' })),
    open_end: Type.Optional(Type.Boolean({ title: 'Open End', description: 'This event is open ended.' }))
  }),
  invariants: [endNotBeforeStart('start', 'end', 'End date must be after start date.')]
})

/** Repetitions of an event as RFC 5545 writes them (`RRULE:FREQ=WEEKLY;COUNT=10`, RDATE, EXDATE lines: Plone's `plone.eventrecurrence`). */
export const eventRecurrence = defineBehavior({
  name: 'plone.eventrecurrence',
  schema: Type.Object({
    // Every occurrence of the start and the end is indexed: date ranges find the event's later occurrences.
    recurrence: Type.Optional(Type.String({ title: 'Recurrence', maxLength: 2000, recurs: { dates: ['start', 'end'], anchor: 'start' } }))
  }),
  invariants: [recurrenceReads('recurrence', 'start')]
})

/** Where it takes place (`plone.eventlocation`). */
export const eventLocation = defineBehavior({
  name: 'plone.eventlocation',
  schema: Type.Object({
    location: Type.Optional(TextLine({ title: 'Location', maxLength: 1024, searchable: true }))
  })
})

/** Who attends (`plone.eventattendees`), one a line. */
export const eventAttendees = defineBehavior({
  name: 'plone.eventattendees',
  schema: Type.Object({
    attendees: Type.Optional(Type.Array(TextLine({ title: 'Attendee', maxLength: 256 }), { title: 'Attendees', maxItems: 500 }))
  })
})

/** Whom to ask (`plone.eventcontact`), and the event's own site. */
export const eventContact = defineBehavior({
  name: 'plone.eventcontact',
  schema: Type.Object({
    contact_name: Type.Optional(TextLine({ title: 'Contact Name', maxLength: 256 })),
    contact_email: Type.Optional(Type.String({ title: 'Contact E-mail', format: 'email', maxLength: 254 })),
    contact_phone: Type.Optional(TextLine({ title: 'Contact Phone', maxLength: 64 })),
    event_url: Type.Optional(Type.String({ title: 'Event URL', description: 'Web address with more info about the event.', format: 'uri', maxLength: 2048 }))
  })
})
