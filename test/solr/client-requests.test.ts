import t from 'tap'
import { talkBody } from '../helper.js'
import { buildWithSolr, recordingProxy, startSolr } from './helper.js'

/**
 * What the service really sends to Solr, counted parameter by parameter at a
 * proxy in front of solr-dev: every request of a write, a search, a schema
 * read, a ping and a drift check carries `wt=json` once (solr-client adds it;
 * the service must not add it again), and no single-valued parameter twice.
 */
const REPEATABLE = new Set(['fq', 'facet.field', 'hl.fl'])

const solr = await startSolr(t)
const proxy = await recordingProxy(t, solr.port)
const { app, call, tokenFor } = await buildWithSolr(t, solr, { SOLR_PORT: String(proxy.port) })
const admin = await tokenFor('admin')

t.test('every request carries wt=json once and no parameter twice', async t => {
  const created = await call('POST', '/talks', talkBody({ title: 'Counting parameters', effective: '2020-01-01T00:00:00Z' }), admin)
  t.equal(created.statusCode, 201)
  t.equal((await call('POST', `/talks/${created.json().id}/@workflow/publish`, {}, admin)).statusCode, 200)
  const found = await call('GET', '/@search?SearchableText=counting&facet=true&portal_type=talk')
  t.equal(found.headers['x-search-engine'], 'solr', found.body)
  t.equal(found.json().items_total, 1)
  t.equal((await call('GET', '/@health')).statusCode, 200)
  await app.solr.readSchema()
  t.same(await app.solr.maintenance.sync({ check: true }), { missing: [], orphan: [], stale: [] })

  const kinds = new Set(proxy.requests.map(r => r.path.replace(/^\/solr\/plone\//, '')))
  for (const kind of ['select', 'update/json', 'schema/fields', 'admin/ping']) t.ok(kinds.has(kind), `a ${kind} request was seen`)
  for (const r of proxy.requests) {
    t.same(r.params.getAll('wt'), ['json'], `${r.method} ${r.path}: wt once`)
    const names = [...r.params.keys()]
    const repeated = names.filter((name, i) => !REPEATABLE.has(name) && names.indexOf(name) !== i)
    t.same(repeated, [], `${r.path}: no single-valued parameter repeated`)
  }
  t.ok(proxy.requests.filter(r => r.path.endsWith('/select')).some(r => r.params.getAll('fq').length > 1), 'the repeatable fq is still sent once per filter')
})
