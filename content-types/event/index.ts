import Type from 'typebox'
import { voltoBlocks } from '../../core/content/blocks.js'
import { defineContentType } from '../../core/content/declaration.js'
import { dublinCore } from '../../schemas/dublincore.js'
import { eventAttendees, eventBasic, eventContact, eventLocation, eventRecurrence } from '../../schemas/event.js'
import { startAndEndGiven } from './rules.js'
import { versioning } from '../../schemas/versioning.js'

/**
 * Plone's Event (plone.app.event): when, how often, where, who to ask; a page
 * of blocks, folderish as plone.volto makes it. Its iCalendar is `ics_view`.
 */
export default defineContentType({
  name: 'Event',
  title: 'Event',
  description: 'Information about an upcoming event, which can be displayed in the calendar.',
  folderish: true,
  behaviors: [dublinCore, eventBasic, eventRecurrence, eventLocation, eventAttendees, eventContact, voltoBlocks, versioning],
  schema: Type.Object({}),
  invariants: [startAndEndGiven],
  layout: 'event_view'
})
