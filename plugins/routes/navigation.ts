import type { FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import Type from 'typebox'
import { seesInactive } from '../../core/catalog/listing.js'
import { contextNavigation } from '../../core/content/context-navigation.js'
import { CONTEXT_NAVIGATION_PARAMETERS, contextNavigationOptions } from '../../core/content/context-navigation-options.js'
import { breadcrumbs, navigation } from '../../core/content/navigation.js'
import type { Located } from '../../core/content/rows.js'
import { linkTargets } from '../../core/content/links.js'
import { urlOf } from '../../core/content/urls.js'
import { parseInteger } from '../../core/query/zope.js'
import type { Access } from '../../core/query/model.js'
import { principalsOf } from '../../core/security/roles.js'
import { queryOf } from '../support/url.js'

/** What the caller may see of the catalogue: its principals, and inactive content when it may see it everywhere. */
const accessOf = (request: FastifyRequest): Access => ({ principals: principalsOf(request.principal), showInactive: seesInactive(request.principal) })

/** `@contextnavigation`'s parameters, each at most once, as text (core/content/context-navigation.ts reads them). */
const ContextNavigationQuery = Type.Object(Object.fromEntries(CONTEXT_NAVIGATION_PARAMETERS.map(name => [name, Type.Optional(Type.String())])))

/**
 * The services of the site's structure that Volto reads on every page
 * (plone.restapi): `@breadcrumbs`, `@navigation` (with
 * `expand.navigation.depth`), `@contextnavigation` (the navigation
 * portlet, `expand.contextnavigation.*`), `@navroot`, `@site`, and
 * `@translations` (a site in one language: none). Each is also an
 * `@components` entry.
 */
export default fp(async fastify => {
  const { components, content, serializer } = fastify
  const serviceUrl = (request: FastifyRequest, path: string, name: string): string =>
    `${urlOf(request.baseUrl, path)}/@${name}`
  const siteRoot = async (): Promise<Located> => {
    const { found } = await content.locate('/')
    if (found === null) throw new Error('The site root is missing')
    return found
  }

  components.serve('breadcrumbs', { summary: 'The path from the site root to the object', tags: ['navigation'] }, async (request, located) => ({
    '@id': serviceUrl(request, located.obj.path, 'breadcrumbs'),
    items: breadcrumbs(request, located, serializer),
    root: request.baseUrl
  }))

  components.serve('navigation', { summary: 'The site\'s navigation tree (expand.navigation.depth, default 1)', tags: ['navigation'] }, async (request, located) => {
    const depthParam = queryOf(request.url).get('expand.navigation.depth')
    const depth = depthParam === null ? 1 : parseInteger(depthParam, 'expand.navigation.depth')
    return {
      '@id': serviceUrl(request, located.obj.path, 'navigation'),
      items: await navigation(fastify.db, fastify.catalogSearch, request.baseUrl, accessOf(request), depth)
    }
  })

  components.serve('contextnavigation', {
    summary: 'The navigation portlet\'s tree around the object (expand.contextnavigation.name, root_path, includeTop, currentFolderOnly, topLevel, bottomLevel, no_icons, thumb_scale, no_thumbs)',
    tags: ['navigation'],
    querystring: ContextNavigationQuery
  }, async (request, located) => await contextNavigation(fastify.db, fastify.catalogSearch, {
    url: serviceUrl(request, located.obj.path, 'contextnavigation'),
    baseUrl: request.baseUrl,
    access: accessOf(request),
    context: located,
    options: contextNavigationOptions(queryOf(request.url)),
    locate: async path => (await content.locateForReading(path)).found?.obj.uid ?? null
  }))

  // The site root is the only navigation root: this service has no language folders.
  components.serve('navroot', { summary: 'The navigation root of the object (the site root)', tags: ['navigation'] }, async (request, located) => {
    const root = await siteRoot()
    return {
      '@id': serviceUrl(request, located.obj.path, 'navroot'),
      navroot: serializer.object(request, root, undefined, await linkTargets(request, [root], async uids => await content.locateMany(uids)))
    }
  })

  components.serve('translations', { summary: 'Translations of the object: none, the site has one language', tags: ['navigation'], onlyExpanded: true }, async (request, located) => ({
    '@id': serviceUrl(request, located.obj.path, 'translations'),
    items: []
  }))

  fastify.get('/@site', {
    schema: { summary: 'Site-wide settings clients read (title, logo, languages)', tags: ['navigation'] }
  }, async request => {
    const root = await siteRoot()
    return {
      '@id': `${request.baseUrl}/@site`,
      // `@aliases` at the root filters by `start` and `end` (Volto's Aliases panel then offers them, and its CSV upload).
      features: { filter_aliases_by_date: true, multilingual: false },
      'plone.site_title': String(root.obj.data.title ?? ''),
      'plone.site_logo': null,
      'plone.robots_txt': '',
      'plone.allowed_sizes': [],
      'plone.available_languages': ['en'],
      'plone.default_language': 'en',
      'plone.portal_timezone': 'UTC'
    }
  })
}, { name: 'navigation', dependencies: ['components', 'content', 'auth', 'http'] })
