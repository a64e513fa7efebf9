import t from 'tap'
import { Batcher } from '../../core/indexing/queue/batcher.js'
import { retryDelay } from '../../core/indexing/queue/jobs.js'

t.test('keys that arrive together leave as one batch; a full batch leaves at once', async t => {
  const batches: number[][] = []
  const batcher = new Batcher<number>(3, 20, async keys => { batches.push(keys); return new Map() })
  await Promise.all([1, 2, 3, 4, 5].map(async k => { await batcher.add(k) }))
  t.same(batches, [[1, 2, 3], [4, 5]])
})

t.test('a key the batch reports as failed rejects with its error; the others resolve', async t => {
  const batcher = new Batcher<string>(10, 5, async keys => new Map(keys.filter(k => k === 'bad').map(k => [k, new Error(`refused ${k}`)])))
  const results = await Promise.allSettled(['a', 'bad', 'b'].map(async k => { await batcher.add(k) }))
  t.same(results.map(r => r.status), ['fulfilled', 'rejected', 'fulfilled'])
  t.match((results[1] as PromiseRejectedResult).reason, { message: 'refused bad' })
})

t.test('when the batch throws, every key of it rejects with that error', async t => {
  const batcher = new Batcher<string>(10, 5, async () => { throw new Error('Solr unavailable') })
  const results = await Promise.allSettled(['a', 'b'].map(async k => { await batcher.add(k) }))
  t.same(results.map(r => r.status === 'rejected' && (r.reason as Error).message), ['Solr unavailable', 'Solr unavailable'])
})

t.test('retries wait 1 s, doubling, at most 15 s', async t => {
  t.same([1, 2, 3, 4, 5, 6, 50].map(retryDelay), [1000, 2000, 4000, 8000, 15000, 15000, 15000])
})
