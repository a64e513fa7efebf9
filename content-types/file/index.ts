import Type from 'typebox'
import { defineContentType } from '../../core/content/declaration.js'
import { dublinCore } from '../../schemas/dublincore.js'
import { File } from '../../schemas/fields.js'

/** Plone's File: a document to download (a PDF, a slide deck, a video that seeks). */
export default defineContentType({
  name: 'File',
  title: 'File',
  description: 'A file to download.',
  folderish: false,
  behaviors: [dublinCore],
  schema: Type.Object({
    file: File({ title: 'File' })
  }),
  layout: 'file_view'
})
