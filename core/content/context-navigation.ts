import { foldText } from '../catalog/folding.js'
import type { CatalogSearch } from '../catalog/search.js'
import type { Queryable } from '../db/db.js'
import type { Access } from '../query/model.js'
import type { ContextNavigationOptions } from './context-navigation-options.js'
import { inFolderOrder, MAX_NAVIGATION_DEPTH, MAX_NAVIGATION_ENTRIES, parentPath } from './navigation.js'
import { pathDepth, pathParents } from './paths.js'
import type { Located } from './rows.js'
import { urlOf } from './urls.js'

// plone.restapi's `@contextnavigation`, the navigation portlet's tree (docs/api.md); its settings
// are parsed by context-navigation-options.ts.

/** One entry of the tree, with plone.restapi's keys. */
export interface ContextNavigationItem {
  '@id': string
  description: string
  href: string
  icon: string
  is_current: boolean
  is_folderish: boolean
  is_in_path: boolean
  items: ContextNavigationItem[]
  normalized_id: string
  review_state: string
  thumb: string
  title: string
  type: string
}

export interface ContextNavigation {
  '@id': string
  title: string
  url: string | null
  has_custom_name: boolean
  items: ContextNavigationItem[]
  available: boolean
}

/**
 * Folders whose contents one request lists at most (each is one path of a
 * catalogue query, a filter the resident catalogue keeps): a tree of many
 * folders opens the first ones, level by level, in folder order.
 */
export const MAX_OPENED_FOLDERS = 100
/** Plone's `plone.thumb_scale_portlet` of a new site. */
const DEFAULT_THUMB_SCALE = 'icon'

/**
 * plone.i18n's IDNormalizer (`normalized_id`, `type`): folded to lower-case
 * letters, digits and `_`, the rest runs of `-`, at most 50 characters cut
 * at a dash where there is one (its cropName).
 */
export function normalizedId (text: string): string {
  const base = foldText(text).replace(/['"]/g, '').replace(/[^\p{L}\p{N}_]+/gu, '-').replace(/^-+|-+$/g, '')
  let end = base.length
  while (end > 50) end = base.lastIndexOf('-', end - 1)
  if (end === -1) return base.slice(0, 50)
  return end > 0 ? base.slice(0, end) : base
}

/**
 * A `root_path` as the site path it names: relative to the site, with or
 * without its leading and trailing slash; '' or '/' is the site root. A
 * path that cannot name an object here (an empty, `.` or `..` segment) is
 * null, as a path that names nothing.
 */
function sitePath (rootPath: string): string | null {
  const inner = rootPath.replace(/^\//, '').replace(/\/$/, '')
  if (inner === '') return '/'
  const segments = inner.split('/')
  return segments.some(s => s === '' || s === '.' || s === '..') ? null : `/${segments.join('/')}`
}

const within = (path: string, ancestor: string): boolean => ancestor === '/' || path === ancestor || path.startsWith(`${ancestor}/`)
const below = (path: string, ancestor: string): boolean => path !== ancestor && within(path, ancestor)

/**
 * plone.restapi's getRootPath: the folder the tree hangs from, null when
 * the context is above `topLevel` (no tree). The site root's path is `/`.
 */
function treeRoot (context: string, folderish: boolean, options: ContextNavigationOptions, root: string): string | null {
  if (options.currentFolderOnly) return folderish ? context : parentPath(context)
  if (options.topLevel <= 0) return root
  if (!within(context, root)) return null
  const parts = context.split('/').filter(Boolean)
  const rootDepth = pathDepth(root)
  if (parts.length - rootDepth < options.topLevel) return null
  return `/${parts.slice(0, rootDepth + options.topLevel).join('/')}`
}

type Row = Readonly<Record<string, unknown>>
/** The catalogue metadata an entry is written from. */
const COLUMNS = ['path_string', 'getId', 'Title', 'Description', 'review_state', 'portal_type', 'is_folderish', 'image_field']
const text = (value: unknown): string => typeof value === 'string' ? value : ''

export interface ContextNavigationRequest {
  /** `@id` of the answer. */
  url: string
  baseUrl: string
  access: Access
  context: Located
  options: ContextNavigationOptions
  /** The uid of the object at a path (whoever may view it), null when there is none. */
  locate: (path: string) => Promise<string | null>
}

/**
 * The navigation portlet's tree around the context (docs/api.md,
 * "@contextnavigation"): which objects plone.restapi's navtree query finds
 * below the tree's root, those the caller may see (the catalogue's security
 * and date filters) and that hang from the root through objects the caller
 * may see. One catalogue query for the root and the way to the context,
 * then one a level of the tree, at most MAX_NAVIGATION_DEPTH levels,
 * MAX_NAVIGATION_ENTRIES entries and MAX_OPENED_FOLDERS folders opened.
 */
export async function contextNavigation (db: Queryable, catalog: CatalogSearch, request: ContextNavigationRequest): Promise<ContextNavigation> {
  const { options, baseUrl, context } = request
  const here = context.obj.path
  const uidOf = new Map(context.lineage.map(row => [row.path, row.uid]))
  // Levels the tree shows (none below 0).
  const levels = options.bottomLevel === 0 ? MAX_NAVIGATION_DEPTH : Math.max(0, Math.min(options.bottomLevel, MAX_NAVIGATION_DEPTH))

  // The root asked for: on the way to the context, or looked up (a path that names nothing is the site root, as in Plone).
  const asked = options.rootPath === null ? '/' : sitePath(options.rootPath) ?? '/'
  const askedUid = asked === '/' ? null : uidOf.get(asked) ?? await request.locate(asked)
  const candidates = [...new Set([askedUid === null ? '/' : asked, '/'])].map(root => treeRoot(here, context.type.folderish, options, root))
  // The rows of the candidate roots and of the way from them to the context, as far as a tree shows: those the caller may see.
  const wanted = new Set<string>(askedUid === null ? [] : [askedUid])
  for (const root of candidates) {
    if (root === null) continue
    for (const path of pathParents(here)) {
      const uid = uidOf.get(path)
      if (uid !== undefined && path !== '/' && within(path, root) && pathDepth(path) - pathDepth(root) <= levels) wanted.add(uid)
    }
  }
  const seen = new Map((wanted.size === 0 ? [] : await inFolderOrder(db, catalog, [{ kind: 'anyOf', index: catalog.index('UID'), values: [...wanted] }], request.access, wanted.size, COLUMNS))
    .map(row => [String(row.path_string), row]))

  // A root the caller may not see is no root (as one that is not there): the site root.
  const top = askedUid !== null && seen.has(asked) ? asked : '/'
  const root = treeRoot(here, context.type.folderish, options, top)
  const rootGiven = options.rootPath !== null && options.rootPath !== ''
  const sitemap = `${baseUrl}/sitemap`
  const answer: ContextNavigation = {
    '@id': request.url,
    title: options.name === '' ? 'Navigation' : options.name,
    url: !rootGiven && !options.currentFolderOnly ? sitemap : root === null ? null : root === '/' ? sitemap : urlOf(baseUrl, root),
    has_custom_name: options.name !== '',
    items: [],
    available: false
  }
  // No tree above topLevel, nor below a root the caller may not see: its contents are not shown through it.
  if (root === null || (root !== '/' && !seen.has(root))) return answer

  const scale = options.noThumbs ? '' : options.thumbScale === '' ? DEFAULT_THUMB_SCALE : options.thumbScale
  const entry = (path: string, row: Row): ContextNavigationItem => {
    const url = urlOf(baseUrl, path)
    return {
      '@id': url,
      description: text(row.Description),
      href: url,
      icon: '',
      is_current: path === here,
      is_folderish: row.is_folderish === true,
      is_in_path: below(here, path),
      items: [],
      normalized_id: normalizedId(text(row.getId)),
      review_state: text(row.review_state),
      thumb: scale !== '' && row.image_field === 'image' ? `${url}/@@images/image/${scale}` : '',
      title: text(row.Title) === '' ? text(row.getId) : text(row.Title),
      type: normalizedId(text(row.portal_type))
    }
  }
  const items = options.bottomLevel < 0 ? [] : await tree(db, catalog, request, { root, top, levels, seen, entry })
  // As Plone's portlet: with a bottomLevel below 0 there is a portlet (its top entry at most); else one when the tree has entries.
  answer.available = options.bottomLevel < 0 || items.length > 0
  if (!answer.available) return answer
  if (options.includeTop) answer.items.push(topEntry(request, root, seen.get(root), entry))
  answer.items.push(...items)
  return answer
}

/** The root itself as the first entry (`includeTop`): "Home" for the site root. */
function topEntry (request: ContextNavigationRequest, root: string, row: Row | undefined, entry: (path: string, row: Row) => ContextNavigationItem): ContextNavigationItem {
  const here = request.context.obj.path
  if (root !== '/' && row !== undefined) {
    return { ...entry(root, row), is_current: root === here, is_folderish: true, is_in_path: true, normalized_id: normalizedId(text(row.Title)), thumb: '' }
  }
  const site = request.context.lineage[0].data
  return {
    '@id': request.baseUrl,
    description: text(site.description),
    href: request.baseUrl,
    icon: '',
    is_current: here === '/',
    is_folderish: true,
    is_in_path: true,
    items: [],
    normalized_id: normalizedId(text(site.title)),
    review_state: '',
    thumb: '',
    title: 'Home',
    type: 'plone-site'
  }
}

interface TreeParts {
  root: string
  /** The root the tree was asked for (or the site root): its navtree query is the context's when the context is inside it. */
  top: string
  levels: number
  /** Rows of the way to the context, by path, of those the caller may see. */
  seen: Map<string, Row>
  entry: (path: string, row: Row) => ContextNavigationItem
}

/**
 * The entries below the root, level by level: the contents of the folders
 * whose contents plone.restapi's navtree query finds whole (one catalogue
 * query a level), and the objects on the way to the context, which Plone
 * always adds (showAllParents). An entry hangs from its folder's entry, so
 * that nothing is shown below a folder the caller may not see.
 */
async function tree (db: Queryable, catalog: CatalogSearch, request: ContextNavigationRequest, parts: TreeParts): Promise<ContextNavigationItem[]> {
  const { root, top, levels, seen, entry } = parts
  const { options } = request
  const here = request.context.obj.path
  const rootDepth = pathDepth(root)
  const navtree = within(here, top)
  const start = options.topLevel > 0 ? options.topLevel + 1 : 0
  // The query's depth: bottomLevel, 999 for 0. A navtree query that starts deeper than it reaches finds nothing.
  const reaches = pathDepth(here) + (options.bottomLevel === 0 ? 999 : options.bottomLevel)
  /** Whether every object in the folder is found (ExtendedPathIndex's navtree query with depth, as plone.restapi builds it). */
  const whole = (folder: string): boolean => {
    if (!navtree) return within(folder, top)
    if (start > reaches) return false
    if (options.bottomLevel === 1) return folder === root && rootDepth >= start - 1
    return within(folder, here) || pathDepth(folder) < Math.max(start, 1)
  }
  // The way to the context, and the asked root when the tree holds it (a query of its subtree outside the context's),
  // in folder order; the query's find comes before what Plone adds to it (the way, outside the asked root).
  const way = [...seen.keys()].filter(path => below(path, root) && pathDepth(path) - rootDepth <= levels &&
    (within(here, path) || (path === top && !navtree && options.bottomLevel !== 1)))
    .sort((a, b) => Number(a !== top) - Number(b !== top))
  const placed = new Set<string>()
  const rootItem = { items: [] as ContextNavigationItem[] }
  let folders: Array<{ path: string, item: { items: ContextNavigationItem[] } }> = [{ path: root, item: rootItem }]
  let count = 0
  let opened = 0
  for (let level = 1; level <= levels && folders.length > 0; level++) {
    const open = folders.filter(folder => whole(folder.path)).slice(0, Math.max(0, MAX_OPENED_FOLDERS - opened))
    opened += open.length
    const budget = MAX_NAVIGATION_ENTRIES - count - way.filter(path => !placed.has(path)).length
    const rows = open.length === 0 || budget <= 0
      ? []
      : await inFolderOrder(db, catalog, [{ kind: 'path', paths: open.map(folder => folder.path), depth: 1 }], request.access, budget, COLUMNS)
    const byFolder = new Map(folders.map(folder => [folder.path, { ...folder, rows: [] as Row[] }]))
    for (const row of rows) byFolder.get(parentPath(String(row.path_string)))?.rows.push(row)
    for (const path of way) if (pathDepth(path) === rootDepth + level && !placed.has(path)) byFolder.get(parentPath(path))?.rows.push(seen.get(path)!)
    const next: typeof folders = []
    for (const folder of byFolder.values()) {
      for (const row of folder.rows) {
        const path = String(row.path_string)
        if (placed.has(path)) continue
        placed.add(path)
        count++
        const item = entry(path, row)
        folder.item.items.push(item)
        // plone.restapi lists a folder's contents while the level is above bottomLevel.
        if (item.is_folderish) next.push({ path, item })
      }
    }
    folders = next
  }
  return rootItem.items
}
