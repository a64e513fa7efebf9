import Type from 'typebox'
import { voltoBlocks } from '../../core/content/blocks.js'
import { defineContentType } from '../../core/content/declaration.js'
import { dublinCore } from '../../schemas/dublincore.js'
import { versioning } from '../../schemas/versioning.js'

/**
 * Plone's Page: a page of the site, built of Volto's blocks. Folderish, as
 * plone.volto makes it (FolderishDocument): Volto's image block uploads its
 * image into the page it edits.
 */
export default defineContentType({
  name: 'Document',
  title: 'Page',
  description: 'A page of the site, built of blocks.',
  folderish: true,
  behaviors: [dublinCore, voltoBlocks, versioning],
  schema: Type.Object({}),
  layout: 'document_view'
})
