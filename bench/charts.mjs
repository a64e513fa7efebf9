/**
 * The run's charts as SVG files in its results folder, drawn here (no chart
 * library): how each scenario's p99 grows with the number of talks (both
 * axes logarithmic), the same for each class of the varied traffic, and
 * each scenario's share of its floor at each size.
 */
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { variedPoints } from './report.mjs'

const COLOURS = ['#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd', '#8c564b', '#e377c2', '#7f7f7f', '#bcbd22', '#17becf',
  '#393b79', '#637939', '#8c6d31', '#843c39', '#7b4173', '#3182bd', '#e6550d', '#31a354', '#756bb1', '#636363']
const FONT = 'font-family="sans-serif" font-size="12"'

const escape = text => String(text).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;')
const text = (x, y, content, attrs = '') => `<text x="${x.toFixed(1)}" y="${y.toFixed(1)}" ${attrs}>${escape(content)}</text>`
const line = (x1, y1, x2, y2, attrs) => `<line x1="${x1.toFixed(1)}" y1="${y1.toFixed(1)}" x2="${x2.toFixed(1)}" y2="${y2.toFixed(1)}" ${attrs}/>`
const svg = (width, height, body) =>
  `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" ${FONT}>\n` +
  `<rect width="${width}" height="${height}" fill="white"/>\n${body.join('\n')}\n</svg>\n`

/** Powers of ten covering [min, max], with 2 and 5 between them when there are few. */
function logTicks (min, max) {
  const ticks = []
  for (let e = Math.floor(Math.log10(min)); e <= Math.ceil(Math.log10(max)); e++) {
    for (const m of [1, 2, 5]) ticks.push(m * 10 ** e)
  }
  const inside = ticks.filter(t => t >= min / 1.0001 && t <= max * 1.0001)
  return inside.length > 8 ? inside.filter(t => Math.log10(t) % 1 === 0) : inside
}

const label = n => (n >= 1e6 ? `${n / 1e6}M` : n >= 1e3 ? `${n / 1e3}k` : String(n))

/**
 * A line chart on log–log axes: `series` is [{name, points: [[x, y], …]}].
 * A series with one point is drawn as a dot.
 */
export function logLogChart ({ title, xTitle, yTitle, series, width = 900, height = 520, legendWidth = 300 }) {
  const m = { left: 70, right: legendWidth + 20, top: 40, bottom: 50 }
  const xs = series.flatMap(s => s.points.map(p => p[0]))
  const ys = series.flatMap(s => s.points.map(p => p[1])).filter(y => y > 0)
  if (xs.length === 0 || ys.length === 0) return svg(width, 80, [text(20, 40, `${title}: nothing measured`)])
  // One size only still needs a span: a decade around it.
  const [x0, x1] = Math.min(...xs) === Math.max(...xs) ? [Math.min(...xs) / 3, Math.max(...xs) * 3] : [Math.min(...xs), Math.max(...xs)]
  const [y0, y1] = [Math.min(...ys) / 1.5, Math.max(...ys) * 1.5]
  const px = x => m.left + (Math.log10(x) - Math.log10(x0)) / (Math.log10(x1) - Math.log10(x0)) * (width - m.left - m.right)
  const py = y => height - m.bottom - (Math.log10(y) - Math.log10(y0)) / (Math.log10(y1) - Math.log10(y0)) * (height - m.top - m.bottom)
  const body = [text(m.left, 22, title, 'font-size="15" font-weight="bold"')]
  for (const t of logTicks(y0, y1)) {
    body.push(line(m.left, py(t), width - m.right, py(t), 'stroke="#e5e5e5"'), text(m.left - 6, py(t) + 4, label(t), 'text-anchor="end"'))
  }
  for (const t of [...new Set(xs)]) {
    body.push(line(px(t), m.top, px(t), height - m.bottom, 'stroke="#e5e5e5"'), text(px(t), height - m.bottom + 16, label(t), 'text-anchor="middle"'))
  }
  body.push(line(m.left, height - m.bottom, width - m.right, height - m.bottom, 'stroke="black"'), line(m.left, m.top, m.left, height - m.bottom, 'stroke="black"'))
  body.push(text((m.left + width - m.right) / 2, height - 12, xTitle, 'text-anchor="middle"'))
  body.push(text(16, (m.top + height - m.bottom) / 2, yTitle, `text-anchor="middle" transform="rotate(-90 16 ${(m.top + height - m.bottom) / 2})"`))
  series.forEach((s, i) => {
    const colour = COLOURS[i % COLOURS.length]
    const points = s.points.filter(p => p[1] > 0).sort((a, b) => a[0] - b[0])
    if (points.length > 1) body.push(`<polyline fill="none" stroke="${colour}" stroke-width="2" points="${points.map(p => `${px(p[0]).toFixed(1)},${py(p[1]).toFixed(1)}`).join(' ')}"/>`)
    for (const p of points) body.push(`<circle cx="${px(p[0]).toFixed(1)}" cy="${py(p[1]).toFixed(1)}" r="3" fill="${colour}"/>`)
    const ly = m.top + i * 17
    body.push(line(width - legendWidth, ly, width - legendWidth + 18, ly, `stroke="${colour}" stroke-width="3"`), text(width - legendWidth + 24, ly + 4, s.name))
  })
  return svg(width, Math.max(height, m.top + series.length * 17 + 10), body)
}

/**
 * Horizontal bars: one group per row (`rows`: [{name, values: [{key, value}]}]),
 * one bar per key (coloured by key), values as percentages, with dashed
 * marks at `marks` (e.g. the targets' shares).
 */
export function barChart ({ title, rows, keys, keyTitle, marks = [], width = 900 }) {
  const m = { left: 330, right: 60, top: 60, bottom: 30 }
  const bar = 12
  const groupHeight = keys.length * bar + 8
  const height = m.top + rows.length * groupHeight + m.bottom
  const max = Math.max(1, ...rows.flatMap(r => r.values.map(v => v.value)), ...marks.map(mk => mk.value))
  const px = v => m.left + v / max * (width - m.left - m.right)
  const body = [text(10, 22, title, 'font-size="15" font-weight="bold"')]
  keys.forEach((key, i) => {
    const x = m.left + i * 110
    body.push(`<rect x="${x}" y="32" width="12" height="12" fill="${COLOURS[i % COLOURS.length]}"/>`, text(x + 16, 43, `${label(key)} ${keyTitle}`))
  })
  rows.forEach((row, r) => {
    const y = m.top + r * groupHeight
    body.push(text(m.left - 8, y + groupHeight / 2, row.name, 'text-anchor="end"'))
    for (const { key, value } of row.values) {
      const k = keys.indexOf(key)
      const by = y + k * bar
      body.push(`<rect x="${m.left}" y="${by}" width="${Math.max(0.5, px(value) - m.left).toFixed(1)}" height="${bar - 2}" fill="${COLOURS[k % COLOURS.length]}"/>`)
      body.push(text(px(value) + 4, by + bar - 3, `${value < 10 ? value.toFixed(1) : value.toFixed(0)} %`, 'font-size="10"'))
    }
  })
  for (const mark of marks) {
    body.push(line(px(mark.value), m.top - 6, px(mark.value), height - m.bottom, 'stroke="black" stroke-dasharray="4 3"'),
      text(px(mark.value), height - m.bottom + 14, mark.label, 'text-anchor="middle" font-size="10"'))
  }
  body.push(line(m.left, m.top - 6, m.left, height - m.bottom, 'stroke="black"'))
  return svg(width, height, body)
}

/** Writes p99-by-talks.svg, p99-by-talks-varied.svg (when the run had varied traffic) and ratio-to-floor.svg into `dir`; answers their names. */
export function writeCharts (report, dir) {
  const measured = report.results.filter(r => r.status === 'measured')
  // The varied traffic's p99 is its classes', on a chart of their own.
  const ids = [...new Set(measured.filter(r => r.traffic !== 'varied').map(r => r.id))]
  // One point a size: the floor measured before and after a size's scenarios counts once (its first measurement).
  const onePerSize = records => records.filter((r, i) => records.findIndex(o => o.talks === r.talks) === i)
  const latencies = ids
    .map(id => ({ name: id, points: onePerSize(measured.filter(r => r.id === id && r.latency.p99 !== null)).map(r => [r.talks, r.latency.p99]) }))
    .filter(s => s.points.length > 0)
  writeFileSync(join(dir, 'p99-by-talks.svg'), logLogChart({ title: 'p99 by number of talks (one request repeated)', xTitle: 'talks (log)', yTitle: 'p99 ms (log)', series: latencies }))
  const classes = variedPoints(report)
  const varied = [...new Set(classes.map(p => p.key))].map(key => {
    const points = classes.filter(p => p.key === key)
    return { name: points[0].name, points: points.map(p => [p.talks, p.p99]) }
  })
  if (varied.length > 0) {
    writeFileSync(join(dir, 'p99-by-talks-varied.svg'), logLogChart({ title: 'p99 by number of talks, varied traffic, by class', xTitle: 'talks (log)', yTitle: 'p99 ms (log)', series: varied, width: 1200, legendWidth: 500 }))
  }
  const compared = measured.filter(r => r.ratio !== undefined)
  const sizes = [...new Set(compared.map(r => r.talks))].sort((a, b) => a - b)
  const rows = [...new Set(compared.map(r => r.id))].map(id => ({
    name: `${id} / ${compared.find(r => r.id === id).floorId}`,
    values: compared.filter(r => r.id === id).map(r => ({ key: r.talks, value: r.ratio * 100 }))
  }))
  writeFileSync(join(dir, 'ratio-to-floor.svg'), barChart({
    title: 'share of the floor (same run, same size)',
    rows,
    keys: sizes,
    keyTitle: 'talks',
    marks: [{ value: 25, label: '25 %' }, { value: 40, label: '40 %' }, { value: 50, label: '50 %' }, { value: 70, label: '70 %' }, { value: 80, label: '80 %' }, { value: 100, label: 'floor' }]
  }))
  return ['p99-by-talks.svg', ...(varied.length > 0 ? ['p99-by-talks-varied.svg'] : []), 'ratio-to-floor.svg']
}
