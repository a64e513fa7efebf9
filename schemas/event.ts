import Type from 'typebox'
import { defineBehavior } from '../core/content/declaration.js'
import { DateTime } from './fields.js'
import { endNotBeforeStart } from './invariants.js'

/** Start and end of an event (Plone's `plone.eventbasic`), both optional here. */
export const eventBasic = defineBehavior({
  name: 'plone.eventbasic',
  schema: Type.Object({
    start: Type.Optional(DateTime({ title: 'Start', index: 'date' })),
    end: Type.Optional(DateTime({ title: 'End', index: 'date' }))
  }),
  invariants: [endNotBeforeStart('start', 'end', 'End date must be after start date.')]
})
