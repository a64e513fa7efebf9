import t from 'tap'
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { talkBody } from '../helper.js'
import { startSolrDev } from '../solr-dev/helper.js'
import { buildWithSolr, CONFIGSET, realTime, solrDocs, startSolr } from './helper.js'

const solr = await startSolr(t)

// Synchronous immediate (auto_commit, the default): visible right after the write, the outbox empty.
t.test('create, update, transition and delete reach Solr in the request', async t => {
  const { call, tokenFor, app } = await buildWithSolr(t, solr)
  const admin = await tokenFor('admin')
  const res = await call('POST', '/talks', talkBody({ title: 'Zürich Ümlauts', speaker: 'Ada Lovelace', details: { data: '<p>Analytical engines</p>', 'content-type': 'text/html' } }), admin)
  t.equal(res.statusCode, 201)
  const { UID: uid } = res.json()
  let [doc] = await solrDocs(solr, `UID:${uid}`)
  t.ok(doc, 'visible to searches right after the create')
  t.equal(doc.review_state, 'private')
  t.match(doc.created, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/, 'dates in UTC with Z')
  t.same(doc.audience, ['Beginner'], 'multi-valued fields as arrays')
  t.equal(doc.path_string, '/talks/zurich-umlauts')
  t.same((await solrDocs(solr, `UID:${uid} AND path_parents:"/talks" AND path_depth:2`)).map(d => d.UID), [uid], 'path_parents and path_depth')
  t.same((await solrDocs(solr, `UID:${uid} AND allowedRolesAndUsers:user$admin`)).map(d => d.UID), [uid], 'user$<id> for the owner of a private talk')
  for (const word of ['zurich', 'ANALYTICAL', 'lovelace', 'rest']) {
    t.same((await solrDocs(solr, `UID:${uid} AND SearchableText:${word}`)).map(d => d.UID), [uid], `SearchableText has "${word}" (title, details, speaker, description)`)
  }
  t.equal((await app.db.query('SELECT 1 FROM index_outbox')).rowCount, 0, 'the outbox is empty once Solr accepted')

  t.equal((await call('PATCH', '/talks/zurich-umlauts', { title: 'Renamed' }, admin)).statusCode, 204)
  ;[doc] = await solrDocs(solr, `UID:${uid}`)
  t.equal(doc.Title, 'Renamed')
  t.equal(doc.speaker, 'Ada Lovelace', 'a partial update keeps the other fields')
  t.equal(doc.description, 'How the REST API maps onto Fastify')

  t.equal((await call('POST', '/talks/zurich-umlauts/@workflow/publish', {}, admin)).statusCode, 200)
  ;[doc] = await solrDocs(solr, `UID:${uid}`)
  t.equal(doc.review_state, 'published')
  t.match(doc.effective, /Z$/)
  t.same((await solrDocs(solr, `UID:${uid} AND allowedRolesAndUsers:Anonymous`)).map(d => d.UID).includes(uid), true)

  t.equal((await call('DELETE', '/talks/zurich-umlauts', undefined, admin)).statusCode, 204)
  t.same(await solrDocs(solr, `UID:${uid}`), [], 'unindexed by the delete')
  t.equal((await app.db.query('SELECT 1 FROM index_outbox')).rowCount, 0)
})

t.test('deleting a folder unindexes everything inside it', async t => {
  const { call, tokenFor } = await buildWithSolr(t, solr)
  const admin = await tokenFor('admin')
  const folder = (await call('POST', '/talks', { '@type': 'folder', title: 'Track A' }, admin)).json()
  const talk = (await call('POST', '/talks/track-a', talkBody(), admin)).json()
  t.equal((await solrDocs(solr, `UID:${talk.UID}`)).length, 1)
  t.equal((await call('DELETE', '/talks/track-a', undefined, admin)).statusCode, 204)
  t.same(await solrDocs(solr, `UID:(${folder.UID} OR ${talk.UID})`), [])
})

t.test('atomic updates: a partial change never blanks the document; a cleared field is cleared', async t => {
  for (const [atomic, schemaKnown] of [[true, true], [false, true], [true, false]]) {
    await t.test(`atomic_updates=${atomic}, live schema ${schemaKnown ? 'read' : 'unknown (Solr was down at start)'}`, async t => {
      const { call, tokenFor, app } = await buildWithSolr(t, solr)
      const admin = await tokenFor('admin')
      await app.solrSettings.update({ atomic_updates: atomic })
      if (!schemaKnown) app.solr.fields = null
      const { UID: uid } = (await call('POST', '/talks', talkBody({ speaker: 'Grace Hopper', room: undefined }), admin)).json()
      t.equal((await call('PATCH', '/talks/fastify-for-plone-people', { speaker: null }, admin)).statusCode, 204)
      const [doc] = await solrDocs(solr, `UID:${uid}`)
      t.equal(doc.Title, 'Fastify for Plone people', 'untouched fields stay')
      t.same(doc.audience, ['Beginner'])
      t.equal(doc.portal_type, 'talk')
      t.notOk('speaker' in doc, 'the cleared field is gone')
      t.same((await solrDocs(solr, `UID:${uid} AND SearchableText:hopper`)), [], 'and so are its words')
      t.equal((await solrDocs(solr, `UID:${uid} AND SearchableText:fastify`)).length, 1, 'the other words stay searchable')
    })
  }
})

t.test('a field of the live core the service does not fill: atomic updates keep it, full documents drop it', async t => {
  // The generated configset with one field another writer fills, in a core of its own.
  const configset = await mkdtemp(join(tmpdir(), 'foreign-field-'))
  t.teardown(async () => { await rm(configset, { recursive: true, force: true }) })
  await cp(CONFIGSET, configset, { recursive: true })
  const schemaFile = join(configset, 'conf', 'schema.xml')
  const schema = await readFile(schemaFile, 'utf8')
  await writeFile(schemaFile, schema.replace('</schema>', '  <field name="rating" type="pint" indexed="true" stored="true" multiValued="false"/>\n</schema>'))
  const foreign = await startSolrDev(t, { cores: { plone: configset } })
  for (const atomic of [true, false]) {
    await t.test(`atomic_updates=${atomic}`, async t => {
      const { call, tokenFor, app } = await buildWithSolr(t, foreign)
      await app.solrSettings.update({ atomic_updates: atomic })
      t.ok(app.solr.fields?.has('rating'), 'the service knows the live core has the field')
      const admin = await tokenFor('admin')
      const { UID: uid, '@id': url } = (await call('POST', '/talks', talkBody(), admin)).json()
      t.equal((await foreign.post('plone/update', [{ UID: uid, rating: { set: 5 } }], { commit: 'true' })).status, 200)
      t.equal((await call('PATCH', new URL(url).pathname, { speaker: 'Grace Hopper' }, admin)).statusCode, 204)
      const [doc] = await solrDocs(foreign, `UID:${uid}`)
      t.equal(doc.speaker, 'Grace Hopper', 'the change reached Solr')
      if (atomic) t.equal(doc.rating, 5, 'the other writer\'s field stays')
      else t.notOk('rating' in doc, 'the full document replaced it (as documented)')
    })
  }
})

t.test('synchronous batched (commit_within): visible after commitWithin, without an explicit commit', async t => {
  const { call, tokenFor, app } = await buildWithSolr(t, solr, { SOLR_AUTO_COMMIT: 'false', SOLR_COMMIT_WITHIN: '1500' })
  const admin = await tokenFor('admin')
  const { UID: uid } = (await call('POST', '/talks', talkBody(), admin)).json()
  t.ok(await realTime(solr, uid), 'Solr accepted the document')
  t.same(await solrDocs(solr, `UID:${uid}`), [], 'not yet visible: no commit was sent')
  t.equal((await app.db.query('SELECT 1 FROM index_outbox')).rowCount, 0, 'delivered all the same')
  const deadline = Date.now() + 10_000
  while ((await solrDocs(solr, `UID:${uid}`)).length === 0 && Date.now() < deadline) await new Promise(resolve => setTimeout(resolve, 100))
  t.equal((await solrDocs(solr, `UID:${uid}`)).length, 1, 'visible after commitWithin')
})

t.test('auto_commit off without commit_within: Solr\'s own autoCommit decides', async t => {
  const { call, tokenFor } = await buildWithSolr(t, solr, { SOLR_AUTO_COMMIT: 'false' })
  const admin = await tokenFor('admin')
  const { UID: uid } = (await call('POST', '/talks', talkBody(), admin)).json()
  t.ok(await realTime(solr, uid), 'Solr has it')
  t.same(await solrDocs(solr, `UID:${uid}`), [], 'no commit was sent')
})

t.test('Solr inactive: writes record nothing (only the first start records the site\'s folder, for later)', async t => {
  const { call, tokenFor, app } = await buildWithSolr(t, solr, { SOLR_ACTIVE: 'false' })
  const { UID: uid } = (await call('POST', '/talks', talkBody(), await tokenFor('admin'))).json()
  const { rows } = await app.db.query<{ uid: string }>('SELECT uid FROM index_outbox')
  t.same(rows.map(r => r.uid), [(await app.content.locate('/talks')).found!.obj.uid])
  t.not(rows[0].uid, uid)
})

t.test('switched on later through the control panel: applies without a restart; sync brings in what came before', async t => {
  const { call, tokenFor, app } = await buildWithSolr(t, solr, { SOLR_ACTIVE: '', SOLR_PORT: '', SOLR_BASE: '' })
  const admin = await tokenFor('admin')
  const early = (await call('POST', '/talks', talkBody({ title: 'Before the switch' }), admin)).json()
  t.equal((await call('PATCH', '/@controlpanels/solr-controlpanel', { active: true, port: solr.port }, admin)).statusCode, 204)
  t.ok(app.solr.fields?.has('speaker'), 'the live schema was read on the change')
  const late = (await call('POST', '/talks', talkBody({ title: 'After the switch' }), admin)).json()
  t.equal((await solrDocs(solr, `UID:${late.UID}`)).length, 1, 'indexed at once')
  const deadline = Date.now() + 10_000
  while ((await app.db.query('SELECT 1 FROM index_outbox')).rowCount > 0 && Date.now() < deadline) await new Promise(resolve => setTimeout(resolve, 100))
  const drift = await app.solr.maintenance.sync({ check: true })
  t.same(drift.missing, [early.UID], 'only what changed while Solr was off is missing (the site folder recorded at first start was delivered)')
  await app.solr.maintenance.sync({})
  t.equal((await solrDocs(solr, `UID:${early.UID}`)).length, 1, 'sync indexed it')
})
