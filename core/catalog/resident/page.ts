import type { Bits } from './bits.js'
import type { ResidentState } from './state.js'

/** Visits documents in an order, until told to stop. */
export type Walk = (visit: (doc: number) => boolean | undefined | void) => void

/**
 * Documents `start` to `start + size` of `matches` (`count` of them) in the
 * order `walk` visits the documents (`compare` being that order): sorted
 * when they are few, or when a walk would pass over many more documents
 * than there are matches (a deep page of a rare filter); walked otherwise —
 * the first page of a common filter is found after a few dozen documents.
 */
export function pageOf (state: ResidentState, matches: Bits, count: number, start: number, size: number, walk: Walk, compare: (a: number, b: number) => number): number[] {
  const end = Math.min(count, start + size)
  if (start >= end) return []
  const expectedWalk = end * (state.size / Math.max(count, 1))
  if (expectedWalk > count * Math.log2(count + 1)) {
    return matches.toArray().sort(compare).slice(start, end)
  }
  const page: number[] = []
  let seen = 0
  walk(doc => {
    if (!matches.has(doc)) return true
    if (seen++ >= start) page.push(doc)
    return page.length < end - start
  })
  return page
}
