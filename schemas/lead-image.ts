import Type from 'typebox'
import { defineBehavior } from '../core/content/declaration.js'
import { Image, TextLine } from './fields.js'

/** An image that stands for the item in listings and at the head of its page (Plone's `plone.leadimage`). */
export const leadImage = defineBehavior({
  name: 'plone.leadimage',
  schema: Type.Object({
    image: Type.Optional(Image({ title: 'Lead Image' })),
    image_caption: Type.Optional(TextLine({ title: 'Lead Image Caption', maxLength: 1024 }))
  })
})
