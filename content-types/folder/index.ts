import Type from 'typebox'
import { defineContentType } from '../../core/content/declaration.js'
import { dublinCore } from '../../schemas/dublincore.js'

/** A plain folder: the `talks` folder is one. */
export default defineContentType({
  name: 'folder',
  title: 'Folder',
  description: 'A container for other content.',
  folderish: true,
  behaviors: [dublinCore],
  schema: Type.Object({}),
  layout: 'listing_view'
})
