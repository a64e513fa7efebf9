/**
 * What reading the largest inputs the service accepts costs on this machine
 * (docs/performance.md, "Bounded work per request"): each of JSON.parse, the
 * untrusted-input walk, sanitize-html and the image walks in one go, as the
 * service ran them before issue 22, and the longest the event loop is held
 * when the service reads the same input its way now (bounded, in slices).
 *
 *   npm run build && node bench/costs.mjs
 *
 * Each figure is the best of five runs (ms); "held" is the longest delay of
 * the event loop while the service's reading ran (monitorEventLoopDelay, 1 ms).
 */
import { monitorEventLoopDelay, performance } from 'node:perf_hooks'
import { setTimeout as sleep } from 'node:timers/promises'
import { crc32, deflateSync } from 'node:zlib'
import sanitizeHtml from 'sanitize-html'
import { SMALL_JPEG, hostileWrites } from './hostile.mjs'

const dist = new URL('../dist/', import.meta.url)
const { parseJsonBody } = await import(new URL('core/security/json-body.js', dist))
const { untrustedJsonProblems } = await import(new URL('core/security/untrusted-input.js', dist))
const { toRichText, markupProblem } = await import(new URL('core/content/richtext.js', dist))
const { checkImageStructure } = await import(new URL('core/content/image/structure.js', dist))

const RUNS = 5
const MiB = 2 ** 20
const CONTENT_BODY = 8 * MiB / 3 * 4 + MiB

/** The best time of `fn` over RUNS runs (ms). */
async function best (fn) {
  let fastest = Infinity
  for (let i = 0; i < RUNS; i++) {
    const started = performance.now()
    await fn()
    fastest = Math.min(fastest, performance.now() - started)
  }
  return fastest
}

/** The longest hold of the event loop while `fn` runs, best of RUNS (ms). */
async function held (fn) {
  let least = Infinity
  for (let i = 0; i < RUNS; i++) {
    const histogram = monitorEventLoopDelay({ resolution: 1 })
    histogram.enable()
    await sleep(5)
    await fn().catch(() => {})
    await sleep(5)
    histogram.disable()
    least = Math.min(least, histogram.max / 1e6)
  }
  return least
}

const rows = []
const row = (what, size, once, bounded) => rows.push({ what, size, once, bounded })
const mib = bytes => `${(bytes / MiB).toFixed(1)} MiB`
const fill = (unit, length) => unit.repeat(Math.floor(length / unit.length))

// JSON bodies at the largest size of their route: what JSON.parse and the walk cost in one go, and held now.
const bodies = {
  'an object with its image (one long string)': JSON.stringify({ '@type': 'talk', title: 't', image: { data: 'A'.repeat(CONTENT_BODY - 100) } }),
  'the largest @import (1 000 markup-heavy talks)': hostileWrites().find(w => w.path.endsWith('@import')).template,
  'an @import of 200 000 short strings': JSON.stringify({ items: Array.from({ length: 2000 }, () => Object.fromEntries(Array.from({ length: 99 }, (_, i) => [`k${i}`, 'x'.repeat(70)]))) }),
  'a string of escapes filling an object body': `{"description": "${'\\n'.repeat((CONTENT_BODY - 40) / 2)}"}`
}
for (const [what, text] of Object.entries(bodies)) {
  const bounds = { values: what.includes('@import') ? 200_000 : 10_000 }
  const once = await best(async () => untrustedJsonProblems(JSON.parse(text)))
  const bounded = await held(async () => await parseJsonBody(text, bounds))
  row(`JSON.parse and the untrusted-input walk: ${what}`, mib(text.length), once, bounded)
}

// Rich text: the examples in one go (then refused before parsing), and the worst accepted.
const allowed = {
  allowedTags: [...sanitizeHtml.defaults.allowedTags, 'img', 'h1', 'h2', 'span'],
  allowedAttributes: { ...sanitizeHtml.defaults.allowedAttributes, '*': ['class', 'id', 'title', 'lang'], img: ['src', 'alt', 'width', 'height'] },
  allowedSchemes: ['http', 'https', 'mailto', 'tel']
}
const markups = {
  '20 000 nested <div>s': ['<div>'.repeat(20_000), false],
  '1 MiB of empty <em>s': [fill('<em></em>', MiB), false],
  'the markup limit: 63 <div>s, then empty <em>s': ['<div>'.repeat(63) + fill('<em></em>', 32_000 - 315), true],
  'the markup limit: stray </p>s under 63 <div>s': ['<div>'.repeat(63) + fill('</p>', 32_000 - 315), true],
  'the markup limit: links with attributes': [fill('<a href="https://example.org/a" title="t">x</a>', 32_000), true]
}
for (const [what, [markup, accepted]] of Object.entries(markups)) {
  const once = await best(async () => sanitizeHtml(markup, allowed))
  const bounded = await held(async () => { if (markupProblem(markup, 2000) === null) toRichText(markup) })
  row(`sanitize-html: ${what}${accepted ? '' : ' (refused now)'}`, `${markup.length} chars`, once, bounded)
}

// Images of IMAGE_MAX_BYTES whose structure is a million tiny parts.
const pngChunk = (type, data) => {
  const typed = Buffer.concat([Buffer.from(type, 'latin1'), data])
  const length = Buffer.alloc(4)
  length.writeUInt32BE(data.length)
  const crc = Buffer.alloc(4)
  crc.writeUInt32BE(crc32(typed))
  return Buffer.concat([length, typed, crc])
}
const header = (width, height, depth, colour) => {
  const data = Buffer.alloc(13)
  data.writeUInt32BE(width, 0)
  data.writeUInt32BE(height, 4)
  data[8] = depth
  data[9] = colour
  return pngChunk('IHDR', data)
}
const SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])
const size = 8 * MiB
const images = {
  'a PNG of empty ancillary chunks': Buffer.concat([SIGNATURE, header(1, 1, 8, 2), Buffer.alloc(Math.floor((size - 100) / 12) * 12, pngChunk('tEXt', Buffer.alloc(0))), pngChunk('IDAT', deflateSync(Buffer.alloc(4))), pngChunk('IEND', Buffer.alloc(0))]),
  'a JPEG of empty comment segments': Buffer.concat([SMALL_JPEG.subarray(0, 2), Buffer.alloc(Math.floor((size - SMALL_JPEG.length) / 4) * 4, Buffer.from([0xff, 0xfe, 0x00, 0x02])), SMALL_JPEG.subarray(2)]),
  'a PNG of 50 megapixels (6 MB of pixel data inflated)': Buffer.concat([SIGNATURE, header(5000, 10_000, 1, 0), pngChunk('IDAT', deflateSync(Buffer.alloc(10_000 * 626))), pngChunk('IEND', Buffer.alloc(0))])
}
for (const [what, bytes] of Object.entries(images)) {
  // The walk in one go: as the service walked before issue 22 (no slices: a pacer that is never due).
  const once = await best(async () => await checkImageStructure(bytes, { due: () => false, pace: async () => {}, yield: async () => {} }))
  const bounded = await held(async () => await checkImageStructure(bytes))
  row(`image walk: ${what}`, mib(bytes.length), once, bounded)
}

const format = ms => ms.toFixed(1)
console.log('| input | size | in one go (ms) | held now (ms) |\n|---|---:|---:|---:|')
for (const r of rows) console.log(`| ${r.what} | ${r.size} | ${format(r.once)} | ${format(r.bounded)} |`)
