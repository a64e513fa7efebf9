/**
 * The targets, checked against a run's results. Each answers with
 * where the service stands; `met` is null when the run did not measure it.
 */

const FLOOR_SHARE = 0.7
const READ_P99_MS = 20
const READ_P99_AT = 100_000
const CREATE_PER_SECOND = 700
const IDLE_RSS_MB = 120
const STARTUP_MS = 1000

const measured = (results, id) => results.filter(r => r.id === id && r.status === 'measured')
const fmt = (value, digits = 0) => value.toFixed(digits)

function floorShare (results, id) {
  const runs = measured(results, id).filter(r => r.ratio !== undefined)
  if (runs.length === 0) return { met: null, standing: 'not measured' }
  const worst = runs.reduce((a, b) => (b.ratio < a.ratio ? b : a))
  return {
    met: worst.ratio >= FLOOR_SHARE,
    standing: `${fmt(worst.ratio * 100)} % of the floor at ${worst.talks} talks (${fmt(worst.rate)} vs ${fmt(worst.floorRate)} req/s)`
  }
}

function readP99 (results) {
  const reads = results.filter(r => (r.group === 'read' || r.group === 'search') && r.status === 'measured')
  if (reads.length === 0) return { met: null, standing: 'not measured' }
  const largest = Math.max(...reads.map(r => r.talks))
  const atLargest = reads.filter(r => r.talks === largest)
  const worst = atLargest.reduce((a, b) => (b.latency.p99 > a.latency.p99 ? b : a))
  const partial = largest < READ_P99_AT ? ` (measured up to ${largest} talks only; run --full for ${READ_P99_AT})` : ''
  return {
    met: largest >= READ_P99_AT ? worst.latency.p99 < READ_P99_MS : null,
    standing: `worst p99 ${fmt(worst.latency.p99, 1)} ms (${worst.id}) at ${largest} talks${partial}`
  }
}

function createRate (results) {
  const runs = measured(results, 'create')
  if (runs.length === 0) return { met: null, standing: 'not measured' }
  const worst = runs.reduce((a, b) => (b.rate < a.rate ? b : a))
  return { met: worst.rate >= CREATE_PER_SECOND, standing: `${fmt(worst.rate)} talks/s at ${worst.talks} talks` }
}

export function checkTargets (report) {
  const { results, service } = report
  const idle = Math.max(service.fresh.idle.rss, service.restart?.idle.rss ?? 0)
  const start = Math.max(service.fresh.startupMs, service.restart?.startupMs ?? 0)
  return [
    { target: `GET one talk >= ${FLOOR_SHARE * 100} % of the floor`, ...floorShare(results, 'get-talk-anon') },
    { target: `GET the folder >= ${FLOOR_SHARE * 100} % of the floor`, ...floorShare(results, 'get-folder') },
    { target: `p99 < ${READ_P99_MS} ms for reads and searches at ${READ_P99_AT} talks`, ...readP99(results) },
    { target: `create >= ${CREATE_PER_SECOND} talks/s without Solr`, ...createRate(results) },
    { target: `RSS idle < ${IDLE_RSS_MB} MB`, met: idle < IDLE_RSS_MB, standing: `${fmt(idle)} MB (largest idle figure)` },
    { target: `start < ${STARTUP_MS} ms`, met: start < STARTUP_MS, standing: `${fmt(start)} ms (slowest start-up)` }
  ]
}
