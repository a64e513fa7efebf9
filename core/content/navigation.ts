import type { CatalogSearch } from '../catalog/search.js'
import type { Queryable } from '../db/db.js'
import type { Query } from '../query/model.js'
import type { Located } from './rows.js'
import type { Serializer } from './serializer.js'
import type { Reader, Summary } from './summaries.js'
import { urlOf } from './urls.js'

/** One entry of `@navigation` (plone.restapi's shape): its children when the depth reaches them. */
export interface NavigationItem {
  '@id': string
  title: string
  description: string
  review_state: string | null
  items: NavigationItem[]
}

/** Deepest navigation tree a client may ask for, and most entries it holds (a large folder is listed in part). */
export const MAX_NAVIGATION_DEPTH = 10
const MAX_NAVIGATION_ENTRIES = 1000

/**
 * `@breadcrumbs` (plone.restapi): the path from the site root to the object,
 * root excluded, one step (`{@id, title}`) for each object on it; a step the
 * reader may not view is its `@id` alone (Plone shows its title).
 */
export function breadcrumbs (reader: Reader, located: Located, serializer: Serializer): Summary[] {
  return located.lineage.slice(1).map((_, i) =>
    serializer.summary(reader, located.lineage.slice(0, i + 2), obj => ({ title: String(obj.data.title ?? obj.id) })))
}

/**
 * `@navigation` (plone.restapi): "Home" (the site root), then the site's
 * top-level content in folder order, each with its children down to `depth`
 * levels — what the caller may see (the catalogue's security and date filters).
 */
export async function navigation (db: Queryable, catalog: CatalogSearch, baseUrl: string, access: Pick<Query, 'principals' | 'showInactive'>, depth: number): Promise<NavigationItem[]> {
  const { rows } = await catalog.search(db, {
    criteria: [{ kind: 'path', paths: ['/'], depth: Math.min(Math.max(depth, 1), MAX_NAVIGATION_DEPTH) }],
    sort: [{ index: catalog.index('getObjPositionInParent') }],
    descending: false,
    start: 0,
    size: MAX_NAVIGATION_ENTRIES,
    ...access
  })
  const home: NavigationItem = { '@id': baseUrl, title: 'Home', description: '', review_state: null, items: [] }
  const byPath = new Map<string, NavigationItem>([['/', { ...home }]])
  const top: NavigationItem[] = []
  // Parents come before their children: shallower paths first, folder order within a level.
  const ordered = [...rows].sort((a, b) => String(a.path_string).split('/').length - String(b.path_string).split('/').length)
  for (const row of ordered) {
    const path = String(row.path_string)
    const item: NavigationItem = {
      '@id': urlOf(baseUrl, path),
      title: String(row.Title ?? ''),
      description: String(row.Description ?? ''),
      review_state: row.review_state as string | null,
      items: []
    }
    const parentPath = path.slice(0, path.lastIndexOf('/')) || '/'
    if (parentPath === '/') top.push(item)
    else {
      const parent = byPath.get(parentPath)
      if (parent === undefined) continue // below something the caller may not see
      parent.items.push(item)
    }
    byPath.set(path, item)
  }
  return [home, ...top]
}
