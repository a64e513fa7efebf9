/**
 * A run's results as text: tables for the terminal and the same tables in
 * Markdown (for docs/performance.md), then the notes and the targets. The
 * scenarios that ask one request again and again and those of the varied
 * traffic are in tables of their own, labelled so; the varied traffic's
 * figures are given by class too.
 */

const COLUMNS = ['scenario', 'talks', 'rate', 'p50 ms', 'p99 ms', 'errors', 'floor rate', 'ratio', 'RSS MB']
const CLASS_COLUMNS = ['class', 'answers', 'p50 ms', 'p99 ms', 'max ms', '2xx', '4xx', '5xx', 'no answer', 'unexpected']
const REPEATED = 'one request repeated: each scenario asks the same question (or a few in rotation) again and again, so that what the service keeps can answer it from memory; with the floors and the jobs'
const VARIED = 'varied traffic: a crowd\'s mix, each request drawn at random (bench/traffic-mix.mjs), from many clients over two processes of the service'

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

/**
 * p99 by size of every series measured at more than one size, and how much
 * it grew: `points` are [{ key, name, talks, p99 }].
 */
function scalingRows (points, what) {
  const sizes = [...new Set(points.map(p => p.talks))].sort((a, b) => a - b)
  if (sizes.length < 2) return []
  const header = [`p99 ms by talks (${what})`, ...sizes.map(String), `growth ${sizes[0]} → ${sizes.at(-1)}`]
  const rows = [...new Set(points.map(p => p.key))].map(key => {
    const at = sizes.map(size => points.find(p => p.key === key && p.talks === size))
    const measured = at.filter(Boolean)
    if (measured.length < 2) return null
    return [measured[0].name, ...at.map(p => num(p?.p99, 1)), `× ${num(measured.at(-1).p99 / measured[0].p99, 1)}`]
  }).filter(Boolean)
  return rows.length === 0 ? [] : [header, ...rows]
}

const isVaried = r => r.traffic === 'varied'
// Jobs (reindex, drain) have a rate but no latencies.
const repeatedPoints = report => report.results
  .filter(r => !isVaried(r) && r.group !== 'floor' && r.status === 'measured' && r.latency.p99 !== null)
  .map(r => ({ key: r.id, name: r.title, talks: r.talks, p99: r.latency.p99 }))
/** Every class of every varied scenario, by size (bench/charts.mjs draws them). */
export const variedPoints = report => report.results
  .filter(r => isVaried(r) && r.status === 'measured')
  .flatMap(r => r.classes.filter(c => c.latency.p99 !== null).map(c => ({ key: `${r.id}/${c.id}`, name: `${r.id}: ${c.title}`, talks: r.talks, p99: c.latency.p99 })))

function classRow (c) {
  const n = key => num(c.statuses[key] ?? 0)
  return [c.title, num(c.count), num(c.latency.p50, 1), num(c.latency.p99, 1), num(c.latency.max, 1), n('2xx'), n('4xx'), n('5xx'), n('no answer'), num(c.unexpected)]
}

/** The second of the window (counted from 1) that a wall-clock moment falls in. */
const secondOf = (r, at) => Math.floor((at - r.window.from) / 1000) + 1

/** A pause as the report names it: its length and the collector's share. */
const pauseText = pause => `${num(pause.ms)} ms (${num(pause.gcMs)} ms of it collecting)`

/** The processes whose event loop stood still while a request of the second `second` (from 0) could be waiting. */
function heldDuring (r, second) {
  if (r.pauses === undefined) return ''
  const from = r.window.from + second * 1000
  const held = r.pauses.flatMap(({ process, pauses }) => pauses
    .filter(pause => pause.at + pause.ms > from && pause.at < from + 1000)
    .map(pause => `${process} ${pauseText(pause)}`))
  return held.length === 0 ? ', no process held over 50 ms then' : `, held then: ${held.join(', ')}`
}

/** The second of the window whose requests waited longest (timeline: by arrival). */
function slowestSecond (r) {
  const seconds = (r.timeline ?? []).filter(s => s.answers > 0)
  if (seconds.length === 0) return ''
  const worst = seconds.reduce((a, b) => (b.max > a.max ? b : a))
  return `; slowest second: second ${worst.second + 1} of the window (${num(worst.answers)} answers, p50 ${num(worst.p50, 1)} ms, max ${num(worst.max, 1)} ms${heldDuring(r, worst.second)})`
}

/** Each process's pauses over 50 ms in the window (bench/pauses.mjs): how many, and the longest. */
function pausesOf (r) {
  if (r.pauses === undefined) return ''
  const each = r.pauses.map(({ process, pauses }) => {
    if (pauses.length === 0) return `${process} none`
    const longest = pauses.reduce((a, b) => (b.ms > a.ms ? b : a))
    return `${process} ${num(pauses.length)}, the longest ${pauseText(longest)} in second ${secondOf(r, longest.at)}`
  })
  return `; event loops held over 50 ms: ${each.join('; ')}`
}

/** A varied scenario's figures by class, each with a line saying what was sent. */
function classTables (report) {
  return report.results.filter(r => isVaried(r) && r.status === 'measured').map(r => ({
    title: `${r.title} (${r.id}) at ${r.talks} talks, by class: ${r.crowd.talks} talks of which ${r.crowd.published} published, ` +
      (r.paced !== undefined
        ? `arriving at ${num(r.paced.arrivalRate)} a second (${percent(r.paced.pace)} of the floor before) at ${r.crowd.processes} processes, sent by up to ${r.crowd.connections} clients, ${num(r.paced.unsent)} arrivals left waiting at the end`
        : `${r.crowd.connections} clients over ${r.crowd.processes} processes`) +
      `, ${num(r.seconds, 1)} s, seed ${r.crowd.seed}` + slowestSecond(r) +
      `; CPU: service ${r.serviceCpuSeconds.map(cpu => `${num(cpu, 1)} s`).join(' + ')}` +
      (r.postgresCpuSeconds !== undefined ? `, PostgreSQL ${num(r.postgresCpuSeconds, 1)} s` : '') +
      `, the clients ${num(r.crowd.cpuSeconds, 1)} s (warm-up included)` +
      (r.transactionsPerRequest !== undefined ? `; PostgreSQL: ${num(r.transactionsPerRequest, 2)} transactions a request` : '') +
      pausesOf(r) +
      (r.serverErrors > 0 ? `; FAILED: ${r.serverErrors} answers 5xx` : ''),
    table: [CLASS_COLUMNS, ...r.classes.map(classRow)],
    left: [0]
  }))
}

function summaryLines (report) {
  const { service, machine } = report
  const mem = m => `${num(m.rss)} MB`
  return [
    `machine: ${machine.cpus} × ${machine.cpuModel}, ${num(machine.memoryGiB)} GiB, Node ${machine.node}, PostgreSQL ${machine.postgres}, load average ${machine.loadAverage.map(l => num(l, 2)).join(' ')} at start, ${(machine.loadAverageAtEnd ?? []).map(l => num(l, 2)).join(' ')} at end`,
    `profile: ${report.profile} (${report.settings.connections} connections, ${report.settings.duration} s after ${report.settings.warmup} s warm-up; ` +
      `varied traffic ${report.settings.crowd.connections} clients, ${report.settings.crowd.duration} s), revision ${report.revision}, ${report.startedAt}`,
    `start-up to first 200: ${num(service.fresh.startupMs)} ms on an empty database (migrations included)` +
      (service.restart !== undefined ? `, ${num(service.restart.startupMs)} ms on the seeded database` : ''),
    `service RSS: idle ${mem(service.fresh.idle)}` +
      service.seeded.map(s => `, after seeding ${s.talks} talks ${mem(s.memory)}`).join('') +
      `, peak ${num(service.peakMB)} MB` +
      (service.restart !== undefined ? `; idle after restart ${mem(service.restart.idle)}` : ''),
    `seeding: ${service.seeded.map(s => `${s.added} talks in ${num(s.seedSeconds, 1)} s (${num(s.seedRate)} talks/s) to ${s.talks}${s.databaseMB !== undefined ? `, database ${num(s.databaseMB)} MB` : ''}`).join('; ')}`,
    ...(report.results.some(isVaried) ? [`varied traffic: seed ${report.seed} (npm run bench -- --seed=${report.seed} draws the same requests)`] : []),
    ...(report.integrity !== undefined
      ? [`integrity: /talks holds ${report.integrity.talksFolder.items} items at ${report.integrity.talksFolder.positions} distinct positions`]
      : [])
  ]
}

/** Why a scenario has no figures, and the first error a measured one met (of each class, for the varied traffic). */
function notes (report) {
  return report.results.flatMap(r => [
    ...(r.reason !== undefined ? [`${r.id}: failed: ${r.reason}`] : []),
    ...(r.errorSample !== undefined ? [`${r.id} at ${r.talks} talks: first error ${r.errorSample}`] : []),
    ...(r.classes ?? []).filter(c => c.sample !== undefined).map(c => `${r.id} at ${r.talks} talks, ${c.id}: first unexpected answer (of ${c.unexpected}): ${c.sample}`),
    ...(r.warmUp?.sample !== undefined ? [`${r.id} at ${r.talks} talks, warming up: first unexpected answer ${r.warmUp.sample}`] : []),
    ...(r.rss !== undefined ? [`${r.id}: the service's RSS ${num(r.rss.beforeMB)} MB before the downloads, ${num(r.rss.peakMB)} MB at its peak during them: + ${num(r.rss.growthMB, 1)} MB`] : []),
    ...(r.commandRss !== undefined
      ? [`${r.id}: the command's peak RSS ${num(r.commandRss.peakMB)} MB` +
          (r.commandRss.growthMB !== undefined ? `, ${num(r.commandRss.baselineMB)} MB on one 1 kB File: + ${num(r.commandRss.growthMB, 1)} MB` : '')]
      : []),
    ...(r.metadataMB !== undefined ? [`${r.id}: its content/__metadata__.json is ${num(r.metadataMB, 1)} MB (an import reads at most 16 MiB of a JSON file)`] : []),
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

/** The report's parts in order, each a title and a table (or lines), for either form. */
function sections (report) {
  const varied = report.results.filter(isVaried)
  return [
    { title: REPEATED, table: [COLUMNS, ...report.results.filter(r => !isVaried(r)).map(row)], left: [0, 2] },
    ...(varied.length > 0 ? [{ title: VARIED, table: [COLUMNS, ...varied.map(row)], left: [0, 2] }, ...classTables(report)] : []),
    { table: scalingRows(repeatedPoints(report), 'one request repeated'), left: [0] },
    { table: scalingRows(variedPoints(report), 'varied traffic, by class'), left: [0] }
  ].filter(s => s.table.length > 0)
}

export function terminalReport (report) {
  const remarks = notes(report)
  return [
    ...summaryLines(report),
    ...sections(report).flatMap(s => ['', ...(s.title !== undefined ? [s.title] : []), ...textTable(s.table, s.left)]),
    ...(remarks.length > 0 ? ['', 'notes:', ...remarks.map(n => `  ${n}`)] : []),
    '',
    'targets:',
    ...report.targets.map(t => `  [${mark(t)}] ${t.target}: ${t.standing}`)
  ].join('\n')
}

export function markdownReport (report) {
  const remarks = notes(report)
  return [
    ...summaryLines(report).map(l => `- ${l}`),
    ...sections(report).flatMap(s => ['', ...(s.title !== undefined ? [`**${s.title}**`, ''] : []), ...markdownTable(s.table, s.left)]),
    ...(remarks.length > 0 ? ['', ...remarks.map(n => `- ${n}`)] : []),
    '',
    ...markdownTable([['target', 'standing', ''], ...report.targets.map(t => [t.target, t.standing, mark(t)])], [0, 1, 2])
  ].join('\n')
}
