/**
 * A run's results as text: a table for the terminal and the same table in
 * Markdown (for docs/performance.md), then the targets and the notes.
 */

const COLUMNS = ['scenario', 'talks', 'rate', 'p50 ms', 'p99 ms', 'errors', 'floor rate', 'ratio', 'RSS MB']

const num = (value, digits = 0) => (value === null || value === undefined ? '' : value.toFixed(digits))
const percent = share => `${num(share * 100, share < 0.1 ? 1 : 0)} %`

function row (r) {
  if (r.status !== 'measured') {
    return [r.title, num(r.talks), 'FAILED', '', '', '', '', '', '']
  }
  return [
    r.title,
    num(r.talks),
    `${num(r.rate)} ${r.unit}`,
    num(r.latency.p50, 2),
    num(r.latency.p99, 2),
    num(r.errors),
    num(r.floorRate),
    r.ratio !== undefined ? `${percent(r.ratio)}${r.floorId !== 'floor-db' ? ` of ${r.floorId}` : ''}` : r.drift !== undefined ? `drift ${r.drift >= 0 ? '+' : ''}${num(r.drift * 100)} %` : '',
    num(r.memoryAfter?.rss)
  ]
}

/** p99 of every scenario measured at more than one size, by size, and how much it grew. */
function scalingRows (report) {
  const sizes = [...new Set(report.results.filter(r => r.status === 'measured').map(r => r.talks))].sort((a, b) => a - b)
  if (sizes.length < 2) return []
  // Jobs (reindex, drain) have a rate but no latencies.
  const ids = [...new Set(report.results.filter(r => r.group !== 'floor' && r.status === 'measured' && r.latency.p99 !== null).map(r => r.id))]
  const header = ['p99 ms by talks', ...sizes.map(String), `growth ${sizes[0]} → ${sizes.at(-1)}`]
  const rows = ids.map(id => {
    const at = sizes.map(size => report.results.find(r => r.id === id && r.talks === size && r.status === 'measured'))
    const measured = at.filter(Boolean)
    if (measured.length < 2) return null
    const growth = measured[measured.length - 1].latency.p99 / measured[0].latency.p99
    return [measured[0].title, ...at.map(r => num(r?.latency.p99, 1)), `× ${num(growth, 1)}`]
  }).filter(Boolean)
  return rows.length === 0 ? [] : [header, ...rows]
}

function summaryLines (report) {
  const { service, machine } = report
  const mem = m => `${num(m.rss)} MB`
  return [
    `machine: ${machine.cpus} × ${machine.cpuModel}, ${num(machine.memoryGiB)} GiB, Node ${machine.node}, PostgreSQL ${machine.postgres}, load average ${machine.loadAverage.map(l => num(l, 2)).join(' ')} at start, ${(machine.loadAverageAtEnd ?? []).map(l => num(l, 2)).join(' ')} at end`,
    `profile: ${report.profile} (${report.settings.connections} connections, ${report.settings.duration} s after ${report.settings.warmup} s warm-up), revision ${report.revision}, ${report.startedAt}`,
    `start-up to first 200: ${num(service.fresh.startupMs)} ms on an empty database (migrations included)` +
      (service.restart !== undefined ? `, ${num(service.restart.startupMs)} ms on the seeded database` : ''),
    `service RSS: idle ${mem(service.fresh.idle)}` +
      service.seeded.map(s => `, after seeding ${s.talks} talks ${mem(s.memory)}`).join('') +
      `, peak ${num(service.peakMB)} MB` +
      (service.restart !== undefined ? `; idle after restart ${mem(service.restart.idle)}` : ''),
    `seeding: ${service.seeded.map(s => `${s.added} talks in ${num(s.seedSeconds, 1)} s (${num(s.seedRate)} talks/s) to ${s.talks}`).join('; ')}`,
    ...(report.integrity !== undefined
      ? [`integrity: /talks holds ${report.integrity.talksFolder.items} items at ${report.integrity.talksFolder.positions} distinct positions`]
      : [])
  ]
}

/** Why a scenario has no figures, and the first error a measured one met. */
function notes (report) {
  return report.results.flatMap(r => [
    ...(r.reason !== undefined ? [`${r.id}: failed: ${r.reason}`] : []),
    ...(r.errorSample !== undefined ? [`${r.id} at ${r.talks} talks: first error ${r.errorSample}`] : []),
    ...(r.background !== undefined
      ? [`${r.id} at ${r.talks} talks: meanwhile ${r.background.connections} other clients sent ${r.background.requests} requests (${Object.entries(r.background.statuses).map(([status, n]) => `${n} × ${status}`).join(', ')})`]
      : [])
  ])
}

const mark = ({ met, by }) => {
  const margin = by === null || by === undefined ? '' : ` by ${num(Math.abs(by) * 100)} %`
  return met === null ? `?${margin !== '' ? ` (${by >= 0 ? 'ahead' : 'behind'}${margin} so far)` : ''}` : met ? `met${margin}` : `MISSED${margin}`
}

/** A table with aligned columns; `left` are the indexes of left-aligned columns. */
function textTable ([header, ...rows], left) {
  const widths = header.map((_, i) => Math.max(...[header, ...rows].map(r => r[i].length)))
  const line = r => r.map((cell, i) => (left.includes(i) ? cell.padEnd(widths[i]) : cell.padStart(widths[i]))).join('  ')
  return [line(header), widths.map(w => '-'.repeat(w)).join('  '), ...rows.map(line)]
}

function markdownTable ([header, ...rows], left) {
  const cells = r => `| ${r.join(' | ')} |`
  return [cells(header), cells(header.map((_, i) => (left.includes(i) ? '---' : '---:'))), ...rows.map(cells)]
}

export function terminalReport (report) {
  const scaling = scalingRows(report)
  const remarks = notes(report)
  return [
    ...summaryLines(report),
    '',
    ...textTable([COLUMNS, ...report.results.map(row)], [0, 2]),
    ...(scaling.length > 0 ? ['', ...textTable(scaling, [0])] : []),
    ...(remarks.length > 0 ? ['', 'notes:', ...remarks.map(n => `  ${n}`)] : []),
    '',
    'targets:',
    ...report.targets.map(t => `  [${mark(t)}] ${t.target}: ${t.standing}`)
  ].join('\n')
}

export function markdownReport (report) {
  const scaling = scalingRows(report)
  const remarks = notes(report)
  return [
    ...summaryLines(report).map(l => `- ${l}`),
    '',
    ...markdownTable([COLUMNS, ...report.results.map(row)], [0, 2]),
    ...(scaling.length > 0 ? ['', ...markdownTable(scaling, [0])] : []),
    ...(remarks.length > 0 ? ['', ...remarks.map(n => `- ${n}`)] : []),
    '',
    ...markdownTable([['target', 'standing', ''], ...report.targets.map(t => [t.target, t.standing, mark(t)])], [0, 1, 2])
  ].join('\n')
}
