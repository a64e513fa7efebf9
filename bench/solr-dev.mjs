#!/usr/bin/env node
// Benchmark of infra/solr-dev (not a test): indexing throughput for 100k small documents, then
// query latency (p50/p99) at that size. Starts its own server on a free 127.0.0.1 port with a
// temporary data directory and stops it (SIGTERM) at the end.
//
//   node bench/solr-dev.mjs              # 100 000 documents
//   SOLR_DEV_BENCH_DOCS=20000 node bench/solr-dev.mjs
import { execFile } from 'node:child_process'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const DOCS = Number(process.env.SOLR_DEV_BENCH_DOCS ?? 100_000)
const BATCH = 1000
const RUNS = 200

// A fixed pseudo-random sequence, so every run indexes the same documents.
let seed = 42
const rand = () => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed / 2147483648 }
const pick = list => list[Math.floor(rand() * list.length)]
const words = ('search solr lucene index query fastify node talk conference keynote workshop speaker schedule ' +
  'room track session python java rust typescript database cloud scale performance testing design api ' +
  'security community open source web mobile data science learning future history practice').split(' ')
const categories = ['talk', 'keynote', 'workshop', 'panel', 'lightning', 'poster', 'tutorial', 'meetup', 'demo', 'bof']

function doc (i) {
  const title = Array.from({ length: 3 + Math.floor(rand() * 4) }, () => pick(words)).join(' ')
  return {
    id: `doc-${i}`,
    title,
    body: Array.from({ length: 8 + Math.floor(rand() * 8) }, () => pick(words)).join(' '),
    category: pick(categories),
    tags: [pick(words), pick(words)],
    views: Math.floor(rand() * 10_000),
    price: Math.round(rand() * 10_000) / 100,
    published: new Date(Date.UTC(2020, 0, 1) + Math.floor(rand() * 5 * 365) * 86_400_000).toISOString()
  }
}

async function freePort () {
  return await new Promise((resolve, reject) => {
    const srv = createServer()
    srv.once('error', reject)
    srv.listen(0, '127.0.0.1', () => { const { port } = srv.address(); srv.close(() => resolve(port)) })
  })
}

function percentile (sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.floor(p / 100 * sorted.length))]
}

const dataDir = await mkdtemp(join(tmpdir(), 'solr-dev-bench-'))
const port = await freePort()
const base = `http://127.0.0.1:${port}/solr/bench`
await promisify(execFile)(join(root, 'infra/solr-dev/start'), ['--port', String(port), '--data', dataDir,
  '--core', `bench=${join(root, 'infra/solr-dev/test-configset')}`], { timeout: 300_000 })
const pid = Number((await readFile(join(dataDir, 'solr-dev.pid'), 'utf8')).trim())

async function post (path, body) {
  const res = await fetch(`${base}/${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
  if (res.status !== 200) throw new Error(`${path}: ${res.status} ${await res.text()}`)
}

try {
  console.log(`solr-dev benchmark: ${DOCS} documents, batches of ${BATCH}, ${RUNS} runs per query`)
  const t0 = performance.now()
  for (let i = 0; i < DOCS; i += BATCH) {
    await post('update', Array.from({ length: Math.min(BATCH, DOCS - i) }, (_, j) => doc(i + j)))
  }
  const t1 = performance.now()
  await post('update', { commit: {} })
  const t2 = performance.now()
  const indexing = (t1 - t0) / 1000
  console.log(`indexing: ${DOCS} docs in ${indexing.toFixed(1)} s = ${Math.round(DOCS / indexing)} docs/s; ` +
    `commit ${Math.round(t2 - t1)} ms; total ${Math.round(DOCS / ((t2 - t0) / 1000))} docs/s including the commit`)

  const queries = {
    'term (title:search)': { q: 'title:search' },
    'two terms, AND': { q: 'title:search AND body:lucene' },
    phrase: { q: 'body:"open source"' },
    'prefix (title:sea*)': { q: 'title:sea*' },
    'numeric range + fq': { q: 'views:[1000 TO 2000]', fq: 'category:talk' },
    'sort by date': { q: 'body:node', sort: 'published desc' },
    'facet on category and tags': { q: 'body:data', facet: 'true', 'facet.field': ['category', 'tags'], rows: 0 },
    'highlight title': { q: 'title:rust', hl: 'true', 'hl.fl': 'title' },
    'match all, page 100': { q: '*:*', start: 1000, rows: 10 }
  }
  const all = []
  for (const [name, params] of Object.entries(queries)) {
    const qs = new URLSearchParams()
    for (const [k, v] of Object.entries(params)) for (const one of [v].flat()) qs.append(k, String(one))
    const url = `${base}/select?${qs}`
    for (let i = 0; i < 20; i++) await (await fetch(url)).arrayBuffer() // warm-up
    const times = []
    let numFound = 0
    for (let i = 0; i < RUNS; i++) {
      const s = performance.now()
      const res = await fetch(url)
      const body = await res.json()
      times.push(performance.now() - s)
      numFound = body.response.numFound
    }
    times.sort((a, b) => a - b)
    all.push(...times)
    console.log(`${name.padEnd(30)} p50 ${percentile(times, 50).toFixed(2).padStart(7)} ms   p99 ${percentile(times, 99).toFixed(2).padStart(7)} ms   (numFound ${numFound})`)
  }
  all.sort((a, b) => a - b)
  console.log(`${'all queries'.padEnd(30)} p50 ${percentile(all, 50).toFixed(2).padStart(7)} ms   p99 ${percentile(all, 99).toFixed(2).padStart(7)} ms`)
} finally {
  process.kill(pid, 'SIGTERM')
  while (true) {
    try { process.kill(pid, 0) } catch { break }
    await new Promise(resolve => setTimeout(resolve, 50))
  }
  await rm(dataDir, { recursive: true, force: true })
}
