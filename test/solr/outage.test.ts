import { execFile } from 'node:child_process'
import { resolve } from 'node:path'
import { promisify } from 'node:util'
import t from 'tap'
import { progressPrinter } from '../../app/progress.js'
import { talkBody } from '../helper.js'
import { buildWithSolr, sleep, solrDocs, startSolr } from './helper.js'

const run = promisify(execFile)
const root = resolve(import.meta.dirname, '../..')

const solr = await startSolr(t)
const { app, call, tokenFor, databaseUrl } = await buildWithSolr(t, solr, { SOLR_INDEX_TIMEOUT: '3' })
const admin = await tokenFor('admin')
const solrEnv = { SOLR_ACTIVE: 'true', SOLR_PORT: String(solr.port), SOLR_BASE: '/solr/plone' }

/** `npm run solr -- <args>` on this test's database and Solr, through the same TypeScript loader as the tests. */
async function cli (...args: string[]): Promise<{ code: number, stdout: string }> {
  const loader = process.execArgv.filter(a => a.includes('@tapjs/typescript'))
  try {
    const { stdout } = await run(process.execPath, [...loader, 'app/cli.ts', ...args], {
      cwd: root, env: { ...process.env, ...solrEnv, DATABASE_URL: databaseUrl, LOG_LEVEL: 'silent' }
    })
    return { code: 0, stdout }
  } catch (err) {
    const e = err as { code: number, stdout: string }
    return { code: e.code, stdout: e.stdout }
  }
}

const pending = async (): Promise<number> => (await app.db.query('SELECT 1 FROM index_outbox')).rowCount

t.test('Solr stopped during 200 writes: every write succeeds, the outbox delivers them when Solr is back', async t => {
  const before: string[] = []
  for (let i = 0; i < 20; i++) {
    const res = await call('POST', '/talks', talkBody({ title: `Before ${i}`, speaker: 'Old Speaker' }), admin)
    before.push(res.json()['@id'].replace(/^https?:\/\/[^/]+/, ''))
  }
  await solr.stop()

  const statuses: number[] = []
  const started = Date.now()
  const during: string[] = []
  for (let i = 0; i < 100; i++) {
    const res = await call('POST', '/talks', talkBody({ title: `During ${i}` }), admin)
    statuses.push(res.statusCode)
    during.push(res.json()['@id'].replace(/^https?:\/\/[^/]+/, ''))
  }
  for (const path of before) statuses.push((await call('PATCH', path, { speaker: 'New Speaker' }, admin)).statusCode)
  for (const path of before) statuses.push((await call('POST', `${path}/@workflow/publish`, {}, admin)).statusCode)
  for (const path of during.slice(10, 50)) statuses.push((await call('PATCH', path, { description: 'Changed while Solr was down' }, admin)).statusCode)
  // Deleted during the outage: one indexed before it (must be unindexed), one never indexed (its index op becomes an unindex).
  for (const path of [...before.slice(0, 10), ...during.slice(0, 10)]) statuses.push((await call('DELETE', path, undefined, admin)).statusCode)
  t.equal(statuses.length, 200)
  t.same(statuses.filter(s => s < 200 || s >= 300), [], 'all 200 writes answered 2xx')
  t.comment(`${Date.now() - started} ms for the 200 writes while Solr was down`)
  t.ok(app.solr.indexer.unavailable, 'the indexer knows Solr is down')
  t.ok(await pending() > 0, 'the outbox keeps the operations')

  const search = await call('GET', '/@search?SearchableText=during')
  t.equal(search.statusCode, 200, 'search still answers')
  t.equal(search.headers['x-search-engine'], 'catalogue', 'answered by the catalogue')

  await solr.start()
  const deadline = Date.now() + 90_000
  while (await pending() > 0 && Date.now() < deadline) await sleep(200)
  t.equal(await pending(), 0, 'the background loop drained the outbox')
  t.notOk(app.solr.indexer.unavailable)

  t.same(await app.solr.maintenance.sync({ check: true }), { missing: [], orphan: [], stale: [] }, 'zero drift')
  t.equal((await solrDocs(solr, 'speaker:"Old Speaker"')).length, 0, 'updates made during the outage arrived')
  t.equal((await solrDocs(solr, 'speaker:"New Speaker" AND review_state:published')).length, 10, 'and transitions; deleted ones are gone')
  t.equal((await solrDocs(solr, 'Title:during')).length, 90)
  t.equal((await solrDocs(solr, 'description:"changed while solr was down"')).length, 40)

  const clean = await cli('sync', '--check')
  t.same(clean, { code: 0, stdout: 'missing 0, orphan 0, stale 0\n' }, 'sync --check: zero drift, exit code 0')
  await solr.post('plone/update', { delete: { query: 'Title:before' } }, { commit: 'true' })
  const drift = await cli('sync', '--check')
  t.same(drift, { code: 1, stdout: 'missing 10, orphan 0, stale 0\n' }, 'drift: reported, exit code 1')
  t.equal((await cli('sync')).code, 0, 'sync repairs')
  t.equal((await cli('sync', '--check')).code, 0)
})

t.test('the CLI: usage, and a progress bar only on a terminal', async t => {
  t.equal((await cli('nonsense')).code, 2)
  t.match((await cli('--help')).stdout, /usage: npm run solr -- <reindex\|sync\|clear\|schema>/)
  const reindex = await cli('reindex', '--type', 'talk')
  t.equal(reindex.code, 0)
  t.match(reindex.stdout, /^reindex: 0\/100 \(0%\)\nreindex: 100\/100 \(100%\)\nreindexed 100 objects\n$/, 'plain lines when not a terminal')
  const written: string[] = []
  const bar = progressPrinter('reindex', { isTTY: true, write: (s: string) => written.push(s) })
  bar(0, 4)
  bar(2, 4)
  bar(4, 4)
  t.same(written, [
    '\rreindex [------------------------------] 0% 0/4',
    '\rreindex [###############---------------] 50% 2/4',
    '\rreindex [##############################] 100% 4/4\n'
  ], 'a bar redrawn in place on a terminal')
  t.match((await cli('schema', '--check')).stdout, 'infra/solr/conf is up to date\nlive core: missing fields none; unknown fields none\n')
})
