// solr-dev with the service's own Solr client (solr-client): the requests it really sends —
// JSON updates with wt=json, GET selects built by its Query, real-time get, deletes, ping.
import { createRequire } from 'node:module'
import t from 'tap'
import { startSolrDev } from './helper.js'

interface SolrQuery {
  q: (q: string) => SolrQuery
  matchFilter: (field: string, value: string) => SolrQuery
  sort: (options: Record<string, string>) => SolrQuery
  start: (n: number) => SolrQuery
  rows: (n: number) => SolrQuery
  fl: (fields: string) => SolrQuery
  facet: (options: Record<string, unknown>) => SolrQuery
  hl: (options: Record<string, unknown>) => SolrQuery
}
interface SolrClient {
  query: () => SolrQuery
  addAsync: (docs: object | object[], options?: object) => Promise<any>
  commitAsync: (options?: object) => Promise<any>
  softCommitAsync: () => Promise<any>
  searchAsync: (query: SolrQuery | string) => Promise<any>
  realTimeGetAsync: (ids: string | string[]) => Promise<any>
  deleteByIDAsync: (id: string) => Promise<any>
  deleteByQueryAsync: (query: string) => Promise<any>
  atomicUpdateAsync: (doc: object) => Promise<any>
  pingAsync: () => Promise<any>
}
const require = createRequire(import.meta.url)
const solrClient = require('solr-client') as { createClient: (options: object) => SolrClient }

const solr = await startSolrDev(t)
const client = solrClient.createClient({ host: '127.0.0.1', port: solr.port, core: 'test', path: '/solr', solrVersion: '9.0' })

t.test('the service\'s client against solr-dev', async t => {
  const ping = await client.pingAsync()
  t.same(ping, {
    responseHeader: { status: 0, QTime: ping.responseHeader.QTime, params: { q: '{!lucene}*:*', distrib: 'false', rows: '10', echoParams: 'all', wt: 'json' } },
    status: 'OK'
  }, 'ping')
  const added = await client.addAsync([
    { id: 'c1', title: 'Fastify and Solr', category: 'talk', views: 3, published: new Date('2025-02-01T09:00:00Z') },
    { id: 'c2', title: 'Searching with Lucene', category: 'workshop', views: 7 }
  ])
  t.equal(added.responseHeader.status, 0, 'add')
  t.same((await client.realTimeGetAsync('c1')).response.docs.map((d: { id: string }) => d.id), ['c1'], 'real-time get before commit')
  t.equal((await client.commitAsync()).responseHeader.status, 0, 'commit')

  const res = await client.searchAsync(client.query().q('title:solr OR title:lucene').sort({ views: 'desc' }).fl('id,published').start(0).rows(10))
  t.same(res.response.docs, [{ id: 'c2' }, { id: 'c1', published: '2025-02-01T09:00:00Z' }], 'search with sort and fl; a JS Date indexed as an ISO date')
  t.same(res.responseHeader.params, { q: 'title:solr OR title:lucene', sort: 'views desc', fl: 'id,published', start: '0', rows: '10', wt: 'json' }, 'the params it sent')

  const filtered = await client.searchAsync(client.query().q('*:*').matchFilter('category', 'talk').facet({ on: true, field: 'category', mincount: 0 }))
  t.same(filtered.response.docs.map((d: { id: string }) => d.id), ['c1'], 'matchFilter (fq)')
  t.same(filtered.facet_counts.facet_fields.category, ['talk', 1, 'workshop', 0], 'facets')

  const hl = await client.searchAsync(client.query().q('title:fastify').hl({ on: true, fl: 'title' }))
  t.same(hl.highlighting, { c1: { title: ['<em>Fastify</em> and Solr'] } }, 'highlighting')

  await client.atomicUpdateAsync({ id: 'c1', views: { inc: 1 } })
  await client.softCommitAsync()
  t.same((await client.searchAsync('q=id:c1&fl=views')).response.docs, [{ views: 4 }], 'atomic update and soft commit')

  await client.deleteByIDAsync('c1')
  await client.deleteByQueryAsync('category:workshop')
  await client.commitAsync()
  t.equal((await client.searchAsync('q=*:*')).response.numFound, 0, 'deleteByID and deleteByQuery')

  const failed = await client.searchAsync('q=title:(open').then(() => 0, (e: { statusCode?: number }) => e.statusCode)
  t.equal(failed, 400, 'a 400 reaches the client as an error')
})
