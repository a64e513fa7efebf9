import Type from 'typebox'
import { defineBehavior } from '../core/content/declaration.js'
import { KEYWORDS_VOCABULARY } from '../core/content/vocabularies.js'
import { DateTime, TextLine } from './fields.js'
import { endNotBeforeStart } from './invariants.js'

/**
 * The general fields every content item has (Plone's `plone.dublincore`
 * behavior). Limits follow plone.app.dexterity 5 (title ≤ 1024, description ≤ 10000).
 */
export const dublinCore = defineBehavior({
  name: 'plone.dublincore',
  schema: Type.Object({
    title: TextLine({ title: 'Title', minLength: 1, maxLength: 1024, index: 'text', indexName: 'Title', searchable: true }),
    description: Type.Optional(Type.String({ title: 'Summary', maxLength: 10000, index: 'text', indexName: 'Description', searchable: true })),
    subjects: Type.Optional(Type.Array(TextLine({ title: 'Tag', maxLength: 256 }), { title: 'Tags', description: 'Tags are commonly used for ad-hoc organization of content.', index: 'keyword', indexName: 'Subject', searchable: true, maxItems: 100, suggestions: KEYWORDS_VOCABULARY })),
    effective: Type.Optional(DateTime({ title: 'Publishing date', index: 'date', indexName: 'effective' })),
    expires: Type.Optional(DateTime({ title: 'Expiration date', index: 'date', indexName: 'expires' }))
  }),
  invariants: [endNotBeforeStart('effective', 'expires', 'The expiration date must be after the publishing date.')]
})
