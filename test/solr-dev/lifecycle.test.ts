// solr-dev conformance: the server's life (start, ping, SIGTERM, restart with the index on
// disk), core admin, the read-only Schema API and admin/file, with Solr 9's answers.
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import t from 'tap'
import { ids, SOLR_DEV, solrError, startSolrDev, TEST_CONFIGSET } from './helper.js'

// --configsets lets CREATE name a configset, as Solr's configSetBaseDir does.
const solr = await startSolrDev(t, { configsets: SOLR_DEV })

t.test('ping', async t => {
  const res = await solr.get('test/admin/ping')
  t.equal(res.status, 200)
  t.same(res.body, {
    responseHeader: { status: 0, QTime: res.body.responseHeader.QTime, params: { q: '{!lucene}*:*', distrib: 'false', rows: '10', echoParams: 'all' } },
    status: 'OK'
  })
})

t.test('core admin', async t => {
  const status = await solr.get('admin/cores', { action: 'STATUS' })
  t.equal(status.status, 200)
  t.same(Object.keys(status.body), ['responseHeader', 'initFailures', 'status'])
  t.same(Object.keys(status.body.status), ['test'])
  const core = status.body.status.test
  t.equal(core.name, 'test')
  t.equal(core.instanceDir, TEST_CONFIGSET)
  t.equal(core.schema, 'schema.xml')
  t.match(core.startTime, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/)
  t.same([core.index.numDocs, core.index.maxDoc, core.index.deletedDocs], [0, 0, 0])
  t.same((await solr.get('admin/cores', { action: 'STATUS', core: 'nope' })).body.status, { nope: {} }, 'STATUS of an unknown core is empty')

  const created = await solr.get('admin/cores', { action: 'CREATE', name: 'second', configSet: 'test-configset' })
  t.same(created.body, { responseHeader: { status: 0, QTime: created.body.responseHeader.QTime }, core: 'second' }, 'CREATE with configSet')
  const add = await solr.post('second/update', [{ id: 's1', title: 'in the second core' }], { commit: 'true' })
  t.equal(add.status, 200, 'the new core takes documents')
  t.same(ids(await solr.get('second/select', { q: 'title:second' })), ['s1'])
  t.same(ids(await solr.get('test/select', { q: '*:*' })), [], 'cores are separate')
  const again = await solr.get('admin/cores', { action: 'CREATE', name: 'second', configSet: 'test-configset' })
  t.same([again.status, again.body.error], [400, solrError(400, 'Core with name \'second\' already exists.')])
  const noName = await solr.get('admin/cores', { action: 'CREATE', configSet: 'test-configset' })
  t.same([noName.status, noName.body.error.msg], [400, 'Missing required parameter: name'])
  const badSet = await solr.get('admin/cores', { action: 'CREATE', name: 'third', configSet: 'no-such-configset' })
  t.equal(badSet.status, 400)
  t.match(badSet.body.error.msg, /^Error CREATEing SolrCore 'third': Could not load configuration from directory /)
  const reload = await solr.get('admin/cores', { action: 'RELOAD', core: 'second' })
  t.equal(reload.status, 200, 'RELOAD')
  t.same(ids(await solr.get('second/select', { q: '*:*' })), ['s1'], 'keeps the index')
  const swap = await solr.get('admin/cores', { action: 'SWAP', core: 'second', other: 'test' })
  t.same([swap.status, swap.body.error.msg], [400, 'solr-dev does not support the core admin action SWAP (STATUS, CREATE, UNLOAD and RELOAD only)'])
})

t.test('an index on disk survives a restart; SIGTERM commits what was pending', async t => {
  await solr.post('test/update', [{ id: 'committed', title: 'committed before the restart' }], { commit: 'true' })
  await solr.post('test/update', [{ id: 'pending', title: 'added but not committed' }])
  t.same(ids(await solr.get('test/select', { q: '*:*' })), ['committed'])
  const pid = solr.pid
  await solr.stop()
  t.throws(() => process.kill(pid, 0), 'the process exited on SIGTERM')
  await solr.start()
  t.not(solr.pid, pid, 'a new process')
  t.same(ids(await solr.get('test/select', { q: '*:*', sort: 'id asc' })), ['committed', 'pending'],
    'the committed document is back, and the pending one was committed at shutdown (Solr\'s commitOnClose)')
  t.same(ids(await solr.get('second/select', { q: '*:*' })), ['s1'], 'a core made with CREATE comes back too')

  const unload = await solr.get('admin/cores', { action: 'UNLOAD', core: 'second', deleteIndex: 'true' })
  t.equal(unload.status, 200, 'UNLOAD')
  t.same(Object.keys((await solr.get('admin/cores', { action: 'STATUS' })).body.status), ['test'])
  const gone = await solr.get('second/select', { q: '*:*' })
  t.same([gone.status, gone.body.error], [404, solrError(404, 'No such core: second')], 'an unknown core answers 404')
})

t.test('read-only Schema API and admin/file', async t => {
  const key = await solr.get('test/schema/uniquekey')
  t.same(key.body, { responseHeader: { status: 0, QTime: key.body.responseHeader.QTime }, uniqueKey: 'id' })
  const fields = (await solr.get('test/schema/fields')).body.fields
  const names = fields.map((f: { name: string }) => f.name)
  t.same(names, [...names].sort(), 'fields in name order')
  t.same(names.length, 22, 'every declared field, no dynamic ones')
  const byName = Object.fromEntries(fields.map((f: { name: string }) => [f.name, f]))
  t.same(byName.id, { name: 'id', type: 'string', indexed: true, stored: true, required: true, multiValued: false }, 'declared properties as booleans')
  t.same(byName.rank, { name: 'rank', type: 'plong', indexed: true, stored: true, docValues: false })
  t.same(byName.kind, { name: 'kind', type: 'string', indexed: true, stored: true, default: 'talk' }, 'a default stays a string')
  const one = await solr.get('test/schema/fields/title')
  t.same(one.body.field, { name: 'title', type: 'text_en', indexed: true, stored: true, required: true })
  const full = (await solr.get('test/schema/fields/tags', { showDefaults: 'true' })).body.field
  t.same([full.multiValued, full.docValues, full.sortMissingLast, full.tokenized, full.omitNorms], [true, true, true, false, true], 'showDefaults=true: effective properties')
  const missing = await solr.get('test/schema/fields/nope')
  t.same([missing.status, missing.body.error.msg], [404, 'Field \'nope\' not found.'])
  const dynamic = (await solr.get('test/schema/dynamicfields')).body.dynamicFields.map((f: { name: string }) => f.name)
  t.same(dynamic.sort(), ['*_i', '*_s', '*_ss', '*_t'])
  const write = await solr.post('test/schema', { 'add-field': { name: 'x', type: 'string' } })
  t.same([write.status, write.body.error.msg], [400, 'solr-dev does not support changing the schema through the Schema API (it is read-only here)'])

  const file = await solr.request('test/admin/file?file=schema.xml')
  t.equal(file.status, 200)
  t.match(file.headers.get('content-type'), /xml/)
  t.equal(await file.text(), await readFile(join(TEST_CONFIGSET, 'conf', 'schema.xml'), 'utf8'), 'admin/file returns schema.xml as it is')
  const stop = await solr.request('test/admin/file?file=stopwords.txt')
  t.match(await stop.text(), /^# English stop words/, 'other configset files too')
  const escape = await solr.get('test/admin/file', { file: '../../../../etc/passwd' })
  t.equal(escape.status, 404, 'nothing outside the conf directory')
})

t.test('unsupported paths answer 400 and say so', async t => {
  const terms = await solr.get('test/terms', { 'terms.fl': 'title' })
  t.same([terms.status, terms.body.error.msg], [400, 'solr-dev does not support the handler /terms'])
  const info = await solr.get('admin/info/system')
  t.same([info.status, info.body.error.msg], [400, 'solr-dev does not support the path /solr/admin/info/system'])
  const docs = await solr.post('test/update/json/docs', { id: 'x' })
  t.equal(docs.status, 400, '/update/json/docs')
})
