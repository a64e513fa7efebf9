import t from 'tap'
import { talkBody } from '../helper.js'
import { build } from '../helper.js'
import { asyncEnv, drained, outboxSize, startRedis } from '../queue/helper.js'
import { buildWithSolr, solrDocs, startSolr } from './helper.js'

/**
 * `POST <folder>/@import` with Solr on: the imported objects are indexed as
 * creates are (their operations recorded in the import's transaction,
 * delivered after it), and a full-text search through Solr finds them.
 */
const solr = await startSolr(t)

t.test('imported talks reach Solr and a full-text search finds the published ones', async t => {
  const { call, tokenFor, app } = await buildWithSolr(t, solr)
  const admin = await tokenFor('admin')
  const items = [
    ...Array.from({ length: 12 }, (_, i) => ({ ...talkBody({ title: `Xylophone import ${i}`, details: '<p>Quokkas everywhere</p>' }), transitions: ['publish'] })),
    ...Array.from({ length: 3 }, (_, i) => talkBody({ title: `Xylophone private ${i}`, details: '<p>Quokkas everywhere</p>' }))
  ]
  const res = await call('POST', '/talks/@import', { items }, admin)
  t.equal(res.statusCode, 201, res.body)
  const uids: string[] = res.json().items.map((i: { UID: string }) => i.UID)

  const docs = await solrDocs(solr, 'SearchableText:quokkas')
  t.same(new Set(docs.map(d => d.UID)), new Set(uids), 'every imported talk is in Solr right after the request')
  const published = docs.filter(d => d.review_state === 'published')
  t.equal(published.length, 12)
  t.ok(published.every(d => typeof d.effective === 'string'), 'with its publishing date')
  t.equal((await app.db.query('SELECT 1 FROM index_outbox')).rowCount, 0, 'the outbox is empty once Solr accepted')

  const search = await call('GET', '/@search?SearchableText=quokkas')
  t.equal(search.headers['x-search-engine'], 'solr', 'answered by Solr')
  t.equal(search.json().items_total, 12, 'anonymous finds exactly the published ones')
  const asAdmin = await call('GET', '/@search?SearchableText=xylophone', undefined, admin)
  t.equal(asAdmin.headers['x-search-engine'], 'solr')
  t.equal(asAdmin.json().items_total, 15, 'a Manager finds all of them')
})

t.test('a refused import sends nothing to Solr', async t => {
  const { call, tokenFor, app } = await buildWithSolr(t, solr)
  const admin = await tokenFor('admin')
  const res = await call('POST', '/talks/@import', { items: [talkBody({ title: 'Zebrafish refused' }), talkBody({ title: '' })] }, admin)
  t.equal(res.statusCode, 400)
  t.same(await solrDocs(solr, 'SearchableText:zebrafish'), [], 'nothing indexed')
  t.equal((await app.db.query('SELECT 1 FROM index_outbox')).rowCount, 0, 'nothing recorded')
})

t.test('with asynchronous indexing (the queue, inline worker): the imported talks reach Solr', async t => {
  const redis = await startRedis(t)
  const { app, call, tokenFor } = await build(t, { env: asyncEnv(solr, redis, { INDEX_WORKER: 'inline' }) })
  const admin = await tokenFor('admin')
  const items = Array.from({ length: 40 }, (_, i) => ({ ...talkBody({ title: `Narwhal queued ${i}` }), transitions: ['publish'] }))
  const res = await call('POST', '/talks/@import', { items }, admin)
  t.equal(res.statusCode, 201, res.body)
  const uids: string[] = res.json().items.map((i: { UID: string }) => i.UID)
  await drained(app)
  t.same(new Set((await solrDocs(solr, 'SearchableText:narwhal')).map(d => d.UID)), new Set(uids), 'every imported talk indexed by the queue')
  t.equal(await outboxSize(app), 0, 'the outbox is empty')
})
