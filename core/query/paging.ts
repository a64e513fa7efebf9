import { parseInteger } from './zope.js'

export const DEFAULT_BATCH_SIZE = 25
export const MAX_BATCH_SIZE = 500

export interface Batch { start: number, size: number }

/** `b_start` (0) and `b_size` (25, at most 500) from a parsed query; non-integers are 400. */
export function batchOf (query: Record<string, unknown>): Batch {
  const start = query.b_start === undefined ? 0 : parseInteger(Array.isArray(query.b_start) ? query.b_start[0] : query.b_start, 'b_start')
  const size = query.b_size === undefined ? DEFAULT_BATCH_SIZE : parseInteger(Array.isArray(query.b_size) ? query.b_size[0] : query.b_size, 'b_size')
  return { start: Math.max(0, start), size: Math.min(MAX_BATCH_SIZE, size <= 0 ? DEFAULT_BATCH_SIZE : size) }
}

/**
 * plone.restapi's `batching` links: the request URL with `b_start` first and
 * the other parameters in their original order. Only when there is more than
 * one page.
 */
export function batchingLinks (url: string, total: number, batch: Batch): Record<string, string> | undefined {
  if (total <= batch.size) return undefined
  const [path, query = ''] = url.split('?')
  const others = new URLSearchParams(query)
  others.delete('b_start')
  const link = (start: number): string => {
    const params = new URLSearchParams([['b_start', String(start)], ...others])
    return `${path}?${params.toString()}`
  }
  const last = Math.floor((total - 1) / batch.size) * batch.size
  const links: Record<string, string> = { '@id': url, first: link(0), last: link(last) }
  if (batch.start > 0) links.prev = link(Math.max(0, batch.start - batch.size))
  if (batch.start + batch.size < total) links.next = link(batch.start + batch.size)
  return links
}
