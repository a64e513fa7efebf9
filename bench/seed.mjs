/**
 * Seeds talks into /talks in bulk, with the rows the API would write: each
 * talk is validated by `checkWrite` (as a POST is), its content row is the
 * one `ContentStore.create` writes for a Member (one of 50 speakers), and
 * seven talks in ten are then published as a Manager would (the workflow's
 * `publish` state, `effective` set to the moment of publishing, `modified`
 * after `created`, two workflow history entries); the other three stay
 * private, so that the security filter has something to hide.
 *
 * The catalogue row of every talk is the service's own projection:
 * `indexableOf` (core/content/indexable.ts) turns the row into what the
 * indexes see, each index definition's `value` gives its column, and
 * `Catalog.searchableText` the words of `SearchableText`. A batch of talks
 * is one statement (content, history and catalogue rows, each one multi-row
 * INSERT) and one transaction, with the catalogue-changed notification the
 * store sends (caches of a running service hear of it).
 *
 * What this file restates because the store and the catalogue write one
 * object at a time (no bulk form to call): the content row's columns, the
 * folder's position counter (advanced by a whole batch), the history rows,
 * and the catalogue's tsvector weighting (title A, the rest B). One
 * statement per talk through `Catalog.upsertFrom` was tried: planning 500
 * CTEs costs as much as running them. See docs/performance.md, "Seeding".
 *
 * Run as its own process by run.mjs: `node bench/seed.mjs <target count>`,
 * with DATABASE_URL set. Prints one JSON line at the end.
 */
import { randomUUID } from 'node:crypto'
import { performance } from 'node:perf_hooks'
import { loadConfig } from '../dist/core/config/config.js'
import { column } from '../dist/core/catalog/catalog.js'
import { CATALOG_CHANGED } from '../dist/core/catalog/kept-results.js'
import { indexableOf } from '../dist/core/content/indexable.js'
import { CONTENT_COLUMNS, idFromTitle } from '../dist/core/content/rows.js'
import { Statement } from '../dist/core/content/statement.js'
import { checkWrite } from '../dist/core/content/validation.js'
import { INDEX_KINDS } from '../dist/core/query/index-kinds.js'
import { buildServer } from '../dist/app/server.js'
import { speakerOf, talkBody } from './talks.mjs'

// ~70 parameters a talk: 500 talks stay well under PostgreSQL's 65 535 per statement.
const BATCH = 500
/** Below this many new talks, dropping and rebuilding the catalogue's indexes costs more than it saves. */
const BULK_FROM = 5000
const MANAGER = 'admin'
const PUBLISH = 'publish'
/**
 * Talks whose number ends in 7, 8 or 9 stay private: 70 % published, the
 * share of issue 23's site (until then one in ten stayed private). Numbers
 * ending in 0 (`WORD_IN_TENTH_OF_TALKS`) are published.
 */
const isPublished = n => n % 10 < 7

const target = Number(process.argv[2])
if (!Number.isInteger(target) || target < 0) throw new Error('usage: node bench/seed.mjs <target number of talks>')

const app = await buildServer(loadConfig({ ...process.env, LOG_LEVEL: 'silent' }))
await app.ready()
const started = performance.now()
const { rows: [{ n: existing }] } = await app.db.query("SELECT count(*)::int AS n FROM content WHERE portal_type = 'talk'")
const parent = (await app.content.locate('/talks')).found
const type = app.contentTypes.get('talk')
const { workflow } = type
const published = workflow.transitions[PUBLISH].to

// Vocabularies are read once: every talk is checked against the same terms.
const vocabularies = new Map()
const context = {
  mode: 'create',
  stored: {},
  tokens: async name => {
    if (!vocabularies.has(name)) vocabularies.set(name, await app.vocabularies.tokens(name))
    return vocabularies.get(name)
  },
  imageMaxBytes: app.config.IMAGE_MAX_BYTES
}

/** Talk `n` as the store would hold it after its create (and its publication). */
async function talk (n, position) {
  const write = await checkWrite(type, talkBody(n), context)
  // As ContentStore.create: a field without a value is not stored.
  const data = Object.fromEntries(Object.entries(write.values).filter(([, v]) => v !== null))
  const speaker = speakerOf(n)
  const created = new Date()
  const id = idFromTitle(String(data.title))
  const obj = {
    uid: randomUUID(),
    parent_uid: parent.obj.uid,
    id,
    path: `${parent.obj.path}/${id}`,
    portal_type: type.name,
    review_state: workflow.initial,
    owner: speaker,
    creators: [speaker],
    local_roles: {},
    position,
    created,
    modified: created,
    data
  }
  const history = [{ seq: 0, action: null, actor: speaker, review_state: workflow.initial, time: created }]
  if (isPublished(n)) {
    // As Transitions.take: the first publication sets `effective`; the change is strictly later than the create.
    const modified = new Date(created.getTime() + 1)
    obj.review_state = published
    obj.data = { ...data, effective: modified.toISOString() }
    obj.modified = modified
    history.push({ seq: 1, action: PUBLISH, actor: MANAGER, review_state: published, time: modified })
  }
  return { obj, history }
}

/** The batch's first position: the folder's counter, advanced by the whole batch in one statement. */
async function positions (q, count) {
  const { rows: [{ first }] } = await q.query(`INSERT INTO folder_positions (parent_uid, next)
    VALUES ($1, (SELECT COALESCE(max(position), -1) + 1 FROM content WHERE parent_uid = $1) + $2)
    ON CONFLICT (parent_uid) DO UPDATE SET next = folder_positions.next + $2 RETURNING next - $2 AS first`, [parent.obj.uid, count])
  return first
}

/**
 * The catalogue's columns, in the order of the Catalog's own (the registry's
 * indexes), each value cast to its column's type as `Catalog.upsertFrom` does.
 */
const indexes = [...app.contentTypes.indexes.values()]
const catalogColumns = `uid, searchable, ${indexes.map(column).join(', ')}`

/** One statement that writes the batch: content rows, history rows and catalogue rows, each a multi-row INSERT. */
function batchStatement (talks) {
  const statement = new Statement()
  const { p } = statement
  const values = (list) => `(${list.join(', ')})`
  const content = ({ obj: o }) => values([o.uid, o.parent_uid, o.id, o.path, o.portal_type, o.review_state, o.owner, o.creators,
    JSON.stringify(o.local_roles), o.position, o.created, o.modified, JSON.stringify(o.data), o.local_roles_block ?? false].map(p))
  const history = ({ obj, history }) => history.map(h => values([obj.uid, h.seq, h.action, h.actor, '', h.review_state, h.time].map(p)))
  const catalogue = ({ obj }) => {
    const indexable = indexableOf({ obj, lineage: [...parent.lineage, obj], type })
    const text = app.catalog.searchableText(type, obj.data)
    // The weighting of Catalog.upsertFrom: title words above the rest.
    return values([`${p(obj.uid)}::uuid`, `setweight(to_tsvector('simple', ${p(text.title)}), 'A') || setweight(to_tsvector('simple', ${p(text.rest)}), 'B')`,
      ...indexes.map(index => `${p(index.value(indexable) ?? null)}::${INDEX_KINDS[index.kind].sql.type}`)])
  }
  statement.with('talks', `INSERT INTO content (${CONTENT_COLUMNS}) VALUES ${talks.map(content).join(', ')} RETURNING uid`)
  statement.with('history', `INSERT INTO workflow_history (uid, seq, action, actor, comments, review_state, time) VALUES ${talks.flatMap(history).join(', ')}`)
  statement.with('catalogued', `INSERT INTO catalog (${catalogColumns}) VALUES ${talks.map(catalogue).join(', ')}`)
  return { sql: statement.sql('SELECT count(*)::int AS n FROM talks'), params: statement.params, count: talks.length }
}

/**
 * The catalogue's own secondary indexes (`Catalog.ddl`), by name. A seed that
 * at least doubles the talks drops them and has `Catalog.ensureSchema` build
 * them again at the end: one sort per index instead of an insert into ~35
 * indexes per row. (Should the seeder die meanwhile, the service's start
 * builds them again.)
 */
const catalogueIndexes = app.catalog.ddl().filter(part => part.kind === 'index').map(part => `"${part.name}"`)
const rebuildIndexes = target - existing >= Math.max(existing, BULK_FROM)
if (rebuildIndexes) await app.db.exec(catalogueIndexes.map(name => `DROP INDEX IF EXISTS ${name};`).join('\n'))

/** A batch ready to write: its positions taken (one short statement, as the store takes them), its rows built. */
async function prepare (from, count) {
  const first = await positions(app.db, count)
  return batchStatement(await Promise.all(Array.from({ length: count }, async (_, i) => await talk(from + i, first + i))))
}

async function write ({ sql, params, count }) {
  await app.db.transaction(async tx => {
    const { rows: [{ n }] } = await tx.query(sql, params)
    if (n !== count) throw new Error(`wrote ${n} of ${count} talks`)
    await app.db.notifications.notify(tx, CATALOG_CHANGED)
  })
}

// The next batch is built while the database writes the previous one.
let writing = Promise.resolve()
let analysedAt = existing
for (let from = existing; from < target; from += BATCH) {
  const batch = await prepare(from, Math.min(target, from + BATCH) - from)
  await writing
  // Plans (foreign-key checks included) are made from the statistics; without
  // fresh ones a growing table is planned as if it were empty (and this
  // PostgreSQL runs without autovacuum), so they are renewed as it doubles.
  if (from >= Math.max(2 * analysedAt, BATCH)) {
    await app.db.query('ANALYZE content, catalog, workflow_history')
    analysedAt = from
  }
  writing = write(batch)
  // Awaited before the next write (its failure ends the seed there); until then it must not count as unhandled.
  writing.catch(() => {})
}
await writing
if (rebuildIndexes) await app.catalog.ensureSchema(app.db, async (uids, q) => await app.content.indexables(uids, q))
await app.db.query('ANALYZE')
const seconds = (performance.now() - started) / 1000
await app.close()
const added = Math.max(0, target - existing)
console.log(JSON.stringify({ existing, target, added, seconds, rate: added / seconds }))
