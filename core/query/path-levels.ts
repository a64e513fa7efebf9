import { pathDepth } from '../content/paths.js'
import { INT32_MAX } from './zope.js'

/**
 * The levels (`path_depth`, the depth below the site root) that a `path`
 * criterion reaches below `path`: `depth` 0 the object itself, n ≥ 1 the n
 * levels below it; null for a negative depth, which reaches the object and
 * everything below (no bound on the level). Both engines render it, so that
 * they agree. A depth beyond what a 32-bit level can hold reaches everything
 * below, as in Plone, whose numbers have no size: the last level is capped
 * rather than overflowing the catalogue's and Solr's 32-bit columns.
 */
export function pathLevels (path: string, depth: number): { first: number, last: number } | null {
  if (depth < 0) return null
  const level = pathDepth(path)
  return depth === 0 ? { first: level, last: level } : { first: level + 1, last: Math.min(level + depth, INT32_MAX) }
}
