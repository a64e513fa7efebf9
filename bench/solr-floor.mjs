/**
 * What the search server can do by itself with the service's own work, for
 * the Solr floors of a benchmark run (docs/performance.md):
 *
 *   node bench/solr-floor.mjs selects <solr url>
 *     The select requests the service sends for the bench's full-text
 *     queries (FULL_TEXT_QUERIES, anonymous), captured on the wire: the
 *     service's own code (buildServer, as the web process) runs here against
 *     a recording proxy in front of the search server. Prints the paths
 *     (`/solr/plone/select?…`) as JSON; the run replays them straight to the
 *     search server as `floor-solr-query`.
 *   node bench/solr-floor.mjs ingest <solr url> <core>
 *     Raw bulk ingest from one client: every object's Solr document, built by
 *     the service's own code (`SolrDocuments.build` of `indexables`), posted
 *     in batches of 1 000 into an emptied `core` (after a warm-up of up to
 *     5 000 of them, deleted again), then one commit. Only the
 *     posts are timed (building a batch happens between them, so that a
 *     million documents need not be held at once). Prints {count, seconds}
 *     as JSON (`floor-solr-ingest`).
 *
 * Both read DATABASE_URL and the service's other settings from the
 * environment, as the service does. Settings the service reads from the
 * database (Solr on, its search pattern) are the ones in force now.
 */
import { request as httpRequest, createServer } from 'node:http'
import { performance } from 'node:perf_hooks'
import { loadConfig } from '../dist/core/config/config.js'
import { SolrDocuments } from '../dist/core/solr/documents.js'
import { buildServer } from '../dist/app/server.js'
import { FULL_TEXT_QUERIES } from './talks.mjs'

const BATCH = 1000
const WARM_UP = 5000
const [command, solrUrl, core] = process.argv.slice(2)
const solr = new URL(solrUrl ?? '')

/** A proxy to the search server that keeps the path of every select it forwards. */
async function recordingProxy (selects) {
  const server = createServer((req, res) => {
    if (req.method === 'GET' && /\/select(\?|$)/.test(req.url)) selects.push(req.url)
    const upstream = httpRequest({ host: solr.hostname, port: solr.port, method: req.method, path: req.url, headers: req.headers }, answer => {
      res.writeHead(answer.statusCode, answer.headers)
      answer.pipe(res)
    })
    upstream.on('error', err => { res.writeHead(502); res.end(String(err)) })
    req.pipe(upstream)
  })
  await new Promise(resolve => server.listen(0, '127.0.0.1', resolve))
  return server
}

async function service (env) {
  const app = await buildServer(loadConfig({ ...process.env, LOG_LEVEL: 'silent', ...env }))
  await app.ready()
  return app
}

async function selects () {
  const captured = []
  const proxy = await recordingProxy(captured)
  const app = await service({ SOLR_HOST: '127.0.0.1', SOLR_PORT: String(proxy.address().port) })
  const paths = []
  try {
    for (const text of FULL_TEXT_QUERIES) {
      captured.length = 0
      const res = await app.inject({ method: 'GET', url: `/@search?SearchableText=${encodeURIComponent(text)}`, headers: { accept: 'application/json' } })
      if (res.statusCode !== 200 || res.headers['x-search-engine'] !== 'solr') {
        throw new Error(`@search for '${text}' answered ${res.statusCode} from ${res.headers['x-search-engine']} (${res.headers['x-search-fallback'] ?? ''}), not from Solr`)
      }
      if (captured.length !== 1) throw new Error(`@search for '${text}' sent ${captured.length} selects, not one: ${captured.join(' ')}`)
      paths.push(captured[0])
    }
  } finally {
    await app.close()
    proxy.close()
  }
  return paths
}

async function post (path, body) {
  const res = await fetch(new URL(path, solr), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
  if (!res.ok) throw new Error(`${path} answered ${res.status}: ${(await res.text()).slice(0, 300)}`)
}

async function ingest () {
  const app = await service({})
  const update = `/solr/${core}/update`
  let count = 0
  let seconds = 0
  /** Only the search server's work is timed: a request and its answer. */
  const timed = async body => {
    const started = performance.now()
    await post(update, body)
    seconds += (performance.now() - started) / 1000
  }
  try {
    const { rows } = await app.db.query("SELECT uid FROM content WHERE path <> '/' ORDER BY path")
    const builder = new SolrDocuments(app.contentTypes)
    const batch = async i => {
      const indexables = await app.content.indexables(rows.slice(i, i + BATCH).map(r => r.uid))
      return [...indexables.values()].map(({ type, indexable }) => builder.build(type, indexable, null))
    }
    // The search server's JIT is warm for the service's reindex that follows: the floor is measured warm too.
    for (let i = 0; i < Math.min(rows.length, WARM_UP); i += BATCH) await post(update, await batch(i))
    await post(update, { delete: { query: '*:*' }, commit: {} })
    for (let i = 0; i < rows.length; i += BATCH) {
      const documents = await batch(i)
      await timed(documents)
      count += documents.length
    }
    await timed({ commit: {} })
  } finally {
    await app.close()
  }
  return { count, seconds }
}

const commands = { selects, ingest }
if (commands[command] === undefined) throw new Error('usage: node bench/solr-floor.mjs selects <solr url> | ingest <solr url> <core>')
console.log(JSON.stringify(await commands[command]()))
