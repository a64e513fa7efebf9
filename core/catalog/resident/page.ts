import type { Bits } from './bits.js'
import type { Flat } from './sorted-order.js'

/**
 * What one element of a native sort of places costs, in steps of a walk and
 * times the logarithm of their number (a step: one array read and one bit
 * test; gathering a match's place costs about as much as sorting it).
 */
const SORT_STEPS = 2

/**
 * Documents `start` to `start + size` of `matches` (`count` of them) in the
 * order `flat` lays out: walked from the first place when the page is found
 * after few documents (the first page of a common filter after a few dozen),
 * or else the matches' places gathered and sorted natively (a deep page, a
 * rare filter) — the cheaper of the two, as their expected steps tell.
 */
export function pageOf (matches: Bits, count: number, start: number, size: number, { docAt, placeOf }: Flat): number[] {
  const end = Math.min(count, start + size)
  if (start >= end) return []
  const expectedWalk = end * (docAt.length / Math.max(count, 1))
  if (expectedWalk > SORT_STEPS * count * Math.log2(count + 1)) {
    const places = new Int32Array(count)
    let found = 0
    matches.forEach(doc => { const place = placeOf[doc]; if (place >= 0) places[found++] = place })
    return Array.from(places.subarray(0, found).sort().subarray(start, end), place => docAt[place])
  }
  const page: number[] = []
  let seen = 0
  for (let place = 0; place < docAt.length && page.length < end - start; place++) {
    const doc = docAt[place]
    if (matches.has(doc) && seen++ >= start) page.push(doc)
  }
  return page
}
