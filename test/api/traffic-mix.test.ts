import t from 'tap'
import { build } from '../helper.js'
import { talkBody } from '../../bench/talks.mjs'
import { classesOf, createDrawer, MIX, type DrawnRequest, type World } from '../../bench/traffic-mix.mjs'
import { loadWorld } from '../../bench/world.mjs'

// The varied traffic of `npm run bench` against the service itself: the
// world read from its database (bench/world.mjs) and every class of the mix
// (bench/traffic-mix.mjs) drawn and sent; each answer must be one its request
// expects (a read of a talk the caller may not view: its denial), and every
// search must be the catalogue's. A request the service does not understand
// (a sort it does not know, a malformed range, a body it refuses) or an
// expectation the workflow's rules contradict fails here, not in the bench.

const TALKS = 40
const OWNERS = 4
const PER_CLASS = 30
const MIXED = 400

t.test('the service answers every drawn request as the draw expects', async t => {
  const { app, databaseUrl, call, tokenFor } = await build(t)
  const admin = await tokenFor('admin')
  const members = await Promise.all(Array.from({ length: 8 }, async (_, i) => {
    const login = i < OWNERS ? `speaker-${i}` : `member-${i}`
    return { login, token: await tokenFor(login) }
  }))
  const managers = [await tokenFor('manager-0', ['Manager'])]
  // Talks as the seeder makes them: the bench's own bodies, owned by speakers, seven in ten published.
  for (let n = 0; n < TALKS; n++) {
    const created = await call('POST', '/talks', talkBody(n), members[n % OWNERS].token)
    t.equal(created.statusCode, 201, `talk ${n} created`)
    if (n % 10 < 7) t.equal((await call('POST', `${new URL(created.json()['@id']).pathname}/@workflow/publish`, undefined, admin)).statusCode, 200)
  }

  const world: World = await loadWorld(databaseUrl, { admin, members, managers })
  t.equal(world.talks.length, TALKS, 'the world holds every talk')
  t.equal(world.talks.filter(talk => talk.published).length, 28, 'and knows which are published')
  t.same(world.talks.slice(0, OWNERS).map(talk => talk.owner), members.slice(0, OWNERS).map(m => m.login), 'in folder order, with their owners')
  t.ok(world.effective[0] <= world.effective[1] && world.effective[1] <= Date.now(), 'the span of the published talks\' effective dates')

  const unexpected: string[] = []
  const answered = new Map<string, Set<number>>(MIX.map(c => [c.id, new Set()]))
  const send = async (drawer: ReturnType<typeof createDrawer>, request: DrawnRequest): Promise<void> => {
    const res = await app.inject({ method: request.method, url: request.path, headers: request.headers, ...(request.body !== undefined ? { payload: request.body } : {}) })
    const engine = res.headers['x-search-engine']
    const asExpected = request.expect.includes(res.statusCode) && (engine === undefined || engine === 'catalogue')
    if (!asExpected) unexpected.push(`${request.classId}: ${request.method} ${request.path} ${request.body ?? ''} answered ${res.statusCode} (${engine ?? ''}), expected ${request.expect.join(' or ')}: ${res.body.slice(0, 300)}`)
    drawer.answered(request, asExpected)
    answered.get(request.classId)!.add(res.statusCode)
  }

  for (const cls of MIX) {
    const drawer = createDrawer({ seed: 23, world, classes: classesOf([cls.id]) })
    for (let i = 0; i < PER_CLASS; i++) await send(drawer, drawer.next())
  }
  // As the bench does before each measurement: the world as the transitions above left it.
  const mixed = createDrawer({ seed: 2023, world: await loadWorld(databaseUrl, { admin, members, managers }) })
  for (let i = 0; i < MIXED; i++) await send(mixed, mixed.next())
  t.same(unexpected, [], 'every answer was one its request expected')

  // The reads of talks met private talks as well; the writes wrote.
  t.same([...answered.get('get-talk')!].sort(), [200, 401], 'anonymous reads of talks: viewed and refused')
  t.same([...answered.get('get-talk-logged-in')!].sort(), [200, 403], 'logged-in reads of talks: viewed and refused')
  for (const [id, statuses] of [['patch', [204]], ['create', [201]], ['transition', [200]]] as const) t.same([...answered.get(id)!], statuses, `${id}: written`)
  const talks = await call('GET', '/talks?b_size=100', undefined, admin)
  t.ok(talks.json().items_total > TALKS, 'the creates added talks')
})
