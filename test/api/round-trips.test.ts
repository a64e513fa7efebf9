import { AsyncLocalStorage } from 'node:async_hooks'
import pg from 'pg'
import t from 'tap'
import { build, talkBody } from '../helper.js'

/**
 * The statements each kind of request sends to PostgreSQL (issue 15: "fewer
 * round trips per write"; a read of one object costs what the floor's one row
 * costs). Every statement is a round trip, and on these machines the system
 * calls of a round trip are the largest single share of a request's time:
 * these counts are the budget, and a change that adds a statement must say so here.
 * Only the request's own statements count (its async context), not a
 * background loop's that happens to run meanwhile.
 */
const requestContext = new AsyncLocalStorage<string[]>()
const originalQuery = pg.Client.prototype.query
pg.Client.prototype.query = function (this: pg.Client, ...args: Parameters<pg.Client['query']>) {
  const config = args[0] as string | { text: string }
  requestContext.getStore()?.push(typeof config === 'string' ? config : config.text)
  return (originalQuery as (...a: unknown[]) => unknown).apply(this, args)
} as typeof pg.Client.prototype.query
t.teardown(() => { pg.Client.prototype.query = originalQuery })

t.test('statements per request (the SQL engine: RESIDENT_CATALOG=false)', async t => {
  const { call, tokenFor } = await build(t, { env: { RESIDENT_CATALOG: 'false' } })
  const admin = await tokenFor('admin')
  const member = await tokenFor('jane', ['Member'])
  /** The request's statements (the first words of each), after one run that warms caches (principals, counts, objects, vocabularies). */
  const statements = async (request: () => ReturnType<typeof call>, expectedStatus: number): Promise<string[]> => {
    t.equal((await request()).statusCode, expectedStatus)
    const sent: string[] = []
    const response = await requestContext.run(sent, request)
    t.equal(response.statusCode, expectedStatus, response.body.slice(0, 200))
    return sent.map(sql => sql.replace(/\s+/g, ' ').trim().slice(0, 60))
  }
  // 60 talks: more than a window of rows (50, core/catalog/kept-results.ts), so that a listing of them all is counted; 12 share a subject.
  for (let n = 0; n < 60; n++) t.equal((await call('POST', '/talks', talkBody({ title: `Talk ${n}`, ...(n < 12 ? { subjects: ['twelve'] } : {}) }), admin)).statusCode, 201)
  t.equal((await call('POST', '/talks/talk-1/@workflow/publish', {}, admin)).statusCode, 200)

  const getOne = await statements(async () => await call('GET', '/talks/talk-1'), 200)
  t.equal(getOne.length, 0, `GET one talk, anonymous: the object is kept since the last write (${getOne.join(' | ')})`)
  const getOneAuthenticated = await statements(async () => await call('GET', '/talks/talk-1', undefined, member), 200)
  t.equal(getOneAuthenticated.length, 0, `GET one talk, authenticated: the principal and the object are kept (${getOneAuthenticated.join(' | ')})`)
  const folder = await statements(async () => await call('GET', '/talks'), 200)
  t.equal(folder.length, 0, `GET /talks: the folder, the page and the count are kept (${folder.join(' | ')})`)
  // As the admin: 60 talks, so that the first window of rows does not hold them all and they are counted.
  const search = await statements(async () => await call('GET', '/@search?portal_type=talk&sort_on=Date&sort_order=descending&b_size=5', undefined, admin), 200)
  t.equal(search.length, 0, `@search: the site root, the page and the count are kept (${search.join(' | ')})`)
  // Rows are read in windows of 50 (core/catalog/kept-results.ts): the first page of 5 read the first 50 rows.
  const byDate = '/@search?portal_type=talk&sort_on=Date&sort_order=descending&b_size=5'
  const pageAt = async (start: number): Promise<{ items: number, total: number, sent: string[] }> => {
    const sent: string[] = []
    const res = await requestContext.run(sent, async () => await call('GET', `${byDate}&b_start=${start}`, undefined, admin))
    t.equal(res.statusCode, 200)
    return { items: res.json().items.length, total: res.json().items_total, sent: sent.map(sql => sql.replace(/\s+/g, ' ').trim().slice(0, 60)) }
  }
  const next = await pageAt(5)
  t.same([next.items, next.total], [5, 60])
  t.equal(next.sent.length, 0, `@search, the next page: in the window the first page read; the count is the query's, kept (${next.sent.join(' | ')})`)
  const across = await pageAt(48)
  t.same([across.items, across.total], [5, 60])
  t.equal(across.sent.length, 1, `@search, a page across two windows: the second window (${across.sent.join(' | ')})`)
  const last = await pageAt(57)
  t.same([last.items, last.total], [3, 60])
  t.equal(last.sent.length, 0, `@search, the last page: in the second window (${last.sent.join(' | ')})`)
  const beyond = await pageAt(100)
  t.same([beyond.items, beyond.total], [0, 60])
  t.equal(beyond.sent.length, 1, `@search, a page beyond the end: its window, found empty (${beyond.sent.join(' | ')})`)
  // A result that ends within the window read is counted by it: 12 matches, 5 a page, no count.
  const twelve: string[] = []
  const subject = await requestContext.run(twelve, async () => await call('GET', '/@search?portal_type=talk&Subject=twelve&sort_on=created&b_size=5', undefined, admin))
  t.same([subject.json().items.length, subject.json().items_total], [5, 12])
  t.notOk(twelve.some(sql => sql.includes('count(*)')), `12 matches, 5 a page: the window holds them all, so they are not counted (${twelve.join(' | ')})`)
  // After a write, the first read reads the object again (what it keeps is stale), the next one does not.
  t.equal((await call('PATCH', '/talks/talk-1', { description: 'Changed' }, admin)).statusCode, 204)
  const afterWrite: string[] = []
  const changed = await requestContext.run(afterWrite, async () => await call('GET', '/talks/talk-1'))
  t.equal(changed.json().description, 'Changed')
  t.equal(afterWrite.length, 1, `GET one talk right after a write: traversal with the lock (${afterWrite.join(' | ')})`)
  t.match(afterWrite[0].replace(/\s+/g, ' '), /WHERE path = \$1$/, 'the talk\'s row alone, below its folder kept')
  // A change of the folder forgets what is kept below it; a talk read whole then keeps the folder again, and the next talk is read alone below it.
  t.equal((await call('PATCH', '/talks', { description: 'The folder, changed' }, admin)).statusCode, 204)
  const whole: string[] = []
  t.equal((await requestContext.run(whole, async () => await call('GET', '/talks/talk-5', undefined, admin))).statusCode, 200)
  t.match(whole.join(' | ').replace(/\s+/g, ' '), /WHERE path = ANY\(\$1\)/, `the first talk after the folder's change: its whole lineage (${whole.join(' | ')})`)
  const belowFolder: string[] = []
  const nextTalk = await requestContext.run(belowFolder, async () => await call('GET', '/talks/talk-6', undefined, admin))
  t.equal(nextTalk.json().parent.description, 'The folder, changed', 'shown below the folder as it is now')
  t.equal(belowFolder.length, 1, `the next talk: one statement (${belowFolder.join(' | ')})`)
  t.match(belowFolder.join(' | ').replace(/\s+/g, ' '), /WHERE path = \$1$/, 'its row alone')
  t.equal((await statements(async () => await call('GET', '/talks/talk-1'), 200)).length, 0, 'and then kept again')
  // A crowd right after a write that changes what the query filters on (a talk published): ten callers of the same listing at once send its statements once, not once each.
  t.equal((await call('POST', '/talks/talk-3/@workflow/publish', {}, admin)).statusCode, 200)
  const crowd: string[] = []
  const listings = await requestContext.run(crowd, async () => await Promise.all(Array.from({ length: 10 },
    async () => await call('GET', '/@search?portal_type=talk&sort_on=Date&sort_order=descending&b_size=5', undefined, admin))))
  t.same(listings.map(r => r.statusCode), Array(10).fill(200))
  t.same(new Set(listings.map(r => r.body)).size, 1, 'and every caller got the same answer')
  const sentByCrowd = crowd.map(sql => sql.replace(/\s+/g, ' ').trim().slice(0, 60))
  // The site root's traversal stays kept: the write changed a talk, not the root (kept objects forget only what a write changed).
  t.equal(sentByCrowd.length, 3, `ten @search callers right after a write: the effective/expiry look-up, the page, the count, once (${sentByCrowd.join(' | ')})`)
  // An edit that changes no column the query filters on (a description) leaves its count kept: the page is read again, not counted.
  t.equal((await call('PATCH', '/talks/talk-3', { description: 'Changed once more' }, admin)).statusCode, 204)
  const afterEdit: string[] = []
  t.equal((await requestContext.run(afterEdit, async () => await call('GET', '/@search?portal_type=talk&sort_on=Date&sort_order=descending&b_size=5', undefined, admin))).statusCode, 200)
  const sentAfterEdit = afterEdit.map(sql => sql.replace(/\s+/g, ' ').trim().slice(0, 60))
  t.equal(sentAfterEdit.length, 1, `@search after a description was edited: the page, no count, no traversal (${sentAfterEdit.join(' | ')})`)
  t.notOk(sentAfterEdit.some(sql => sql.includes('count(*)')), 'the count is kept')
  // A locked object is never kept: its lock ends with time, which no write announces.
  const { token: lockToken } = (await call('POST', '/talks/talk-1/@lock', {}, admin)).json()
  t.type(lockToken, 'string')
  const locked = await statements(async () => await call('GET', '/talks/talk-1'), 200)
  t.equal(locked.length, 1, `GET a locked talk: traversal with the lock, every time (${locked.join(' | ')})`)
  let n = 100
  const create = await statements(async () => await call('POST', '/talks', talkBody({ title: `New ${n++}` }), member), 201)
  t.equal(create.length, 2, `POST: traversal, the write with the folder's next position (${create.join(' | ')})`)
  const patch = await statements(async () => await call('PATCH', '/talks/talk-2', { description: `Edited ${n++}` }, admin), 204)
  t.equal(patch.length, 2, `PATCH: traversal with the lock, the write (${patch.join(' | ')})`)
  // Six PATCHes of one talk at once in one process: each waits for the one before it (ContentStore.changeOptimistically)
  // and starts from the state it left, so none writes over a version another replaced more than once — a PATCH
  // that read the talk before an earlier one's write ended, and came after it, finds its version gone once.
  const sentBy = Array.from({ length: 6 }, (): string[] => [])
  const patches = await Promise.all(sentBy.map(async (sent, i) => await requestContext.run(sent, async () => await call('PATCH', '/talks/talk-2', { description: `Together ${i}` }, admin))))
  t.same(patches.map(r => r.statusCode), Array(6).fill(204))
  const writesOf = sentBy.map(sent => sent.filter(sql => sql.includes('UPDATE content SET')).length)
  t.ok(writesOf.every(writes => writes <= 2), `six PATCHes of one talk at once: none writes more than twice (${writesOf.join(', ')})`)
  const importOf = async (size: number): Promise<string[]> => await statements(async () => await call('POST', '/talks/@import', {
    items: Array.from({ length: size }, () => ({ ...talkBody({ title: `Imported ${n++}` }), transitions: ['publish'] }))
  }, admin), 201)
  const [ten, hundred] = [await importOf(10), await importOf(100)]
  t.equal(hundred.length, ten.length, `@import: as many statements for 100 talks as for 10 (${hundred.join(' | ')})`)
  t.ok(hundred.length <= 8, `@import: traversal, then one transaction: the folders' roles held (core/content/access-guard.ts), content with the positions, history, catalogue, notification (${hundred.join(' | ')})`)
})

t.test('statements per request, the resident catalogue answering', async t => {
  const { app, call, tokenFor } = await build(t)
  const admin = await tokenFor('admin')
  for (let n = 0; n < 60; n++) t.equal((await call('POST', '/talks', talkBody({ title: `Talk ${n}`, ...(n < 12 ? { subjects: ['twelve'] } : {}) }), admin)).statusCode, 201)
  await app.catalogSearch.residentCatalog?.whenLoaded()
  const sentFor = async (url: string): Promise<string[]> => {
    const sent: string[] = []
    const res = await requestContext.run(sent, async () => await call('GET', url, undefined, admin))
    t.equal(res.statusCode, 200, res.body.slice(0, 200))
    return sent.map(sql => sql.replace(/\s+/g, ' ').trim().slice(0, 60))
  }
  // Pages and counts come from memory; only the page's rows are read, once, and kept until the next write.
  for (const url of ['/@search?portal_type=talk&sort_on=Date&sort_order=descending&b_size=5&b_start=35', '/@search?Subject=twelve&sort_on=sortable_title&b_size=5', '/talks?b_start=25']) {
    const first = await sentFor(url)
    t.ok(first.length <= 3 && first.every(sql => !sql.includes('count(') && !sql.includes('ORDER BY')), `${url}: no count, no sort in PostgreSQL: the site root, the moment kept rows hold until, the rows (${first.join(' | ')})`)
    t.same(await sentFor(url), [], `${url} again: kept`)
  }
  // Rows are kept by uid, for every caller: another manager's page of the same rows, or a page that overlaps one read, reads nothing.
  const other = await tokenFor('boss', ['Manager'])
  t.equal((await call('GET', '/', undefined, other)).statusCode, 200, 'the caller\'s session, read once')
  const asOther: string[] = []
  t.equal((await requestContext.run(asOther, async () => await call('GET', '/@search?portal_type=talk&sort_on=Date&sort_order=descending&b_size=4&b_start=36', undefined, other))).statusCode, 200)
  t.same(asOther, [], 'another caller, a page overlapping one read before: no statement')
  // A full-text page of words is ranked here, from the words' positions: its rows are all PostgreSQL reads.
  const ranked = await sentFor('/@search?SearchableText=talk&b_size=5&b_start=5')
  t.ok(ranked.length <= 1 && !ranked.some(sql => sql.includes('ts_rank_cd')), `full text: the rows alone (${ranked.join(' | ')})`)
  // A phrase's candidates are ranked by PostgreSQL: one statement for the ranks.
  const phrase = await sentFor('/@search?SearchableText=%22talk%2012%22&b_size=5')
  t.ok(phrase.length <= 2 && phrase.filter(sql => sql.includes('ts_rank_cd')).length === 1, `a phrase: the ranks of its candidates, the rows (${phrase.join(' | ')})`)
  t.equal(app.catalogSearch.residentCatalog?.counts.declined, 0, 'the resident catalogue answered every query')
})

t.test('a page of full objects summarises their parents without a statement each', async t => {
  const { call, tokenFor } = await build(t)
  const admin = await tokenFor('admin')
  const member = await tokenFor('jane', ['Member'])
  // 50 private folders of the admin's, a published talk in each: the member may view every talk and none of its parents.
  t.equal((await call('POST', '/talks/@import', { items: [{ '@type': 'folder', id: 'parents', title: 'Parents' }] }, admin)).statusCode, 201)
  const folders = (await call('POST', '/talks/parents/@import', { items: Array.from({ length: 50 }, (_, i) => ({ '@type': 'folder', title: `Parent ${i}` })) }, admin)).json().items
  for (const folder of folders) {
    const path = new URL(folder['@id']).pathname
    t.equal((await call('POST', `${path}/@import`, { items: [{ ...talkBody({ title: `Child of ${path}` }), transitions: ['publish'] }] }, admin)).statusCode, 201)
  }
  const page = async (size: number): Promise<{ parents: unknown[], sent: string[] }> => {
    const url = `/@search?path=/talks/parents&portal_type=talk&fullobjects=1&b_size=${size}`
    t.equal((await call('GET', url, undefined, member)).statusCode, 200)
    const sent: string[] = []
    const res = await requestContext.run(sent, async () => await call('GET', url, undefined, member))
    t.equal(res.statusCode, 200)
    return { parents: res.json().items.map((item: { parent: unknown }) => item.parent), sent: sent.map(sql => sql.replace(/\s+/g, ' ').trim().slice(0, 60)) }
  }
  const [five, fifty] = [await page(5), await page(50)]
  t.equal(fifty.parents.length, 50)
  t.ok(fifty.parents.every(parent => Object.keys(parent as object).join() === '@id'), 'each parent, which the member may not view, is its @id alone')
  t.equal(fifty.sent.length, five.sent.length, `as many statements for 50 full objects in 50 folders as for 5 (${fifty.sent.join(' | ')})`)
})
