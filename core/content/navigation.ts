import type { CatalogSearch } from '../catalog/search.js'
import type { Queryable } from '../db/db.js'
import type { Access, Criterion } from '../query/model.js'
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
export const MAX_NAVIGATION_ENTRIES = 1000

/** The folder of a content path: `/talks/a` → `/talks`, `/talks` → `/`. */
export const parentPath = (path: string): string => path.slice(0, path.lastIndexOf('/')) || '/'

/**
 * Catalogue rows that match `criteria`, of those the caller may see (the
 * catalogue's security and date filters), in folder order
 * (`getObjPositionInParent`), at most `size`; `columns`: the metadata read
 * (all when not given).
 */
export async function inFolderOrder (db: Queryable, catalog: CatalogSearch, criteria: Criterion[], access: Access, size: number, columns?: string[]): Promise<ReadonlyArray<Record<string, unknown>>> {
  const { rows } = await catalog.search(db, {
    criteria,
    sort: [{ index: catalog.index('getObjPositionInParent') }],
    descending: false,
    start: 0,
    size,
    ...access
  }, columns)
  return rows
}

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
export async function navigation (db: Queryable, catalog: CatalogSearch, baseUrl: string, access: Access, depth: number): Promise<NavigationItem[]> {
  const rows = await inFolderOrder(db, catalog, [{ kind: 'path', paths: ['/'], depth: Math.min(Math.max(depth, 1), MAX_NAVIGATION_DEPTH) }], access, MAX_NAVIGATION_ENTRIES)
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
    const folder = parentPath(path)
    if (folder === '/') top.push(item)
    else {
      const parent = byPath.get(folder)
      if (parent === undefined) continue // below something the caller may not see
      parent.items.push(item)
    }
    byPath.set(path, item)
  }
  return [home, ...top]
}
