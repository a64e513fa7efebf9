// solr-dev conformance: the SolrCloud admin APIs a deploy needs, for one node — the Configsets
// API (UPLOAD, LIST) and the Collections API (CREATE, RELOAD, LIST) — with Solr 9's answers, and
// a 400 in Solr's error shape for everything else.
import { readdir, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import t, { type Test as Tap } from 'tap'
import { storedZip } from '../../core/solr/zip.js'
import { ids, solrError, startSolrDev, TEST_CONFIGSET, type Answer, type Query } from './helper.js'

const solr = await startSolrDev(t)

/** The test configset's conf/ files, by name; `change` edits one before zipping. */
async function configsetZip (change: (files: Record<string, string>) => void = () => {}): Promise<Buffer> {
  const conf = join(TEST_CONFIGSET, 'conf')
  const files: Record<string, string> = {}
  for (const name of (await readdir(conf)).sort()) files[name] = await readFile(join(conf, name), 'utf8')
  change(files)
  return storedZip(files)
}

async function upload (body: Buffer, query: Query): Promise<Answer> {
  const qs = new URLSearchParams(Object.entries({ action: 'UPLOAD', ...query }).map(([k, v]) => [k, String(v)]))
  const res = await solr.request(`admin/configs?${qs.toString()}`, { method: 'POST', headers: { 'content-type': 'application/octet-stream' }, body: new Uint8Array(body) })
  return { status: res.status, body: await res.json(), contentType: res.headers.get('content-type') ?? '' }
}

const refused = (t: Tap, res: Answer, msg: string | RegExp): void => {
  t.equal(res.status, 400, `400 for ${String(msg)}`)
  if (typeof msg === 'string') t.same(res.body.error, solrError(400, msg))
  else t.match(res.body.error.msg, msg)
  t.equal(res.body.responseHeader.status, 400)
}

t.test('configsets: UPLOAD and LIST', async t => {
  t.same((await solr.get('admin/configs', { action: 'LIST' })).body.configSets, [], 'none at first')
  const zip = await configsetZip()
  const first = await upload(zip, { name: 'talks' })
  t.equal(first.status, 200, JSON.stringify(first.body))
  t.same(Object.keys(first.body), ['responseHeader'])
  t.same((await solr.get('admin/configs', { action: 'LIST' })).body.configSets, ['talks'])

  refused(t, await upload(zip, { name: 'talks' }), 'The configuration talks already exists')
  t.equal((await upload(zip, { name: 'talks', overwrite: 'true' })).status, 200, 'overwrite=true replaces it')
  refused(t, await upload(zip, { name: '-talks' }), 'Invalid configset name: -talks')
  refused(t, await upload(Buffer.alloc(0), { name: 'empty' }), 'The configset UPLOAD needs a zip file as the request body')
  refused(t, await upload(Buffer.from('not a zip at all'), { name: 'text' }), 'The configset UPLOAD body is not a zip file, or an empty one')

  const damaged = Buffer.from(zip)
  damaged[30 + 'schema.xml'.length + 40] ^= 0xff // a byte of the first file's data: its CRC-32 no longer matches
  refused(t, await upload(damaged, { name: 'damaged' }), /^The configset zip is damaged: invalid entry CRC/)

  const escaping = storedZip({ 'aa/evil.txt': 'x' })
  for (let at = escaping.indexOf('aa/evil'); at >= 0; at = escaping.indexOf('aa/evil', at + 1)) escaping.write('..', at)
  refused(t, await upload(escaping, { name: 'escaping' }), 'Invalid path in the configset zip: ../evil.txt')
  t.same((await solr.get('admin/configs', { action: 'LIST' })).body.configSets, ['talks'], 'nothing refused was kept')
})

t.test('collections: CREATE, LIST, RELOAD', async t => {
  t.same((await solr.get('admin/collections', { action: 'LIST' })).body.collections, [], 'the standalone core "test" is no collection')
  const create = { action: 'CREATE', name: 'talks', 'collection.configName': 'talks', numShards: 1, replicationFactor: 1 }
  const { numShards: _, ...withoutShards } = create
  refused(t, await solr.get('admin/collections', withoutShards), 'numShards is a required param (when using CompositeId router).')
  refused(t, await solr.get('admin/collections', { ...create, numShards: 0 }), 'numShards must be greater than 0: 0')
  refused(t, await solr.get('admin/collections', { ...create, replicationFactor: 'three' }), 'Invalid integer value for replicationFactor: three')
  refused(t, await solr.get('admin/collections', { ...create, 'collection.configName': 'nope' }), 'Can not find the specified config set: nope')
  refused(t, await solr.get('admin/collections', { action: 'CREATE', name: 'talks', numShards: 1 }), /collection\.configName/)

  const created = await solr.get('admin/collections', { ...create, numShards: 2, replicationFactor: 3 })
  t.equal(created.status, 200, JSON.stringify(created.body))
  t.same(created.body.success, { [`127.0.0.1:${solr.port}_solr`]: { core: 'talks' } })
  t.same((await solr.get('admin/collections', { action: 'LIST' })).body.collections, ['talks'])
  refused(t, await solr.get('admin/collections', create), 'collection already exists: talks')

  t.equal((await solr.post('talks/update', [{ id: 'c1', title: 'through the collection' }], { commit: 'true' })).status, 200)
  t.same(ids(await solr.get('talks/select', { q: 'title:collection' })), ['c1'], 'the collection URL takes updates and selects')
  t.equal((await solr.get('talks/schema/fields/added')).status, 404)

  // A new field in the configset: uploaded over the old one, applied by RELOAD, the index kept.
  const changed = await configsetZip(files => { files['schema.xml'] = files['schema.xml'].replace('<field name="category"', '<field name="added" type="string" indexed="true" stored="true"/>\n  <field name="category"') })
  t.equal((await upload(changed, { name: 'talks', overwrite: 'true' })).status, 200)
  t.equal((await solr.get('talks/schema/fields/added')).status, 404, 'not before the RELOAD')
  const reloaded = await solr.get('admin/collections', { action: 'RELOAD', name: 'talks' })
  t.equal(reloaded.status, 200, JSON.stringify(reloaded.body))
  t.equal((await solr.get('talks/schema/fields/added')).status, 200, 'the new field after it')
  t.same(ids(await solr.get('talks/select', { q: '*:*' })), ['c1'], 'documents kept')
  refused(t, await solr.get('admin/collections', { action: 'RELOAD', name: 'nope' }), 'Could not find collection : nope')
  refused(t, await solr.get('admin/collections', { action: 'RELOAD', name: 'test' }), 'Could not find collection : test')
})

t.test('every other action is a 400 in Solr\'s error shape', async t => {
  for (const action of ['DELETE', 'CLUSTERSTATUS', 'MODIFYCOLLECTION', 'ADDREPLICA']) {
    refused(t, await solr.get('admin/collections', { action, name: 'talks' }), `solr-dev does not support the collections action ${action} (CREATE, RELOAD and LIST only)`)
  }
  refused(t, await solr.get('admin/collections'), 'solr-dev does not support the collections action (none) (CREATE, RELOAD and LIST only)')
  for (const action of ['DELETE', 'CREATE']) {
    refused(t, await solr.get('admin/configs', { action, name: 'talks' }), `solr-dev does not support the configsets action ${action} (UPLOAD and LIST only)`)
  }
  refused(t, await upload(await configsetZip(), { name: 'talks', overwrite: 'true', filePath: 'schema.xml' }), 'solr-dev does not support uploading a single file (filePath)')
})

t.test('configsets and collections survive a restart', async t => {
  await solr.stop()
  await solr.start()
  t.same((await solr.get('admin/configs', { action: 'LIST' })).body.configSets, ['talks'])
  t.same((await solr.get('admin/collections', { action: 'LIST' })).body.collections, ['talks'])
  t.same(ids(await solr.get('talks/select', { q: '*:*' })), ['c1'])
  t.equal((await solr.get('talks/schema/fields/added')).status, 200)
})
