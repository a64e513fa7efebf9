import Type from 'typebox'
import { voltoBlocks } from './blocks.js'
import { defineContentType } from './declaration.js'

/**
 * The site root (`{base_url}`): folderish, without a workflow (visible to
 * everyone), never added anywhere, not catalogued. It is part of the core,
 * not a content-type folder, because every site has exactly one. Its blocks
 * are Volto's home page.
 */
export const siteRoot = defineContentType({
  name: 'Plone Site',
  title: 'Site',
  folderish: true,
  globalAllow: false,
  behaviors: [voltoBlocks],
  schema: Type.Object({
    title: Type.String({ title: 'Title', maxLength: 1024 }),
    description: Type.Optional(Type.String({ title: 'Summary', maxLength: 10000 }))
  }),
  workflow: null,
  layout: 'listing_view'
})
