import t from 'tap'
import { writeFile, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { build } from '../helper.js'

const PANEL = '/@controlpanels/solr-controlpanel'

t.test('the Solr control panel: defaults, changes, permissions', async t => {
  const { call, tokenFor } = await build(t)
  const admin = await tokenFor('admin')

  t.equal((await call('GET', PANEL)).statusCode, 401, 'anonymous')
  t.equal((await call('GET', PANEL, undefined, await tokenFor('rita', ['Reviewer']))).statusCode, 403, 'a reviewer')
  t.equal((await call('GET', '/@controlpanels/unknown', undefined, admin)).statusCode, 404)
  // Plone's user and group settings, read by Volto's users and groups panels: fixed, read only, unlisted.
  const usergroup = await call('GET', '/@controlpanels/usergroup', undefined, admin)
  t.match(usergroup.json(), { '@id': 'http://localhost:80/@controlpanels/usergroup', data: { many_groups: false, many_users: false } })
  t.equal((await call('GET', '/@controlpanels/usergroup', undefined, await tokenFor('rita', ['Reviewer']))).statusCode, 403)
  t.equal((await call('PATCH', '/@controlpanels/usergroup', { many_users: true }, admin)).statusCode, 404, 'nothing of it changes')
  t.notOk((await call('GET', '/@controlpanels', undefined, admin)).json().some((p: { '@id': string }) => p['@id'].endsWith('/usergroup')), 'not listed')

  const read = await call('GET', PANEL, undefined, admin)
  t.equal(read.statusCode, 200)
  const panel = read.json()
  t.match(panel, {
    '@id': 'http://localhost:80/@controlpanels/solr-controlpanel',
    data: {
      active: false,
      host: '127.0.0.1',
      port: 8983,
      base: '/solr/plone',
      async_indexing: false,
      auto_commit: true,
      commit_within: 0,
      index_timeout: 10,
      search_timeout: 5,
      max_results: 500,
      required: ['SearchableText'],
      facets: ['portal_type', 'review_state'],
      filter_queries: ['portal_type'],
      highlight_formatter_pre: '[',
      highlight_formatter_post: ']',
      highlight_fragsize: 100,
      atomic_updates: true
    }
  }, 'the defaults of docs/search.md')
  t.equal(panel.locked.host, false)
  t.ok(panel.schema.properties.search_timeout, 'the schema describes every setting')

  t.equal((await call('PATCH', PANEL, { host: 'solr.internal', port: 8984, facets: ['portal_type'] }, admin)).statusCode, 204)
  t.match((await call('GET', PANEL, undefined, admin)).json().data, { host: 'solr.internal', port: 8984, facets: ['portal_type'] }, 'stored')

  const invalid = await call('PATCH', PANEL, { port: 'eighty', nonsense: 1 }, admin)
  t.equal(invalid.statusCode, 400)
  t.same(invalid.json().errors.map((e: { field: string }) => e.field).sort(), ['nonsense'], 'unknown settings are named first')
  const wrongType = await call('PATCH', PANEL, { port: 'eighty' }, admin)
  t.equal(wrongType.statusCode, 400)
  t.equal(wrongType.json().errors[0].field, 'port')
  t.match((await call('GET', PANEL, undefined, admin)).json().data, { port: 8984 }, 'a refused change changes nothing')

  t.equal((await call('PATCH', PANEL, { password: 's3cret' }, admin)).statusCode, 204)
  t.equal((await call('GET', PANEL, undefined, admin)).json().data.password, '********', 'the password is never echoed')
})

t.test('declarative settings win and are locked', async t => {
  const dir = await mkdtemp(join(tmpdir(), 'solr-config-'))
  t.teardown(async () => { await rm(dir, { recursive: true, force: true }) })
  const file = join(dir, 'solr.json')
  await writeFile(file, JSON.stringify({ base: '/solr/talks', max_results: 100 }))
  const { call, tokenFor } = await build(t, { env: { SOLR_HOST: 'search.example.org', SOLR_PORT: '9983', SOLR_ACTIVE: 'true', SOLR_CONFIG_FILE: file } })
  const admin = await tokenFor('admin')
  const panel = (await call('GET', PANEL, undefined, admin)).json()
  t.match(panel.data, { host: 'search.example.org', port: 9983, active: true, base: '/solr/talks', max_results: 100 })
  t.match(panel.locked, { host: true, port: true, active: true, base: true, max_results: true, search_timeout: false })
  t.equal(panel.schema.properties.host.locked, true)
  const refused = await call('PATCH', PANEL, { host: 'elsewhere' }, admin)
  t.equal(refused.statusCode, 400)
  t.match(refused.json().errors[0], { field: 'host', message: /declaratively/ })
  t.equal((await call('PATCH', PANEL, { search_timeout: 2 }, admin)).statusCode, 204, 'unlocked settings still change')
})

t.test('an invalid declarative setting stops the start with a clear message', async t => {
  await t.rejects(build(t, { env: { SOLR_PORT: 'not-a-port' } }), /Invalid declarative Solr settings: port/)
})
