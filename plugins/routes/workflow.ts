import type { FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import Type from 'typebox'
import { requireContext } from '../support/access.js'
import { mayReadHistory, stateTitle } from '../support/workflow-history.js'
import type { HistoryEntry, Located } from '../../core/content/rows.js'
import { BadRequest } from '../../core/errors.js'
import { isoDate, urlOf } from '../../core/content/urls.js'
import { clientDate, type TransitionDates } from '../../core/content/transitions.js'

/** A date-time with or without a UTC offset (no offset = UTC). */
const ClientDate = Type.String({ maxLength: 64, description: 'ISO 8601 date-time; without a UTC offset it is UTC' })
const errorResponses = Object.fromEntries([400, 401, 403, 404].map(s => [s, { $ref: 'Error#' }]))
const Entry = Type.Object({
  action: Type.Union([Type.String(), Type.Null()]),
  actor: Type.Union([Type.String(), Type.Null()]),
  comments: Type.String(),
  review_state: Type.String(),
  time: Type.String(),
  title: Type.String()
})

/**
 * `@workflow` (plone.restapi): the state, the history and the transitions the
 * caller may take; POST takes one (400 WorkflowException when it is not available).
 */
export default fp(async fastify => {
  const { content, transitions } = fastify

  const entryOf = (located: Located, e: HistoryEntry): Record<string, unknown> => ({
    action: e.action,
    actor: e.actor,
    comments: e.comments,
    review_state: e.review_state,
    time: isoDate(e.time),
    title: stateTitle(located, e.review_state)
  })
  fastify.get('/@workflow', {
    schema: {
      summary: 'Workflow state, history and available transitions (on any content path)',
      tags: ['workflow'],
      response: { 200: Type.Object({ '@id': Type.String(), history: Type.Array(Entry), state: Type.Object({ id: Type.String(), title: Type.String() }), transitions: Type.Array(Type.Object({ '@id': Type.String(), title: Type.String() })) }), ...errorResponses }
    }
  }, async request => await workflowOf(request, await requireContext(content, request)))
  fastify.components.add('workflow', workflowOf)

  async function workflowOf (request: FastifyRequest, located: Located): Promise<Record<string, unknown>> {
    const url = urlOf(request.baseUrl, located.obj.path)
    const workflow = located.type.workflow
    const state = located.obj.review_state
    const history = workflow !== null && mayReadHistory(located, request.principal) ? await transitions.history(located.obj.uid) : []
    return {
      '@id': `${url}/@workflow`,
      history: history.map(e => entryOf(located, e)),
      state: { id: state ?? '', title: state !== null ? stateTitle(located, state) : '' },
      transitions: transitions.available(located, request.principal).map(([id, t]) => ({ '@id': `${url}/@workflow/${id}`, title: t.title }))
    }
  }

  // Without a transition name the path would fall through to "create content" (POST <folder>).
  fastify.post('/@workflow', {
    schema: { summary: 'Missing transition: always 400 (on any content path)', tags: ['workflow'], response: errorResponses }
  }, async () => { throw BadRequest('Missing transition') })

  fastify.post('/@workflow/:transition', {
    // The body is optional: a bodiless POST is validated as `{}`.
    preValidation: async request => { request.body ??= {} },
    schema: {
      summary: 'Take a workflow transition (on any content path)',
      tags: ['workflow'],
      security: [{ bearer: [] }],
      params: Type.Object({ transition: Type.String() }),
      body: Type.Object({
        comment: Type.Optional(Type.String({ maxLength: 10000 })),
        effective: Type.Optional(Type.Union([ClientDate, Type.Null()])),
        expires: Type.Optional(Type.Union([ClientDate, Type.Null()])),
        include_children: Type.Optional(Type.Boolean())
      }, { additionalProperties: false }),
      response: { 200: Entry, ...errorResponses }
    }
  }, async request => {
    const located = await requireContext(content, request)
    const { transition } = request.params as { transition: string }
    const body = (request.body ?? {}) as { comment?: string, effective?: string | null, expires?: string | null, include_children?: boolean }
    const dates: TransitionDates = {}
    if (typeof body.effective === 'string') dates.effective = clientDate(body.effective, 'effective')
    if (typeof body.expires === 'string') dates.expires = clientDate(body.expires, 'expires')
    if (dates.effective !== undefined && dates.expires !== undefined && Date.parse(dates.expires) < Date.parse(dates.effective)) {
      throw BadRequest('The expiration date must be after the publishing date.')
    }
    const { located: after, entry } = await transitions.takeRecursively(located, transition, request.principal, body.comment ?? '', dates, body.include_children === true)
    return entryOf(after, entry)
  })
}, { name: 'workflow', dependencies: ['components', 'content', 'auth', 'http'] })
