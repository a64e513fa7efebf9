import t from 'tap'
import { creationEntry, newObject, type NewObject } from '../../core/content/new-object.js'
import { checkWrite } from '../../core/content/validation.js'
import { talkBody } from '../helper.js'
import { buildWithSolr, solrDocs, startSolr } from '../solr/helper.js'

/**
 * A move and a copy of a folder of 10,000 talks: a few statements whatever
 * the size (counted), every talk then found at its new path by `@search`
 * with the exact total, and Solr, delivered to by the request, holding every
 * talk at its new path (zero drift). Seconds are reported, never asserted.
 */
const TALKS = 10_000
const BATCH = 1000

const solr = await startSolr(t)

t.test('a folder of 10,000 talks moves and copies in a few statements', async t => {
  const { app, call, tokenFor } = await buildWithSolr(t, solr)
  const admin = await tokenFor('admin', ['Manager'])
  const principal = { userId: 'admin', fullname: null, roles: ['Manager'] }
  t.equal((await call('POST', '/talks', { '@type': 'folder', id: 'big', title: 'Big' }, admin)).statusCode, 201)
  t.equal((await call('POST', '/', { '@type': 'folder', id: 'archive', title: 'Archive' }, admin)).statusCode, 201)
  const talkType = app.contentTypes.get('talk')!
  const ctx = { mode: 'create' as const, stored: {}, tokens: async (name: string) => await app.vocabularies.tokens(name), imageMaxBytes: 1e6, fileMaxBytes: 1e6 }
  const write = await checkWrite(talkType, talkBody({ title: 'Scaled talk' }), ctx)
  for (let at = 0; at < TALKS; at += BATCH) {
    const parent = (await app.content.locate('/talks/big')).found!
    const objects: NewObject[] = Array.from({ length: BATCH }, (_, i) => {
      const located = newObject(parent, talkType, { ...write, id: `talk-${at + i}` }, principal, new Date())
      const creation = creationEntry(located, principal)
      return { located, write, history: creation === undefined ? [] : [creation] }
    })
    await app.content.createMany(parent, objects)
  }

  let statements = 0
  const slow: Array<[number, string]> = []
  const query = app.db.query.bind(app.db)
  const transaction = app.db.transaction.bind(app.db)
  const timed = async <T>(text: unknown, run: () => Promise<T>): Promise<T> => {
    statements++
    const at = performance.now()
    try { return await run() } finally { slow.push([performance.now() - at, String(text).slice(0, 70).replace(/\s+/g, ' ')]) }
  }
  // Counts what the request sends, in its transaction and outside it.
  app.db.transaction = async fn => await transaction(async tx => await fn({ ...tx, query: async (...args: Parameters<typeof tx.query>) => await timed(args[0], async () => await tx.query(...args)) } as typeof tx))
  app.db.query = (async (...args: Parameters<typeof query>) => await timed(args[0], async () => await query(...args))) as typeof query

  let started = performance.now()
  const moved = await call('POST', '/archive/@move', { source: '/talks/big' }, admin)
  const moveSeconds = (performance.now() - started) / 1000
  t.equal(moved.statusCode, 200, moved.body)
  const moveStatements = statements
  for (const [ms, text] of slow.sort((x, y) => y[0] - x[0]).slice(0, 8)) t.comment(`${ms.toFixed(0)} ms ${text}`)
  slow.length = 0
  t.comment(`move of ${TALKS + 1} objects: ${moveSeconds.toFixed(2)} s, ${moveStatements} statements (the Solr delivery's included)`)

  statements = 0
  started = performance.now()
  const copied = await call('POST', '/talks/@copy', { source: '/archive/big' }, admin)
  const copySeconds = (performance.now() - started) / 1000
  t.equal(copied.statusCode, 200, copied.body)
  t.comment(`copy of ${TALKS + 1} objects: ${copySeconds.toFixed(2)} s, ${statements} statements (the Solr delivery's included)`)
  for (const [ms, text] of slow.sort((x, y) => y[0] - x[0]).slice(0, 8)) t.comment(`${ms.toFixed(0)} ms ${text}`)
  app.db.query = query
  app.db.transaction = transaction

  const atNew = (await call('GET', '/@search?path.query=/archive/big&b_size=1', undefined, admin)).json()
  t.equal(atNew.items_total, TALKS + 1)
  t.equal((await call('GET', '/@search?path.query=/talks/big&portal_type=talk&b_size=1', undefined, admin)).json().items_total, TALKS, 'the copy')
  t.equal((await call('GET', '/talks/big/talk-9999', undefined, admin)).statusCode, 200)
  const old = await call('GET', '/talks/big/talk-17?b_size=1', undefined, admin)
  t.equal(old.statusCode, 200, 'the copy holds the old path now')
  const docs = await solrDocs(solr, 'path_string:\\/archive\\/big*', { fl: 'UID,path_string', rows: String(TALKS + 10) })
  t.equal(docs.length, TALKS + 1, 'Solr holds every moved talk at its new path')
  const copies = await solrDocs(solr, 'path_string:\\/talks\\/big\\/*', { fl: 'UID', rows: String(TALKS + 10) })
  t.equal(copies.length, TALKS, 'and every copy')
})
