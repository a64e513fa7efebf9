import { execFile } from 'node:child_process'
import { resolve } from 'node:path'
import { promisify } from 'node:util'
import t from 'tap'
import { solrConfDir } from '../../core/config/paths.js'
import { build, freshDatabase, talkBody } from '../helper.js'
import { freePort, startSolrDev } from '../solr-dev/helper.js'
import { recordingProxy } from './helper.js'

/**
 * `npm run solr -- deploy` (dist/app/cli.js: run `npm run build` first)
 * against solr-dev's Configsets and Collections APIs: create, redeploy =
 * reload, then the service indexes and searches through the collection URL;
 * a refused or unreachable Solr is exit 1 with Solr's reason.
 */
const run = promisify(execFile)
const ROOT = resolve(import.meta.dirname, '../..')

const solr = await startSolrDev(t, { cores: {} })
const proxy = await recordingProxy(t, solr.port)
const databaseUrl = await freshDatabase(t)
const solrEnv = { SOLR_HOST: '127.0.0.1', SOLR_PORT: String(proxy.port), SOLR_BASE: '/solr/talks' }

async function deploy (args: string[], env: Record<string, string> = {}): Promise<{ code: number, stdout: string, stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, ['dist/app/cli.js', 'deploy', ...args], {
      cwd: ROOT, env: { ...process.env, ...solrEnv, DATABASE_URL: databaseUrl, LOG_LEVEL: 'silent', ...env }
    })
    return { code: 0, stdout, stderr }
  } catch (err) {
    const e = err as { code: number, stdout: string, stderr: string }
    return { code: e.code, stdout: e.stdout, stderr: e.stderr }
  }
}

/** The admin calls since `from`: API, action and the parameters that matter. */
const adminCalls = (from: number): string[] => proxy.requests.slice(from).filter(r => r.path.startsWith('/solr/admin/')).map(r => {
  const p = r.params
  const detail = ['name', 'overwrite', 'cleanup', 'collection.configName', 'numShards', 'replicationFactor'].filter(k => p.has(k)).map(k => `${k}=${p.get(k) ?? ''}`)
  return `${r.method} ${r.path.slice('/solr/admin/'.length)} ${p.get('action') ?? ''} ${detail.join(' ')}${r.contentType !== undefined ? ` (${r.contentType})` : ''}`.trim()
})

t.test('the first deploy uploads the configset and creates the collection', async t => {
  const from = proxy.requests.length
  const first = await deploy(['--shards', '2', '--replicas', '1'])
  t.equal(first.code, 0, first.stderr)
  t.equal(first.stdout, `created collection 'talks' (2 shard(s), 1 replica(s)) with configset 'talks' at 127.0.0.1:${proxy.port}\n` +
    'live core: missing fields none; unknown fields none\n')
  t.same(adminCalls(from), [
    'POST configs UPLOAD name=talks overwrite=true cleanup=true (application/octet-stream)',
    'GET collections LIST',
    'GET collections CREATE name=talks collection.configName=talks numShards=2 replicationFactor=1'
  ])
  t.same((await solr.get('admin/collections', { action: 'LIST' })).body.collections, ['talks'])
  t.same((await solr.get('admin/configs', { action: 'LIST' })).body.configSets, ['talks'])
})

t.test('a second deploy uploads again and reloads the collection', async t => {
  const from = proxy.requests.length
  const again = await deploy(['--configset', 'talks'])
  t.equal(again.code, 0, again.stderr)
  t.match(again.stdout, `uploaded configset 'talks' and reloaded collection 'talks' at 127.0.0.1:${proxy.port} (its shards and replicas are unchanged)\n`)
  t.same(adminCalls(from), [
    'POST configs UPLOAD name=talks overwrite=true cleanup=true (application/octet-stream)',
    'GET collections LIST',
    'GET collections RELOAD name=talks'
  ])
})

t.test('the service indexes, searches, checks and maintains through the collection URL', async t => {
  const { app, call, tokenFor } = await build(t, { databaseUrl, env: { SOLR_ACTIVE: 'true', ...solrEnv } })
  const admin = await tokenFor('admin')
  const created = await call('POST', '/talks', talkBody({ title: 'Deployed to the cloud', effective: '2020-01-01T00:00:00Z' }), admin)
  t.equal(created.statusCode, 201)
  t.equal((await call('POST', `/talks/${created.json().id}/@workflow/publish`, {}, admin)).statusCode, 200)
  const found = await call('GET', '/@search?SearchableText=cloud')
  t.equal(found.headers['x-search-engine'], 'solr', found.body)
  t.same(found.json().items.map((i: { title: string }) => i.title), ['Deployed to the cloud'])
  t.ok(proxy.requests.some(r => r.path === '/solr/talks/select'), 'the search went to the collection')
  t.match((await call('GET', '/@health')).json(), { status: 'ok', solr: 'ok' }, 'ping through the collection')
  t.same(await app.solr.maintenance.sync({ check: true }), { missing: [], orphan: [], stale: [] })
  t.same((await app.solr.maintenance.schema(solrConfDir, {})).live, { missing: [], extra: [] }, 'schema check against the collection')
  t.equal(await app.solr.maintenance.reindex({}), (await app.db.query("SELECT 1 FROM content WHERE path <> '/'")).rowCount)
  t.equal((await app.solr.client.select({ q: '*:*', rows: 0 })).response.numFound, (await app.db.query("SELECT 1 FROM content WHERE path <> '/'")).rowCount, 'reindexed into the collection')
  await app.solr.maintenance.clear()
  t.equal((await app.solr.client.select({ q: '*:*', rows: 0 })).response.numFound, 0, 'clear empties the collection')
})

t.test('a refused upload or an unreachable Solr is exit 1 with the reason; bad options exit 2', async t => {
  const refused = await deploy(['--configset=-bad'])
  t.equal(refused.code, 1)
  t.equal(refused.stderr, 'deploy failed: configset upload refused: Solr answered 400: Invalid configset name: -bad\n')
  t.equal(refused.stdout, '')
  t.same((await solr.get('admin/configs', { action: 'LIST' })).body.configSets, ['talks'], 'nothing uploaded')

  const away = await deploy([], { SOLR_PORT: String(await freePort()) })
  t.equal(away.code, 1)
  t.match(away.stderr, /^deploy failed: configset upload failed: Solr is unreachable at http:\/\/127\.0\.0\.1:\d+: /)

  for (const args of [['--shards', '0'], ['--replicas', 'two'], ['--configset', '']]) {
    const usage = await deploy(args)
    t.equal(usage.code, 2, args.join(' '))
    t.match(usage.stdout, '--shards and --replicas take a whole number from 1')
  }
})
