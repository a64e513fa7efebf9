/**
 * The first place among the first `length` items of the ascending `sorted`
 * whose item is not below `value` (`length` when none): numbers by value,
 * strings by JavaScript's order (UTF-16 units, in which the words of any
 * prefix lie together).
 */
export function lowerBound<T extends number | string> (sorted: ArrayLike<T>, value: T, length = sorted.length): number {
  let low = 0
  let high = length
  while (low < high) {
    const middle = (low + high) >>> 1
    if (sorted[middle] < value) low = middle + 1
    else high = middle
  }
  return low
}
