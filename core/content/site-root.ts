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
  // Volto's DefaultView: the home page is the root's blocks (HOME_PAGE_BLOCKS at first start: its title and a listing of its items).
  layout: 'document_view'
})

/**
 * The home page a site starts with, as Plone 6 gives a new site one: the
 * site's title, then a listing block without a query, which Volto fills with
 * the root's own items. A root without blocks (a site from before blocks) gets
 * it at the next start.
 */
export const HOME_PAGE_BLOCKS = {
  blocks: {
    'home-title': { '@type': 'title' },
    'home-listing': { '@type': 'listing', variation: 'default' }
  },
  blocks_layout: { items: ['home-title', 'home-listing'] }
}
