import t from 'tap'
import { talkBody } from '../helper.js'
import { startSolrDev } from '../solr-dev/helper.js'
import { buildWithSolr, CONFIGSET, sleep, solrDocs } from './helper.js'

/**
 * `login` and `password`: a core behind basic authentication (solr-dev with
 * --basic-auth, as Solr's BasicAuthPlugin) answers only with the right
 * credentials; until the control panel has them, writes succeed, the outbox
 * keeps their operations and the catalogue answers searches.
 */
t.test('login and password reach Solr as basic authentication', async t => {
  const solr = await startSolrDev(t, { cores: { plone: CONFIGSET }, basicAuth: 'indexer:s3cret' })
  const app = await buildWithSolr(t, solr)
  const admin = await app.tokenFor('admin')
  const pending = async (): Promise<number> => (await app.app.db.query<{ n: number }>('SELECT count(*)::int AS n FROM index_outbox')).rows[0].n
  const setCredentials = async (login: string, password: string): Promise<void> => {
    const res = await app.call('PATCH', '/@controlpanels/solr-controlpanel', { login, password }, admin)
    t.equal(res.statusCode, 204, res.body)
  }
  const searchHeaders = async (): Promise<{ engine: unknown, fallback: unknown }> => {
    const res = await app.call('GET', '/@search?SearchableText=guarded', undefined, admin)
    t.equal(res.statusCode, 200)
    return { engine: res.headers['x-search-engine'], fallback: res.headers['x-search-fallback'] }
  }

  const created = await app.call('POST', '/talks', talkBody({ title: 'A guarded talk' }), admin)
  t.equal(created.statusCode, 201, 'without credentials the write still succeeds')
  t.ok(await pending() > 0, 'and its index operation waits in the outbox (Solr answered 401)')
  t.same(await searchHeaders(), { engine: 'catalogue', fallback: 'catalogue' }, 'searches fall back to the catalogue')

  await setCredentials('indexer', 's3cret')
  const deadline = Date.now() + 30_000
  while (await pending() > 0 && Date.now() < deadline) await sleep(100)
  t.equal(await pending(), 0, 'with the credentials the outbox is delivered, without a restart')
  t.same((await solrDocs(solr, 'Title:guarded')).map(d => d.UID), [created.json().UID])
  t.same(await searchHeaders(), { engine: 'solr', fallback: undefined }, 'and Solr answers searches')

  await setCredentials('indexer', 'wrong')
  t.same(await searchHeaders(), { engine: 'catalogue', fallback: 'catalogue' }, 'a wrong password: the catalogue again')
})
