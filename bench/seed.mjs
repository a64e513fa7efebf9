/**
 * Seeds talks into /talks through the service's own code, so that the rows
 * are exactly what the API writes: each talk is checked by `checkWrite` and
 * created by `ContentStore.create` (content row, catalogue row, workflow
 * history), then published by `Transitions.take` as a Manager would,
 * except every tenth, which stays private (the security filter must have
 * something to hide). What it saves over HTTP is the transport and one
 * commit per talk: the store runs on a database handle that puts a whole
 * batch of talks into one transaction.
 *
 * ContentStore.create finds a free id and the next position by scanning the
 * folder (no index serves either query; see docs/performance.md), which makes
 * seeding quadratic. The seeder adds two indexes that serve those queries
 * while it runs and drops them after: the rows written are the same, and the
 * service is measured on its own schema.
 *
 * Run as its own process by run.mjs: `node bench/seed.mjs <target count>`,
 * with DATABASE_URL set. Prints one JSON line at the end.
 */
import { performance } from 'node:perf_hooks'
import { loadConfig } from '../dist/core/config/config.js'
import { ContentStore } from '../dist/core/content/store.js'
import { Transitions } from '../dist/core/content/transitions.js'
import { Outbox } from '../dist/core/indexing/outbox.js'
import { buildServer } from '../dist/app/server.js'
import { checkWrite } from '../dist/core/content/validation.js'
import { talkBody } from './talks.mjs'

const BATCH = 250
const SPEAKERS = 50
const HELPER_INDEXES = [['bench_seed_position', '(parent_uid, position)'], ['bench_seed_id', '(parent_uid, id text_pattern_ops)']]
const ADMIN = { userId: 'admin', fullname: 'Administrator', roles: ['Manager'] }

/** The `Db` interface on one open transaction: the store's own transactions become part of it. */
function batchHandle (tx) {
  return { kind: 'postgres', query: tx.query, transaction: async fn => await fn(tx), exec: async sql => { await tx.query(sql) }, close: async () => {} }
}

const target = Number(process.argv[2])
if (!Number.isInteger(target) || target < 0) throw new Error('usage: node bench/seed.mjs <target number of talks>')

const app = await buildServer(loadConfig({ ...process.env, LOG_LEVEL: 'silent' }))
await app.ready()
const started = performance.now()
const { rows: [{ n: existing }] } = await app.db.query("SELECT count(*) AS n FROM content WHERE portal_type = 'talk'")
const parent = (await app.content.locate('/talks')).found
const type = app.contentTypes.get('talk')
await app.db.exec(HELPER_INDEXES.map(([name, definition]) => `CREATE INDEX IF NOT EXISTS ${name} ON content ${definition};`).join('\n'))
const context = { mode: 'create', stored: {}, tokens: async name => await app.vocabularies.tokens(name), imageMaxBytes: app.config.IMAGE_MAX_BYTES }

let analysedAt = existing
for (let from = existing; from < target; from += BATCH) {
  // Plans (foreign-key checks included) are made from the statistics; without
  // fresh ones a growing table is planned as if it were empty (and this
  // PostgreSQL runs without autovacuum), so they are renewed as it doubles.
  if (from >= Math.max(2 * analysedAt, BATCH)) {
    await app.db.query('ANALYZE content, catalog, workflow_history')
    analysedAt = from
  }
  const to = Math.min(target, from + BATCH)
  await app.db.transaction(async tx => {
    const handle = batchHandle(tx)
    const store = new ContentStore(handle, app.contentTypes, app.catalog, new Outbox(handle))
    const transitions = new Transitions(handle, store)
    for (let n = from; n < to; n++) {
      const write = await checkWrite(type, talkBody(n), context)
      const speaker = { userId: `speaker-${n % SPEAKERS}`, fullname: null, roles: ['Member'] }
      const created = await store.create(parent, type, write, speaker)
      if (n % 10 !== 9) await transitions.take(created, 'publish', ADMIN, '', {})
    }
  })
}
await app.db.exec(HELPER_INDEXES.map(([name]) => `DROP INDEX ${name};`).join('\n'))
await app.db.query('ANALYZE')
const seconds = (performance.now() - started) / 1000
await app.close()
console.log(JSON.stringify({ existing, target, added: Math.max(0, target - existing), seconds }))
