import t, { type Test } from 'tap'
import fc from 'fast-check'
import { SUBJECTS, WORDS } from '../../bench/talks.mjs'
import { classesOf, createDrawer, MIX, type DrawnRequest, type World } from '../../bench/traffic-mix.mjs'

// The varied traffic of `npm run bench` (bench/traffic-mix.mjs): the draw is
// a pure function of its seed and its world, so its proportions and the shape
// of every request are checked here against the mix as issue 23 states it
// (the oracle below is written from the issue, not read from the module).
// test/api/traffic-mix.test.ts sends the drawn requests to the service.

/** Percent of all requests, by class, as the issue states the mix. */
const STATED: Record<string, number> = {
  'get-talk': 30,
  // Listings, 15 %: mostly among the first 20 pages, some anywhere.
  'listing-first': 12,
  'listing-any': 3,
  subject: 20,
  fulltext: 10,
  'date-range': 5,
  // The same reads, in proportion (of their 80 %), logged in: 12 %.
  'get-talk-logged-in': 30 * 12 / 80,
  'listing-first-logged-in': 12 * 12 / 80,
  'listing-any-logged-in': 3 * 12 / 80,
  'subject-logged-in': 20 * 12 / 80,
  'fulltext-logged-in': 10 * 12 / 80,
  'date-range-logged-in': 5 * 12 / 80,
  // Writes, 8 %.
  patch: 4,
  create: 2,
  transition: 2
}
const DRAWS = 100_000
const PAGE = 25
const SORTABLE = ['sortable_title', 'effective', 'modified', 'created', 'start', 'getObjPositionInParent']
const OWNERS = 50
const MEMBERS = 200
const MANAGERS = 5

/** A site of `n` talks, seven in ten published, owned by speaker-0 … speaker-49, with Members (the owners among them) and Managers. */
function worldOf (n: number): World {
  const now = Date.UTC(2026, 10, 27)
  return {
    talks: Array.from({ length: n }, (_, i) => ({ path: `/talks/talk-${i}`, owner: `speaker-${i % OWNERS}`, published: i % 10 < 7 })),
    effective: [now - 3_600_000, now],
    admin: 'admin-token',
    members: Array.from({ length: MEMBERS }, (_, i) => ({ login: i < OWNERS ? `speaker-${i}` : `member-${i}`, token: `member-token-${i}` })),
    managers: Array.from({ length: MANAGERS }, (_, i) => `manager-token-${i}`)
  }
}

/** `count` requests of one client, every answer as expected. */
function draw (seed: number, world: World, count: number, options: { ids?: string[], loop?: number, loops?: number } = {}): DrawnRequest[] {
  const drawer = createDrawer({ seed, world, classes: classesOf(options.ids), loop: options.loop, loops: options.loops })
  return Array.from({ length: count }, () => {
    const request = drawer.next()
    drawer.answered(request, true)
    return request
  })
}

const share = <T>(items: T[], test: (item: T) => boolean): number => items.filter(test).length / items.length

/** A drawn share within `sigmas` standard deviations of the stated one (a binomial count of `n`). */
function near (t: Test, observed: number, expected: number, n: number, what: string, sigmas = 5): void {
  const sd = Math.sqrt(expected * (1 - expected) / n)
  t.ok(Math.abs(observed - expected) <= sigmas * sd, `${what}: ${(observed * 100).toFixed(2)} % drawn, ${(expected * 100).toFixed(2)} % stated`)
}

const params = (r: DrawnRequest): URLSearchParams => new URL(r.path, 'http://site').searchParams
const tokenOf = (r: DrawnRequest): string | null => r.headers.authorization?.replace(/^Bearer /, '') ?? null
const talkIndex = (r: DrawnRequest): number => Number(/\/talks\/talk-(\d+)/.exec(r.path)![1])

t.test('over 100 000 draws each class has the share the issue states, whatever the seed', async t => {
  t.same(MIX.map(c => c.id).sort(), Object.keys(STATED).sort(), 'the mix has exactly the stated classes')
  const world = worldOf(1000)
  fc.assert(fc.property(fc.integer({ min: 0, max: 2 ** 32 - 1 }), seed => {
    const requests = draw(seed, world, DRAWS)
    for (const [id, percent] of Object.entries(STATED)) near(t, share(requests, r => r.classId === id), percent / 100, DRAWS, `${id}, seed ${seed}`)
    near(t, share(requests, r => r.method === 'GET' && tokenOf(r) === null), 0.8, DRAWS, 'anonymous reads')
    near(t, share(requests, r => r.method === 'GET' && tokenOf(r) !== null), 0.12, DRAWS, 'logged-in reads')
    near(t, share(requests, r => r.method !== 'GET'), 0.08, DRAWS, 'writes')
  }), { numRuns: 3 })
})

t.test('within the classes: callers, subjects, sorts, pages and full-text words are spread as stated', async t => {
  // 7 000 published talks: 280 pages of 25.
  const requests = draw(7, worldOf(10_000), DRAWS)
  const loggedIn = requests.filter(r => r.method === 'GET' && tokenOf(r) !== null)
  near(t, share(loggedIn, r => tokenOf(r)!.startsWith('manager-')), 0.1, loggedIn.length, 'logged-in reads by Managers')
  t.equal(new Set(loggedIn.map(tokenOf)).size, MEMBERS + MANAGERS, 'every Member and every Manager reads')

  const subjects = requests.filter(r => r.classId === 'subject')
  for (const sort of SORTABLE) near(t, share(subjects, r => params(r).get('sort_on') === sort), 1 / 6, subjects.length, `Subject search sorted on ${sort}`)
  near(t, share(subjects, r => params(r).get('sort_order') === 'descending'), 0.5, subjects.length, 'descending')
  t.same(new Set(subjects.map(r => params(r).get('Subject'))), new Set(SUBJECTS), 'every subject of the vocabulary is asked')
  t.ok(share(subjects, r => params(r).get('b_start') !== '0') > 0.2, 'Subject searches ask later pages too')

  const starts = (id: string): number[] => requests.filter(r => r.classId === id).map(r => Number(params(r).get('b_start')))
  t.ok(starts('listing-first').every(s => s % PAGE === 0 && s < 20 * PAGE), 'first listings: among the first 20 pages')
  t.equal(new Set(starts('listing-first')).size, 20, 'each of the first 20 pages is listed')
  const any = starts('listing-any')
  t.ok(any.every(s => s % PAGE === 0 && s < 280 * PAGE), 'any listing: a page of the folder')
  near(t, share(any, s => s >= 20 * PAGE), 260 / 280, any.length, 'any listing beyond the first 20 pages')
  const listings = requests.filter(r => r.classId.startsWith('listing-'))
  near(t, share(listings, r => r.path.startsWith('/@search?')), 1 / 3, listings.length, 'listings asked as Volto asks the catalogue')

  const texts = requests.filter(r => r.classId.startsWith('fulltext')).map(r => params(r).get('SearchableText')!)
  near(t, share(texts, text => /^"[a-z]+ [a-z]+"$/.test(text)), 0.1, texts.length, 'phrases of two words')
  near(t, share(texts, text => /^[a-z]+\*$/.test(text)), 0.2, texts.length, 'prefixes')
  near(t, share(texts, text => /^[a-z]+ [a-z]+$/.test(text)), 0.2, texts.length, 'two words')
  // Words of every frequency: ranks drawn alike over the whole Zipf vocabulary, from the word in every talk to the rarest.
  const ranks = texts.filter(text => /^[a-z]+$/.test(text)).map(text => WORDS.indexOf(text))
  near(t, ranks.length / texts.length, 0.5, texts.length, 'single words')
  t.ok(ranks.every(rank => rank >= 0), 'single words are words of the vocabulary')
  near(t, share(ranks, rank => rank < WORDS.length / 10), 0.1, ranks.length, 'words among the commonest tenth')
  near(t, share(ranks, rank => rank >= WORDS.length - WORDS.length / 10), 0.1, ranks.length, 'words among the rarest tenth')
  const prefixes = texts.filter(text => text.endsWith('*')).map(text => text.slice(0, -1))
  t.ok(prefixes.every(p => WORDS.some(w => w.startsWith(p))), 'every prefix begins a word of the vocabulary')
})

t.test('every class draws well-formed requests, each expecting the answer its caller may have', async t => {
  const world = worldOf(1000)
  const ownerToken = new Map(world.members.map(m => [m.token, m.login]))
  for (const cls of MIX) {
    for (const r of draw(cls.id.length, world, 2000, { ids: [cls.id] })) {
      const url = new URL(r.path, 'http://site')
      const token = tokenOf(r)
      const what = `${cls.id}: ${r.method} ${r.path}`
      if (url.pathname !== r.path.split('?')[0] || r.headers.accept !== 'application/json' || r.classId !== cls.id) t.fail(`${what}: malformed`)
      if (cls.kind === 'write') {
        if (token === null) t.fail(`${what}: a write without a token`)
        // A transition has no body; a PATCH and a create, a JSON object.
        if (r.body !== undefined && (r.headers['content-type'] !== 'application/json' || typeof JSON.parse(r.body) !== 'object')) t.fail(`${what}: its body is not JSON`)
        if ((r.body === undefined) !== (cls.id === 'transition')) t.fail(`${what}: body ${r.body}`)
        continue
      }
      if (r.method !== 'GET' || r.body !== undefined) t.fail(`${what}: a read must be a bodiless GET`)
      if ((token !== null) !== cls.loggedIn) t.fail(`${what}: logged in ${token !== null}, its class ${cls.loggedIn}`)
      for (const key of ['b_start', 'b_size']) {
        const value = url.searchParams.get(key)
        if (value !== null && !(/^\d+$/.test(value) && Number(value) % PAGE === 0)) t.fail(`${what}: ${key} ${value}`)
      }
      const sort = url.searchParams.get('sort_on')
      if (sort !== null && !SORTABLE.includes(sort)) t.fail(`${what}: sort_on ${sort}`)
      const order = url.searchParams.get('sort_order')
      if (order !== null && !['ascending', 'descending'].includes(order)) t.fail(`${what}: sort_order ${order}`)
      if (cls.id.startsWith('date-range')) {
        const [a, b] = url.searchParams.getAll('effective.query').map(Date.parse)
        if (!(a <= b) || url.searchParams.get('effective.range') !== 'min:max') t.fail(`${what}: not a range`)
      }
      if (cls.id.startsWith('get-talk')) {
        // The oracle: who may view a talk, by the workflow's rules; one talk in ten may be published or retracted meanwhile.
        const index = talkIndex(r)
        const talk = world.talks[index]
        const mayViewAny = token !== null && (token.startsWith('manager-') || ownerToken.get(token) === talk.owner)
        const denied = token === null ? 401 : 403
        const expected = mayViewAny ? [200] : index % 10 === 0 ? [200, denied] : talk.published ? [200] : [denied]
        if (JSON.stringify(r.expect) !== JSON.stringify(expected)) t.fail(`${what} as ${token}: expects ${r.expect.join(' or ')}, should ${expected.join(' or ')}`)
      } else if (JSON.stringify(r.expect) !== '[200]') {
        t.fail(`${what}: a listing or search expects ${r.expect.join(' or ')}`)
      }
    }
    t.pass(`${cls.id}: 2 000 requests checked`)
  }
})

t.test('writes: PATCH as the admin or the owner, creates by Members with new titles, transitions as the admin that alternate', async t => {
  const world = worldOf(1000)
  const patches = draw(3, world, 2000, { ids: ['patch'] })
  near(t, share(patches, r => tokenOf(r) === world.admin), 0.5, patches.length, 'PATCH as the admin')
  const owners = new Map(world.members.map(m => [m.token, m.login]))
  t.ok(patches.every(r => tokenOf(r) === world.admin || owners.get(tokenOf(r)!) === world.talks[talkIndex(r)].owner), 'the others as the talk\'s owner')
  t.ok(patches.every(r => r.method === 'PATCH' && r.expect[0] === 204 && SUBJECTS.includes(JSON.parse(r.body!).subjects[0])), 'description and subjects, 204')

  const creates = draw(4, world, 500, { ids: ['create'] })
  t.equal(new Set(creates.map(r => JSON.parse(r.body!).title)).size, 500, 'every new talk has a title of its own')
  t.ok(creates.every(r => r.path === '/talks' && owners.has(tokenOf(r)!) && r.expect[0] === 201), 'POSTed to /talks by Members')

  // Twenty clients: each publishes and retracts its own talks only, one in ten of them.
  const touched = Array.from({ length: 20 }, (_, loop) => draw(loop, world, 300, { ids: ['transition'], loop, loops: 20 }))
  const talksOf = touched.map(requests => new Set(requests.map(talkIndex)))
  t.ok(talksOf.every((mine, loop) => talksOf.every((theirs, other) => other === loop || [...mine].every(i => !theirs.has(i)))), 'no two clients touch the same talk')
  t.ok(talksOf.every(mine => [...mine].every(i => i % 10 === 0)), 'only talks of the workflow pool')
  for (const requests of touched) {
    const state = new Map<number, boolean>()
    for (const r of requests) {
      const index = talkIndex(r)
      const published = state.get(index) ?? world.talks[index].published
      if (!r.path.endsWith(published ? '/@workflow/retract' : '/@workflow/publish') || tokenOf(r) !== world.admin) t.fail(`${r.path}: the talk is ${published ? 'published' : 'private'}`)
      state.set(index, !published)
    }
  }

  // A transition not taken leaves the talk as it was: the next one on it is the same.
  const drawer = createDrawer({ seed: 5, world: worldOf(10), classes: classesOf(['transition']) })
  const first = drawer.next()
  drawer.answered(first, false)
  t.equal(drawer.next().path, first.path, 'refused: asked again')
  t.throws(() => createDrawer({ seed: 1, world: worldOf(10), loop: 1, loops: 2 }), /no talk to publish or retract/, 'a client without talks of its own to transition is refused at once')
  t.throws(() => classesOf(['get-talk', 'nothing']), /no class nothing/)
})

t.test('the same seed draws the same requests, another seed others', async t => {
  const world = worldOf(1000)
  fc.assert(fc.property(fc.integer({ min: 0, max: 2 ** 32 - 2 }), seed => {
    const once = draw(seed, world, 200)
    t.same(draw(seed, world, 200), once)
    t.notSame(draw(seed + 1, world, 200), once)
  }), { numRuns: 20 })
})
