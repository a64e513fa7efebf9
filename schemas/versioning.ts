import Type from 'typebox'
import { defineBehavior } from '../core/content/declaration.js'
import { MAX_CHANGE_NOTE, VERSIONING_BEHAVIOR } from '../core/content/versions.js'
import { TextLine } from './fields.js'

/**
 * Versions of the object (Plone's `plone.versioning`): every create and edit
 * keeps the state it leaves, listed and served by `@history` (docs/versions.md).
 * Its `changeNote` is the comment of the version a write makes: taken from the
 * write's body, never stored on the object (core/content/versions.ts).
 */
export const versioning = defineBehavior({
  name: VERSIONING_BEHAVIOR,
  schema: Type.Object({
    // As Plone answers it: '' (the note of the write being made, which a read is not).
    changeNote: Type.Optional({ ...TextLine({ title: 'Change Note', description: 'Enter a comment that describes the changes you made.', maxLength: MAX_CHANGE_NOTE }), default: '' })
  })
})
