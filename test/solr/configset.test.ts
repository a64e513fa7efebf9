import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { configsetFiles } from '../../core/solr/maintenance.js'
import { build } from '../helper.js'
import { CONFIGSET } from './helper.js'

const { app } = await build(t)
const conf = join(CONFIGSET, 'conf')

t.test('the committed configset is what the content types generate (run `npm run solr -- schema --write` when not)', async t => {
  for (const [name, text] of Object.entries(configsetFiles(app.contentTypes))) {
    t.equal(await readFile(join(conf, name), 'utf8'), text, `infra/solr/conf/${name} is fresh (if not: npm run solr -- schema --write)`)
  }
  t.same((await app.solr.maintenance.schema(conf, {})).staleFiles, [])
})

t.test('a stale configset is reported, and --write makes it fresh', async t => {
  const dir = await mkdtemp(join(tmpdir(), 'configset-'))
  t.teardown(async () => { await rm(dir, { recursive: true, force: true }) })
  await cp(conf, dir, { recursive: true })
  const schema = await readFile(join(dir, 'schema.xml'), 'utf8')
  await writeFile(join(dir, 'schema.xml'), schema.replace(/\s*<field name="speaker"[^>]*\/>/, ''))
  t.same((await app.solr.maintenance.schema(dir, {})).staleFiles, ['schema.xml'], 'a field missing from the file is drift')
  t.same((await app.solr.maintenance.schema(dir, { write: true })).staleFiles, [], 'written')
  t.equal(await readFile(join(dir, 'schema.xml'), 'utf8'), schema)
})

t.test('the generated schema carries every type\'s index fields and the copy fields into default', async t => {
  const schema = configsetFiles(app.contentTypes)['schema.xml']
  for (const field of ['type_of_talk', 'audience', 'room', 'speaker', 'SearchableText', 'allowedRolesAndUsers', 'path_parents']) {
    t.match(schema, `<field name="${field}"`)
  }
  t.match(schema, '<uniqueKey>UID</uniqueKey>')
  t.match(schema, '<copyField source="SearchableText" dest="default"/>')
  t.match(configsetFiles(app.contentTypes)['solrconfig.xml'], '${solr.autoCommit.maxDocs:')
})

t.test('solrconfig.xml carries only what Solr 9 honours', async t => {
  const solrconfig = configsetFiles(app.contentTypes)['solrconfig.xml']
  // Solr caps a core's maxBooleanClauses at the node's solr.max.booleanClauses (docs/search.md): the node sets it.
  t.notMatch(solrconfig, 'maxBooleanClauses')
  // Deprecated and ignored by Solr 9.
  t.notMatch(solrconfig, 'enableRemoteStreaming')
  t.match(solrconfig, '<requestParsers multipartUploadLimitInKB="2048" formdataUploadLimitInKB="2048"/>')
  t.match(solrconfig, '<luceneMatchVersion>9.0</luceneMatchVersion>')
  t.match(solrconfig, '<filterCache size="512" initialSize="512" autowarmCount="0"/>')
  t.match(solrconfig, /<requestHandler name="\/select" class="solr.SearchHandler">[\s\S]*<str name="df">default<\/str>[\s\S]*<str name="q.op">AND<\/str>/)
})
