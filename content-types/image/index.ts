import Type from 'typebox'
import { defineContentType } from '../../core/content/declaration.js'
import { dublinCore } from '../../schemas/dublincore.js'
import { Image } from '../../schemas/fields.js'

/** Plone's Image: an image of the site (what Volto's image block and folder contents upload). */
export default defineContentType({
  name: 'Image',
  title: 'Image',
  description: 'An image, shown on its own page and in blocks that link it.',
  folderish: false,
  behaviors: [dublinCore],
  schema: Type.Object({
    image: Image({ title: 'Image' })
  }),
  layout: 'image_view'
})
