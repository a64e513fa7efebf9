import { AsyncLocalStorage } from 'node:async_hooks'
import pg from 'pg'
import t from 'tap'
import { build, talkBody } from '../helper.js'

/**
 * Every sort ends with the catalogue order (created, then uid) that breaks
 * ties, and the database index of a sortable index carries that order after
 * its value, so that a page of a sort on a value thousands of talks share
 * (`start`, `review_state`) is read from the index, never sorted (issue 15:
 * the date range grew with the number of talks because its first tie group
 * was read whole and sorted).
 *
 * How it is proven without timings: the page statement the service sends is
 * planned with PostgreSQL's sorts switched off (`enable_sort`,
 * `enable_incremental_sort`); a planner that still puts a sort in the plan has
 * no index that gives the order.
 */
interface Sent { text: string, values: unknown[] }
const requestContext = new AsyncLocalStorage<Sent[]>()
const originalQuery = pg.Client.prototype.query
pg.Client.prototype.query = function (this: pg.Client, ...args: Parameters<pg.Client['query']>) {
  const config = args[0] as string | { text: string, values?: unknown[] }
  const sent = typeof config === 'string' ? { text: config, values: (args[1] as unknown[] | undefined) ?? [] } : { text: config.text, values: config.values ?? [] }
  requestContext.getStore()?.push(sent)
  return (originalQuery as (...a: unknown[]) => unknown).apply(this, args)
} as typeof pg.Client.prototype.query
t.teardown(() => { pg.Client.prototype.query = originalQuery })

const SLOTS = ['2026-10-20T09:00:00+00:00', '2026-10-20T10:00:00+00:00']
const TALKS = 12

/** The kinds of plan node that sort. */
function sortsIn (plan: Record<string, unknown>): string[] {
  const own = /Sort$/.test(String(plan['Node Type'])) ? [String(plan['Node Type'])] : []
  const children = (plan.Plans as Array<Record<string, unknown>> | undefined) ?? []
  return [...own, ...children.flatMap(sortsIn)]
}

t.test('a page of every sort the indexes serve is read in order, ties included', async t => {
  // The SQL engine's statements and plans: the resident catalogue, which answers these sorts itself, is off (test/catalog/resident-oracle.test.ts checks its order).
  const { app, call, databaseUrl, tokenFor } = await build(t, { env: { RESIDENT_CATALOG: 'false' } })
  const admin = await tokenFor('admin')
  const created: string[] = []
  for (let n = 0; n < TALKS; n++) {
    // Talks share their start in turns: each slot holds every other talk, in creation order.
    const start = SLOTS[n % SLOTS.length]
    const res = await call('POST', '/talks', talkBody({ title: `Tied talk ${n}`, start }), admin)
    t.equal(res.statusCode, 201, `created Tied talk ${n}`)
    created.push(res.json()['@id'])
    if (n % 3 !== 0) t.equal((await call('POST', `/talks/${res.json().id as string}/@workflow/publish`, {}, admin)).statusCode, 200)
  }

  const planner = new pg.Client({ connectionString: databaseUrl })
  await planner.connect()
  t.teardown(async () => { await planner.end() })
  await planner.query('SET enable_sort = off; SET enable_incremental_sort = off')

  /** The page statement of a request: the one that reads the catalogue in an order. */
  async function pageStatement (url: string): Promise<{ items: Array<Record<string, unknown>>, sent: Sent }> {
    const sent: Sent[] = []
    const res = await requestContext.run(sent, async () => await call('GET', url, undefined, admin))
    t.equal(res.statusCode, 200, `${url}: ${res.statusCode === 200 ? 'answered' : res.body}`)
    const page = sent.filter(s => /FROM catalog\b/.test(s.text) && /ORDER BY/.test(s.text))
    t.equal(page.length, 1, `${url}: one page statement`)
    return { items: res.json().items, sent: page[0] }
  }

  const sorts = [
    '/@search?portal_type=talk&sort_on=start',
    '/@search?portal_type=talk&sort_on=start&sort_order=descending',
    `/@search?start.query=${encodeURIComponent(SLOTS[0])}&start.query=${encodeURIComponent(SLOTS[1])}&start.range=min:max&sort_on=start`,
    '/@search?portal_type=talk&sort_on=review_state',
    '/@search?portal_type=talk&sort_on=Date&sort_order=descending',
    '/@search?portal_type=talk&sort_on=modified&sort_order=descending',
    '/@search?portal_type=talk&sort_on=sortable_title',
    '/@search?path.query=/talks&path.depth=1&sort_on=getObjPositionInParent'
  ]
  for (const url of sorts) {
    const { items, sent } = await pageStatement(`${url}&b_size=5`)
    t.ok(items.length > 0, `${url}: a page`)
    const { rows: [{ 'QUERY PLAN': [{ Plan: plan }] }] } = await planner.query(`EXPLAIN (FORMAT JSON) ${sent.text}`, sent.values)
    t.same(sortsIn(plan), [], `${url}: no sort in the plan (${sent.text.replace(/\s+/g, ' ').slice(-120)})`)
  }

  // The oracle of ties: talks that share a start come in the order they were created.
  const { items } = await pageStatement('/@search?portal_type=talk&sort_on=start&b_size=100')
  const expected = SLOTS.flatMap((_, slot) => created.filter((_, n) => n % SLOTS.length === slot))
  t.same(items.map(item => item['@id']), expected, 'sorted by start, ties in creation order')
  const { items: descending } = await pageStatement('/@search?portal_type=talk&sort_on=start&sort_order=descending&b_size=100')
  const expectedDescending = [...SLOTS.keys()].reverse().flatMap(slot => created.filter((_, n) => n % SLOTS.length === slot))
  t.same(descending.map(item => item['@id']), expectedDescending, 'descending by start, ties still in creation order')

  t.test('a catalogue built by an earlier version gets the sorted indexes and loses the old ones', async t => {
    const indexesOf = async (): Promise<Set<string>> => new Set((await app.db.query<{ name: string }>(
      "SELECT indexname AS name FROM pg_indexes WHERE tablename = 'catalog'")).rows.map(r => r.name))
    await app.db.query('DROP INDEX catalog_start_sorted; DROP INDEX catalog_start_sorted_desc')
    await app.db.query('CREATE INDEX catalog_start ON catalog (start); CREATE INDEX catalog_start_desc ON catalog (start DESC NULLS LAST)')
    await build(t, { databaseUrl, env: { RESIDENT_CATALOG: 'false' } })
    const present = await indexesOf()
    for (const name of ['catalog_start_sorted', 'catalog_start_sorted_desc']) t.ok(present.has(name), `${name} built at start`)
    for (const name of ['catalog_start', 'catalog_start_desc']) t.notOk(present.has(name), `${name} dropped at start`)
  })
})

t.test('the resident catalogue loads in batches read from the primary key, never sorted', async t => {
  // Its rows are read `LOAD_BATCH` at a time after the last uid read: a batch ordered by anything but the key sorts the whole catalogue again, each time.
  const first = await build(t, { env: { RESIDENT_CATALOG: 'false' } })
  const admin = await first.tokenFor('admin')
  for (let n = 0; n < 3; n++) t.equal((await first.call('POST', '/talks', talkBody({ title: `Loaded talk ${n}` }), admin)).statusCode, 201)
  const sent: Sent[] = []
  const second = await requestContext.run(sent, async () => await build(t, { databaseUrl: first.databaseUrl }))
  for (;;) {
    const health = (await second.call('GET', '/@health?verbose')).json()
    if (health.resident_catalogue?.state !== 'loading') break
    await new Promise(resolve => setTimeout(resolve, 50))
  }
  const batches = sent.filter(s => /FROM catalog WHERE uid/.test(s.text) && /ORDER BY/.test(s.text))
  t.ok(batches.length > 0, 'the load read its batches')
  const planner = new pg.Client({ connectionString: first.databaseUrl })
  await planner.connect()
  t.teardown(async () => { await planner.end() })
  await planner.query('SET enable_sort = off; SET enable_incremental_sort = off')
  const { rows: [{ 'QUERY PLAN': [{ Plan: plan }] }] } = await planner.query(`EXPLAIN (FORMAT JSON) ${batches[0].text}`, batches[0].values)
  t.same(sortsIn(plan), [], `no sort in the plan of ${batches[0].text.replace(/\s+/g, ' ').slice(-80)}`)
})
