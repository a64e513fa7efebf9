/**
 * PostgreSQL's `ts_rank_cd` (src/backend/utils/adt/tsrank.c, calc_rank_cd
 * with its default weights and no normalisation), for a query whose words are
 * joined by `&` and `|` only: a phrase or a negation asks more of a cover than
 * which words it holds, and such queries are ranked by PostgreSQL.
 *
 * A document is given as its entries: the positions where some query word
 * stands, ascending, each with the words it stands for (a bit a query
 * operand) and its weight class (D = 0 … A = 3). A cover is found as
 * PostgreSQL's Cover() finds it: from the current entry, forward to the
 * first entry at which the words seen satisfy the query; from there, back to
 * the first entry at which the words seen satisfy it again; the next search
 * starts after the cover's first entry. Each cover adds its entries' count
 * divided by the sum of their inverse weights, divided again by one more
 * than the words between its ends that are not entries. The sums are taken
 * in the same order, in doubles, and the result rounded to a float4.
 */

/** PostgreSQL's default weights of D, C, B and A (float4 constants, widened to doubles), inverted as calc_rank_cd inverts them. */
const INVERSE_WEIGHTS = [0.1, 0.2, 0.4, 1.0].map(weight => 1 / Math.fround(weight))

export function coverDensity (positions: Int32Array, words: Int32Array, classes: Uint8Array, count: number, satisfied: (seen: number) => boolean): number {
  let rank = 0
  let from = 0
  for (;;) {
    let seen = 0
    let end = from
    while (end < count && !satisfied(seen |= words[end])) end++
    if (end >= count) return Math.fround(rank)
    seen = 0
    let begin = end
    // Words joined by & and | are satisfied by more words whenever by fewer: going back, the entries from `from` to `end` satisfy it at the latest.
    while (!satisfied(seen |= words[begin])) begin--
    let inverseSum = 0
    for (let k = begin; k <= end; k++) inverseSum += INVERSE_WEIGHTS[classes[k]]
    const density = (end - begin + 1) / inverseSum
    let noise = (positions[end] - positions[begin]) - (end - begin)
    if (noise < 0) noise = Math.trunc((end - begin) / 2)
    rank += density / (1 + noise)
    from = begin + 1
  }
}
