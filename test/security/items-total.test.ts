import t from 'tap'
import { build, talkBody } from '../helper.js'
import { waitFor } from '../queue/helper.js'

/**
 * `items_total` and the pages' items are exact for the caller, whatever the
 * catalogue keeps to avoid reading and counting every page
 * (core/catalog/kept-results.ts): after writes in this process, after writes
 * in another process on the same database, and at the moment a talk becomes
 * effective or expires — for every visibility class (anonymous, a member who
 * owns private talks, a reviewer, a Manager). The oracle is the test's own
 * record of what it wrote.
 */
const one = await build(t)
const other = await build(t, { databaseUrl: one.databaseUrl })
const tokens = {
  anonymous: undefined,
  owner: await one.tokenFor('olga'),
  reviewer: await one.tokenFor('rita', ['Reviewer']),
  manager: await one.tokenFor('admin')
}
type Caller = keyof typeof tokens

/** Every page size a client might use, so that both the page-only path and the kept count are exercised. */
async function totals (app: typeof one, caller: Caller, query = 'portal_type=talk'): Promise<number[]> {
  const seen: number[] = []
  for (const size of [1, 2, 100]) {
    for (const start of [0, 1, 50]) {
      const res = await app.call('GET', `/@search?${query}&b_size=${size}&b_start=${start}`, undefined, tokens[caller])
      if (res.statusCode !== 200) throw new Error(res.body)
      seen.push(res.json().items_total)
    }
  }
  return [...new Set(seen)]
}

/** The titles a caller finds, read two at a time through every page (each page read twice: the second may be kept), sorted. */
async function titles (app: typeof one, caller: Caller, query = 'portal_type=talk'): Promise<string[]> {
  const found: string[] = []
  for (let start = 0; ; start += 2) {
    const pages = []
    for (let i = 0; i < 2; i++) {
      const res = await app.call('GET', `/@search?${query}&b_size=2&b_start=${start}`, undefined, tokens[caller])
      if (res.statusCode !== 200) throw new Error(res.body)
      pages.push(res.json().items.map((item: { title: string }) => item.title))
    }
    if (JSON.stringify(pages[0]) !== JSON.stringify(pages[1])) throw new Error(`the same page twice: ${JSON.stringify(pages)}`)
    found.push(...pages[0])
    if (pages[0].length < 2) return found.sort()
  }
}

async function publish (app: typeof one, path: string, dates: Record<string, string> = {}): Promise<void> {
  const res = await app.call('POST', `${path}/@workflow/publish`, dates, tokens.manager)
  if (res.statusCode !== 200) throw new Error(res.body)
}

t.test('after concurrent writes in two processes, every caller\'s items_total is exact in both', async t => {
  const expected: Record<Caller, number> = { anonymous: 0, owner: 0, reviewer: 0, manager: 0 }
  for (const caller of Object.keys(tokens) as Caller[]) t.same(await totals(one, caller), [0], `${caller}: none yet`)
  await Promise.all([one, other].map(async (app, a) => {
    for (let i = 0; i < 6; i++) {
      const res = await app.call('POST', '/talks', talkBody({ title: `Count ${a}-${i}` }), tokens.owner)
      const path = new URL(res.json()['@id']).pathname
      if (i % 3 === 0) await publish(app, path)
      if (i % 3 === 1) await app.call('POST', `${path}/@workflow/submit`, {}, tokens.owner)
    }
  }))
  // Per process: 2 published, 2 pending, 2 private, all owned by olga.
  Object.assign(expected, { anonymous: 4, owner: 12, reviewer: 8, manager: 12 })
  const written = (states: number[]): string[] => [0, 1].flatMap(a => [0, 1, 2, 3, 4, 5].filter(i => states.includes(i % 3)).map(i => `Count ${a}-${i}`)).sort()
  const listed: Record<Caller, string[]> = { anonymous: written([0]), owner: written([0, 1, 2]), reviewer: written([0, 1]), manager: written([0, 1, 2]) }
  for (const app of [one, other]) {
    for (const caller of Object.keys(tokens) as Caller[]) {
      t.same(await totals(app, caller), [expected[caller]], `${caller} in process ${app === one ? 1 : 2}`)
      t.same(await titles(app, caller), listed[caller], `${caller}'s talks in process ${app === one ? 1 : 2}`)
    }
  }
  // One write in the other process: the first one's kept totals must not survive it.
  const res = await other.call('POST', '/talks', talkBody({ title: 'One more' }), tokens.manager)
  await publish(other, new URL(res.json()['@id']).pathname)
  await waitFor('process 1 sees the write of process 2', async () => (await totals(one, 'anonymous'))[0] === 5, 2_000)
  for (const [caller, n] of [['anonymous', 5], ['owner', 13], ['reviewer', 9], ['manager', 13]] as Array<[Caller, number]>) {
    t.same(await totals(one, caller), [n], `${caller} after process 2's write`)
    t.same(await titles(one, caller), [...listed[caller], 'One more'].sort(), `${caller}'s talks after process 2's write`)
  }
})

t.test('a talk that becomes effective, and one that expires, change the totals at that moment, without any write', async t => {
  const before = (await totals(one, 'anonymous'))[0]
  const expires = new Date(Date.now() + 2000).toISOString()
  const effective = new Date(Date.now() + 4000).toISOString()
  const a = new URL((await one.call('POST', '/talks', talkBody({ title: 'Effective soon' }), tokens.manager)).json()['@id']).pathname
  await publish(one, a, { effective })
  const b = new URL((await one.call('POST', '/talks', talkBody({ title: 'Expires soon' }), tokens.manager)).json()['@id']).pathname
  await publish(one, b, { expires })
  t.same(await totals(one, 'anonymous'), [before + 1], 'now: the expiring talk counts, the coming one not')
  t.same(await totals(one, 'anonymous', 'SearchableText=soon'), [1])
  t.same(await titles(one, 'anonymous', 'SearchableText=soon'), ['Expires soon'])
  await waitFor('the first moment passed', () => Date.now() > Date.parse(expires) + 50, 5_000)
  t.same(await totals(one, 'anonymous'), [before], 'between: neither counts')
  t.same(await totals(one, 'anonymous', 'SearchableText=soon'), [0])
  t.same(await titles(one, 'anonymous', 'SearchableText=soon'), [])
  await waitFor('the second moment passed', () => Date.now() > Date.parse(effective) + 50, 5_000)
  t.same(await totals(one, 'anonymous'), [before + 1], 'then: the coming one counts, the expired one not')
  t.same(await totals(one, 'anonymous', 'SearchableText=soon'), [1])
  t.same(await titles(one, 'anonymous', 'SearchableText=soon'), ['Effective soon'])
  t.same(await totals(one, 'manager', 'SearchableText=soon'), [2], 'a Manager sees both all along')
})
