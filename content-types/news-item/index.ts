import Type from 'typebox'
import { voltoBlocks } from '../../core/content/blocks.js'
import { defineContentType } from '../../core/content/declaration.js'
import { dublinCore } from '../../schemas/dublincore.js'
import { leadImage } from '../../schemas/lead-image.js'
import { versioning } from '../../schemas/versioning.js'

/** Plone's News Item: a page of blocks with a lead image; folderish, as plone.volto makes it (its images live inside it). */
export default defineContentType({
  name: 'News Item',
  title: 'News Item',
  description: 'An announcement, with a lead image.',
  folderish: true,
  behaviors: [dublinCore, leadImage, voltoBlocks, versioning],
  schema: Type.Object({}),
  layout: 'newsitem_view'
})
