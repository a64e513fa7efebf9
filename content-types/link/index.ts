import Type from 'typebox'
import { defineContentType } from '../../core/content/declaration.js'
import { dublinCore } from '../../schemas/dublincore.js'
import { TextLine } from '../../schemas/fields.js'
import { versioning } from '../../schemas/versioning.js'

/** Plone's Link: an item that stands for an address elsewhere, on the site or outside it. */
export default defineContentType({
  name: 'Link',
  title: 'Link',
  description: 'A link to another web site or to an item of this one.',
  folderish: false,
  behaviors: [dublinCore, versioning],
  schema: Type.Object({
    // The catalogue's `getRemoteUrl` metadata reads it (core/catalog/indexes.ts), as Plone's does.
    remoteUrl: TextLine({ title: 'URL', minLength: 1, maxLength: 2048 })
  }),
  layout: 'link_redirect_view'
})
