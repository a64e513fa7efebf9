// A random site for the authorization property tests (not a test file): users with random
// global roles, talks by random owners in every workflow state with random dates, subjects,
// searchable words and images, all made over HTTP as a client would.
import fc from 'fast-check'
import { talkBody, type TestApp } from '../helper.js'
import { GLOBAL_ROLES, type Caller, type Item, type Role, type State } from './permission-model.js'
import { png, upload } from '../image-samples.js'

/** Words searched with SearchableText: none is a prefix of another or of any other word of the site (Solr adds `word*`). */
export const WORDS = ['quokka', 'narwhal', 'axolotl', 'pangolin'] as const
export const SUBJECTS = ['Plone', 'Fastify', 'Solr'] as const

const DAY = 86_400_000
const DATES = {
  effective: { none: null, past: -10 * DAY, future: 10 * DAY },
  expires: { none: null, past: -5 * DAY, future: 20 * DAY }
} as const
type When = 'none' | 'past' | 'future'

/** How a talk reached its state; the last two end private after a detour. */
type Lifecycle = 'private' | 'pending' | 'published' | 'retracted' | 'rejected'
type Step = ['owner' | 'reviewer', string]
const STEPS: Record<Lifecycle, Step[]> = {
  private: [],
  pending: [['owner', 'submit']],
  published: [['owner', 'submit'], ['reviewer', 'publish']],
  retracted: [['owner', 'submit'], ['reviewer', 'publish'], ['owner', 'retract']],
  rejected: [['owner', 'submit'], ['reviewer', 'reject']]
}
const REACHED: Record<Lifecycle, State> = { private: 'private', pending: 'pending', published: 'published', retracted: 'private', rejected: 'private' }

interface TalkPlan { owner: number, lifecycle: Lifecycle, effective: When, expires: When, words: string[], subjects: string[], image: boolean }
export interface WorldPlan { extraUsers: Role[][], talks: TalkPlan[] }

/** Weighted towards talks without dates and towards published ones, so that many talks are visible to many callers. */
const when = fc.oneof({ arbitrary: fc.constant<When>('none'), weight: 2 }, fc.constantFrom<When>('past', 'future'))
const lifecycle = fc.oneof(
  { arbitrary: fc.constant<Lifecycle>('published'), weight: 2 },
  fc.constantFrom<Lifecycle>('private', 'pending', 'retracted', 'rejected'))
const talkPlan: fc.Arbitrary<TalkPlan> = fc.record({
  owner: fc.nat(),
  lifecycle,
  effective: when,
  expires: when,
  words: fc.subarray([...WORDS], { minLength: 1, maxLength: 2 }),
  subjects: fc.subarray([...SUBJECTS]),
  image: fc.boolean()
}).map(plan => plan.effective === 'future' && plan.expires === 'past' ? { ...plan, expires: 'none' as const } : plan)

/** One user per single global role and one without any, then a few with random combinations. */
export const worldPlan: fc.Arbitrary<WorldPlan> = fc.record({
  extraUsers: fc.array(fc.subarray([...GLOBAL_ROLES], { minLength: 2, maxLength: 3 }), { maxLength: 3 }),
  talks: fc.array(talkPlan, { minLength: 16, maxLength: 22 })
})

export interface World {
  /** Anonymous, every user, and admin. */
  callers: Caller[]
  items: Item[]
  token: (caller: Caller) => string | undefined
  /** What the world is, in one line per caller and object (printed with a failure). */
  describe: () => string
}

/** Three letters from a number (aaa, aab …): fixed length, so that no code is a prefix of another. */
const code = (n: number): string => [676, 26, 1].map(d => String.fromCharCode(97 + Math.floor(n / d) % 26)).join('')

export const pathOf = (url: string): string => new URL(url).pathname.replace('/++api++', '')

function expectStatus (res: { statusCode: number, body: string }, status: number, what: string): void {
  if (res.statusCode !== status) throw new Error(`${what}: ${res.statusCode} ${res.body.slice(0, 300)}`)
}

/** Builds the planned site over HTTP; `now` anchors the dates. */
export async function buildWorld (app: TestApp, plan: WorldPlan, now = Date.now()): Promise<World> {
  const roleSets: Role[][] = [[], ...GLOBAL_ROLES.map(role => [role]), ...plan.extraUsers]
  const users: Caller[] = roleSets.map((roles, i) => ({ userId: `user${i}`, roles }))
  const callers: Caller[] = [{ userId: null, roles: [] }, ...users, { userId: 'admin', roles: ['Manager'] }]
  // Together: each login costs a slow password hash, which runs in libuv's thread pool.
  const tokens = new Map<string | null, string | undefined>([[null, undefined], ...await Promise.all(
    callers.slice(1).map(async c => [c.userId, await app.tokenFor(c.userId!, [...c.roles])] as const))])
  const token = (caller: Caller): string | undefined => tokens.get(caller.userId)
  const adminToken = tokens.get('admin')

  const folder = (await app.call('GET', '/talks', undefined, adminToken)).json()
  const items: Item[] = [{
    path: '/talks', portalType: 'folder', state: folder.review_state, owner: folder.creators[0], effective: Date.parse(folder.effective), expires: null, subjects: [], words: [], marker: null, hasImage: false
  }]
  // Talks are made concurrently, as clients would; their titles, hence their ids, are unique.
  items.push(...await Promise.all(plan.talks.map(async (talk, n): Promise<Item> => {
    const owner = users[talk.owner % users.length]
    const marker = `zzsecret${code(n)}`
    const at = (field: 'effective' | 'expires'): number | null => {
      const offset = DATES[field][talk[field]]
      return offset === null ? null : now + offset
    }
    const dates: Record<string, string> = {}
    for (const field of ['effective', 'expires'] as const) if (at(field) !== null) dates[field] = new Date(at(field)!).toISOString()
    const created = await app.call('POST', '/talks', talkBody({
      title: `${talk.words.join(' ')} ${code(n)}`,
      details: `Private notes ${marker}`,
      subjects: talk.subjects,
      ...dates,
      ...(talk.image ? { image: upload(png(1, 1), 'speaker.png') } : {})
    }), token(owner))
    expectStatus(created, 201, `create talk ${n}`)
    const path = pathOf(created.json()['@id'])
    for (const [who, transition] of STEPS[talk.lifecycle]) {
      expectStatus(await app.call('POST', `${path}/@workflow/${transition}`, {}, who === 'owner' ? token(owner) : adminToken), 200, `${transition} ${path}`)
    }
    return {
      path, portalType: 'talk', state: REACHED[talk.lifecycle], owner: owner.userId!, effective: at('effective'), expires: at('expires'), subjects: talk.subjects, words: talk.words, marker, hasImage: talk.image
    }
  })))
  await readDates(app, items, adminToken)
  return {
    callers,
    items,
    token,
    describe: () => [
      ...callers.map(c => `caller ${c.userId ?? 'anonymous'}: [${c.roles.join(', ')}]`),
      ...items.map(i => `${i.path}: ${i.state}, owner ${i.owner}, effective ${iso(i.effective)}, expires ${iso(i.expires)}, subjects [${i.subjects.join(', ')}], words [${i.words.join(', ')}], marker ${i.marker ?? '-'}${i.hasImage ? ', image' : ''}`)
    ].join('\n')
  }
}

const iso = (ms: number | null): string => ms === null ? '-' : new Date(ms).toISOString()

/**
 * Checks that each object has its planned state and dates (to the second, as they are
 * served), and reads the dates not planned: publishing sets `effective` when none was given.
 */
async function readDates (app: TestApp, items: Item[], token: string | undefined): Promise<void> {
  for (const item of items) {
    const res = await app.call('GET', item.path, undefined, token)
    expectStatus(res, 200, `GET ${item.path}`)
    const body = res.json()
    if (body.review_state !== item.state) throw new Error(`${item.path} is ${body.review_state}, planned ${item.state}`)
    for (const field of ['effective', 'expires'] as const) {
      const served = body[field] === null ? null : Date.parse(body[field])
      const planned = item[field]
      if (planned !== null && (served === null || Math.abs(served - planned) >= 1000)) throw new Error(`${item.path} has ${field} ${body[field]}, planned ${iso(planned)}`)
      item[field] = served
    }
  }
}

/** The transition that changes who may see a talk in each state, and who takes it. */
const FLIP: Record<State, { by: Step[0], transition: string, to: State }> = {
  published: { by: 'owner', transition: 'retract', to: 'private' },
  private: { by: 'reviewer', transition: 'publish', to: 'published' },
  pending: { by: 'reviewer', transition: 'reject', to: 'private' }
}

/** Takes on every talk the transition that changes who may see it (e.g. while Solr is down). */
export async function flipVisibility (app: TestApp, world: World): Promise<void> {
  const adminToken = world.token({ userId: 'admin', roles: ['Manager'] })
  const talks = world.items.filter(i => i.portalType === 'talk')
  for (const talk of talks) {
    const { by, transition, to } = FLIP[talk.state]
    const token = by === 'owner' ? world.token(world.callers.find(c => c.userId === talk.owner)!) : adminToken
    expectStatus(await app.call('POST', `${talk.path}/@workflow/${transition}`, {}, token), 200, `${transition} ${talk.path}`)
    talk.state = to
  }
  await readDates(app, talks, adminToken)
}
