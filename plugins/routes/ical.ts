import fp from 'fastify-plugin'
import { icalendar } from '../../core/content/ical.js'
import { NotFound } from '../../core/errors.js'
import { requireContext } from '../support/access.js'
import { addressOf } from '../support/url.js'

/**
 * `ics_view` (plone.app.event): an event as iCalendar, which Volto's event
 * view links to for calendar clients; any object with a start (the talk too).
 */
export default fp(async fastify => {
  fastify.get('/@@ics_view', {
    config: { binary: true },
    schema: { summary: 'The object as iCalendar (RFC 5545) when it has a start, e.g. an Event (on any content path; also without @@)', tags: ['content'] }
  }, async (request, reply) => {
    const located = await requireContext(fastify.content, request)
    const calendar = icalendar(request.baseUrl, located)
    if (calendar === null) throw NotFound(request.absoluteUrl(addressOf(request.raw).originalUrl))
    return reply.type('text/calendar; charset=utf-8')
      .header('content-disposition', `attachment; filename="${located.obj.id.replace(/[^\w.-]/g, '_')}.ics"`)
      .send(calendar)
  })
}, { name: 'ical', dependencies: ['content', 'auth', 'http'] })
