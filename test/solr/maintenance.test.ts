import t from 'tap'
import type { Located } from '../../core/content/rows.js'
import { checkWrite } from '../../core/content/validation.js'
import { talkBody, type TestApp } from '../helper.js'
import { buildWithSolr, solrDocs, startSolr } from './helper.js'

const solr = await startSolr(t)

/** What `/talks` and `/talks/*` hold, by UID. */
async function catalogueUids (app: TestApp['app']): Promise<string[]> {
  const { rows } = await app.db.query<{ uid: string }>("SELECT uid FROM content WHERE path <> '/' ORDER BY uid")
  return rows.map(r => r.uid)
}

t.test('reindex of 10,000 talks, in batches with progress and a final commit', async t => {
  // Seeded through the ContentStore, as the API writes them, with Solr off (nothing recorded).
  const { app } = await buildWithSolr(t, solr, { SOLR_ACTIVE: 'false' })
  const admin = { userId: 'admin', fullname: null, roles: ['Manager'] }
  const talks = (await app.content.locate('/talks')).found!
  const folderAt = async (path: string): Promise<Located> => (await app.content.locate(path)).found!
  const folderType = app.contentTypes.get('folder')!
  const talkType = app.contentTypes.get('talk')!
  const ctx = { mode: 'create' as const, stored: {}, tokens: async (name: string) => await app.vocabularies.tokens(name), imageMaxBytes: 1e6, fileMaxBytes: 1e6 }
  const FOLDERS = 20
  const PER_FOLDER = 500
  const seeding = Date.now()
  await Promise.all(Array.from({ length: FOLDERS }, async (_, f) => {
    const folder = await app.content.create(await folderAt('/talks'), folderType, await checkWrite(folderType, { title: `Track ${f}` }, ctx), admin)
    for (let i = 0; i < PER_FOLDER; i++) {
      await app.content.create(await folderAt(folder.obj.path), talkType, await checkWrite(talkType, talkBody({ title: `Talk ${f}-${i}` }), ctx), admin)
    }
  }))
  t.comment(`seeded ${FOLDERS * PER_FOLDER} talks in ${Date.now() - seeding} ms`)
  t.equal((await app.db.query('SELECT 1 FROM index_outbox WHERE uid <> $1', [talks.obj.uid])).rowCount, 0, 'nothing recorded while Solr is off')
  const lines: string[] = []
  const started = Date.now()
  const count = await app.solr.maintenance.reindex({ type: 'talk' }, (done, total) => { lines.push(`${done}/${total}`) })
  t.equal(count, FOLDERS * PER_FOLDER)
  t.comment(`reindexed ${count} talks in ${Date.now() - started} ms`)
  t.equal(lines.length, 11, 'one progress report per batch of 1,000, and the start')
  t.equal(lines[0], '0/10000')
  t.equal(lines.at(-1), '10000/10000')
  const answer = await solr.get('plone/select', { q: 'portal_type:talk', rows: 0 })
  t.equal(answer.body.response.numFound, 10_000, 'every talk is searchable after the final commit')
  t.equal((await solr.get('plone/select', { q: 'portal_type:folder', rows: 0 })).body.response.numFound, 0, '--type talk left the folders out')
  await app.solr.maintenance.clear()
  t.equal((await solr.get('plone/select', { q: '*:*', rows: 0 })).body.response.numFound, 0, 'clear empties the core')
})

t.test('sync finds missing, orphan and stale documents, and repairs them', async t => {
  const { app, call, tokenFor } = await buildWithSolr(t, solr)
  const admin = await tokenFor('admin')
  const uids: string[] = []
  for (const title of ['One', 'Two', 'Three']) uids.push((await call('POST', '/talks', talkBody({ title }), admin)).json().UID)
  const { maintenance } = app.solr
  let drift = await maintenance.sync({ check: true })
  t.same([drift.missing, drift.orphan, drift.stale], [[], [], []], 'no drift after indexed writes')

  // Drift made behind the service's back, as an outage or a manual change would.
  await solr.post('plone/update', { delete: { id: uids[0] } }, { commit: 'true' })
  await solr.post('plone/update', [{ UID: '00000000-0000-4000-8000-000000000000', portal_type: 'talk' }], { commit: 'true' })
  await app.db.query("UPDATE content SET modified = modified + interval '1 second' WHERE uid = $1", [uids[1]])
  drift = await maintenance.sync({ check: true })
  t.same(drift, { missing: [uids[0]], orphan: ['00000000-0000-4000-8000-000000000000'], stale: [uids[1]] })
  t.same(await maintenance.sync({ check: true }), drift, '--check changes nothing')

  const lines: string[] = []
  await maintenance.sync({}, (done, total) => { lines.push(`${done}/${total}`) })
  t.same(lines, ['0/3', '2/3', '3/3'])
  t.same(await maintenance.sync({ check: true }), { missing: [], orphan: [], stale: [] }, 'repaired')
  t.same((await solrDocs(solr, 'portal_type:*', { fl: 'UID', sort: 'UID asc' })).map(d => d.UID).filter(uid => uid !== undefined).sort(), await catalogueUids(app))
})

t.test('@solr-maintenance: Managers only, one streamed line per batch', async t => {
  const { call, tokenFor } = await buildWithSolr(t, solr)
  const admin = await tokenFor('admin')
  for (let i = 0; i < 3; i++) await call('POST', '/talks', talkBody({ title: `Talk ${i}` }), admin)
  t.equal((await call('POST', '/@solr-maintenance/reindex')).statusCode, 401, 'anonymous')
  t.equal((await call('POST', '/@solr-maintenance/reindex', undefined, await tokenFor('editor', ['Editor']))).statusCode, 403, 'not a Manager')
  t.equal((await call('POST', '/@solr-maintenance/nonsense', undefined, admin)).statusCode, 400)
  t.equal((await call('POST', '/@solr-maintenance/reindex?type=nonsense', undefined, admin)).statusCode, 400)

  const reindex = await call('POST', '/@solr-maintenance/reindex', undefined, admin)
  t.equal(reindex.statusCode, 200)
  t.match(reindex.headers['content-type'], /^text\/plain/)
  t.same(reindex.body.split('\n'), ['reindex: 0/4', 'reindex: 4/4', 'reindexed 4 objects', ''], 'the talks folder and three talks')

  await solr.post('plone/update', { delete: { query: '*:*' } }, { commit: 'true' })
  t.equal((await call('GET', '/@solr-maintenance/sync?check=1', undefined, admin)).body, 'missing 4, orphan 0, stale 0\ndrift\n')
  t.equal((await call('POST', '/@solr-maintenance/sync', undefined, admin)).body, 'sync: 0/4\nsync: 4/4\nmissing 4, orphan 0, stale 0 (repaired)\n')
  t.equal((await call('GET', '/@solr-maintenance/sync?check=1', undefined, admin)).body, 'missing 0, orphan 0, stale 0\n')
  t.match((await call('GET', '/@solr-maintenance/schema', undefined, admin)).body, 'stale files: none\nlive core: missing fields none; unknown fields none\n')
  t.equal((await call('POST', '/@solr-maintenance/clear', undefined, admin)).body, 'cleared\n')
  t.equal((await solr.get('plone/select', { q: '*:*', rows: 0 })).body.response.numFound, 0)
})
