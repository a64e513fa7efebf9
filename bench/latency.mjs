/** Latency figures of a set of timings (ms): the load generator's and the crowd's alike. */

/** The p-th percentile of ascending `sorted` (nearest rank); null when empty. */
export function percentile (sorted, p) {
  if (sorted.length === 0) return null
  return sorted[Math.min(sorted.length - 1, Math.ceil(p / 100 * sorted.length) - 1)]
}

/** Mean, p50, p90, p99 and max of `latencies` (sorted in place). */
export function latencySummary (latencies) {
  const sorted = latencies.sort((a, b) => a - b)
  return {
    mean: sorted.length === 0 ? null : sorted.reduce((a, b) => a + b, 0) / sorted.length,
    p50: percentile(sorted, 50),
    p90: percentile(sorted, 90),
    p99: percentile(sorted, 99),
    max: percentile(sorted, 100)
  }
}
