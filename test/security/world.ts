// A random site for the authorization property tests (not a test file): users with random
// global roles, groups of them, folders by random owners in every workflow state (private
// folders that hold published talks and published folders), talks by random owners in every
// workflow state with random dates, subjects, searchable words and images, and folders shared
// with users and groups (the sharing page's local roles, some folders not inheriting), all
// made over HTTP as a client would.
import fc from 'fast-check'
import { talkBody, type TestApp } from '../helper.js'
import { GLOBAL_ROLES, inForce, LOCAL_ROLES, STATES, trail, type Caller, type Item, type LocalRole, type Role, type State } from './permission-model.js'
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

/**
 * `folder`: where the talk is made, 0 for /talks, else that folder of the plan (modulo their number).
 */
interface TalkPlan { owner: number, folder: number, lifecycle: Lifecycle, effective: When, expires: When, words: string[], subjects: string[], image: boolean }
/** `parent`: 0 for /talks, else a folder planned before this one (modulo their number). */
interface FolderPlan { owner: number, parent: number, state: State }
/** A grant of the sharing page on the folder `at` (0 for /talks, else that folder of the plan, modulo their number) to a user or a group (by number, modulo theirs). */
interface SharePlan { at: number, to: 'user' | 'group', who: number, roles: LocalRole[] }
/** `groups`: each group's members (users by number, modulo theirs); `closed`: the folders (as `at`) that do not inherit local roles. */
export interface WorldPlan { extraUsers: Role[][], folders: FolderPlan[], talks: TalkPlan[], groups: number[][], shares: SharePlan[], closed: number[] }

/** Weighted towards talks without dates and towards published ones, so that many talks are visible to many callers. */
const when = fc.oneof({ arbitrary: fc.constant<When>('none'), weight: 2 }, fc.constantFrom<When>('past', 'future'))
const lifecycle = fc.oneof(
  { arbitrary: fc.constant<Lifecycle>('published'), weight: 2 },
  fc.constantFrom<Lifecycle>('private', 'pending', 'retracted', 'rejected'))
const talkPlan: fc.Arbitrary<TalkPlan> = fc.record({
  owner: fc.nat(),
  folder: fc.nat(),
  lifecycle,
  effective: when,
  expires: when,
  words: fc.subarray([...WORDS], { minLength: 1, maxLength: 2 }),
  subjects: fc.subarray([...SUBJECTS]),
  image: fc.boolean()
}).map(plan => plan.effective === 'future' && plan.expires === 'past' ? { ...plan, expires: 'none' as const } : plan)

const folderPlan: fc.Arbitrary<FolderPlan> = fc.record({ owner: fc.nat(), parent: fc.nat(), state: fc.constantFrom(...STATES) })
const sharePlan: fc.Arbitrary<SharePlan> = fc.record({ at: fc.nat(), to: fc.constantFrom<SharePlan['to']>('user', 'group'), who: fc.nat(), roles: fc.subarray([...LOCAL_ROLES], { minLength: 1, maxLength: 2 }) })

/**
 * One user per single global role and one without any, then a few with random combinations.
 * The first two folders are always a private folder in /talks and a published folder inside
 * it, and the first two talks are published, one in each: the objects whose summaries a caller
 * who may view them must not learn the private folder from (issue 22). The first group always
 * holds the user without global roles and is Reader of that private folder; the third folder
 * (when there is one) holds a private talk: what a Reader above it sees only by the local role.
 */
export const worldPlan: fc.Arbitrary<WorldPlan> = fc.record({
  extraUsers: fc.array(fc.subarray([...GLOBAL_ROLES], { minLength: 2, maxLength: 3 }), { maxLength: 3 }),
  folders: fc.array(folderPlan, { minLength: 2, maxLength: 5 }),
  talks: fc.array(talkPlan, { minLength: 16, maxLength: 22 }),
  groups: fc.array(fc.array(fc.nat(), { maxLength: 4 }), { minLength: 1, maxLength: 3 }),
  shares: fc.array(sharePlan, { maxLength: 6 }),
  closed: fc.array(fc.nat(), { maxLength: 2 })
}).map(({ extraUsers, folders: [first, second, ...more], talks: [one, two, three, ...rest], groups: [readers, ...groups], shares, closed }) => ({
  extraUsers,
  folders: [{ ...first, parent: 0, state: 'private' as const }, { ...second, parent: 1, state: 'published' as const }, ...more],
  talks: [{ ...one, folder: 1, lifecycle: 'published' as const }, { ...two, folder: 2, lifecycle: 'published' as const }, { ...three, folder: 1, lifecycle: 'private' as const }, ...rest],
  groups: [[0, ...readers], ...groups],
  shares: [{ at: 1, to: 'group' as const, who: 0, roles: ['Reader' as const] }, ...shares],
  closed
}))

export interface World {
  /** Anonymous, every user (with the groups they are in), and admin. */
  callers: Caller[]
  items: Item[]
  token: (caller: Caller) => string | undefined
  /** What the site knows of its users besides their ids (full names, e-mails): no read channel shows them. */
  userFacts: string[]
  /** What the world is, in one line per caller and object (printed with a failure). */
  describe: () => string
}

/** Three letters from a number (aaa, aab …): fixed length, so that no code is a prefix of another. */
const code = (n: number): string => [676, 26, 1].map(d => String.fromCharCode(97 + Math.floor(n / d) % 26)).join('')

export const pathOf = (url: string): string => new URL(url).pathname.replace('/++api++', '')

function expectStatus (res: { statusCode: number, body: string }, status: number, what: string): void {
  if (res.statusCode !== status) throw new Error(`${what}: ${res.statusCode} ${res.body.slice(0, 300)}`)
}

/**
 * How a folder reaches its state: published while the site is built (so that its planned
 * owners can add inside it), then, once its content is made, to its planned state.
 */
const FOLDER_OPENING: Step[] = [['owner', 'submit'], ['reviewer', 'publish']]
const FOLDER_CLOSING: Record<State, Step[]> = { published: [], private: [['owner', 'retract']], pending: [['owner', 'retract'], ['owner', 'submit']] }

/** Builds the planned site over HTTP; `now` anchors the dates. */
export async function buildWorld (app: TestApp, plan: WorldPlan, now = Date.now()): Promise<World> {
  const roleSets: Role[][] = [[], ...GLOBAL_ROLES.map(role => [role]), ...plan.extraUsers]
  const userIds = roleSets.map((_, i) => `user${i}`)
  const groupIds = plan.groups.map((_, g) => `group${g}`)
  const members = plan.groups.map(numbers => new Set(numbers.map(n => userIds[n % userIds.length])))
  const users: Caller[] = roleSets.map((roles, i) => ({ userId: userIds[i], roles, groups: groupIds.filter((_, g) => members[g].has(userIds[i])) }))
  const callers: Caller[] = [{ userId: null, roles: [], groups: [] }, ...users, ADMIN]
  // Together: each login costs a slow password hash, which runs in libuv's thread pool.
  const tokens = new Map<string | null, string | undefined>([[null, undefined], ...await Promise.all(
    callers.slice(1).map(async c => [c.userId, await app.tokenFor(c.userId!, [...c.roles])] as const))])
  const token = (caller: Caller): string | undefined => tokens.get(caller.userId)
  const adminToken = tokens.get('admin')
  for (const [g, id] of groupIds.entries()) expectStatus(await app.call('POST', '/@groups', { groupname: id, users: [...members[g]] }, adminToken), 201, `create ${id}`)
  const take = async (path: string, steps: Step[], owner: Caller): Promise<void> => {
    for (const [who, transition] of steps) {
      expectStatus(await app.call('POST', `${path}/@workflow/${transition}`, {}, who === 'owner' ? token(owner) : adminToken), 200, `${transition} ${path}`)
    }
  }

  const talksFolder = (await app.call('GET', '/talks', undefined, adminToken)).json()
  const items: Item[] = [{
    path: '/talks', portalType: 'folder', state: talksFolder.review_state, title: talksFolder.title, description: talksFolder.description, owner: talksFolder.creators[0], effective: Date.parse(talksFolder.effective), expires: null, subjects: [], words: [], marker: null, hasImage: false, ...TALKS_SHARING
  }]
  // Folders one after the other (each may be inside one made before it), with ids that do not
  // hold their markers: a summary withheld from a caller still says its `@id`.
  const containers = ['/talks']
  const folders: Array<{ item: Item, owner: Caller, closing: Step[] }> = []
  for (const [n, folder] of plan.folders.entries()) {
    const owner = users[folder.owner % users.length]
    const marker = `zzfolder${code(n)}`
    const created = await app.call('POST', containers[folder.parent % containers.length], {
      '@type': 'folder', id: `folder-${code(n)}`, title: `Folder ${marker}`, description: `About ${marker}`
    }, token(owner))
    expectStatus(created, 201, `create folder ${n}`)
    const body = created.json()
    await take(pathOf(body['@id']), FOLDER_OPENING, owner)
    containers.push(pathOf(body['@id']))
    const item: Item = {
      path: pathOf(body['@id']), portalType: 'folder', state: folder.state, title: body.title, description: body.description, owner: owner.userId!, effective: null, expires: null, subjects: [], words: [], marker, hasImage: false, ...NOT_SHARED
    }
    folders.push({ item, owner, closing: FOLDER_CLOSING[folder.state] })
  }
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
    const title = `${talk.words.join(' ')} ${code(n)}`
    const description = `Summary ${marker}`
    const created = await app.call('POST', containers[talk.folder % containers.length], talkBody({
      title,
      description,
      details: `Private notes ${marker}`,
      subjects: talk.subjects,
      ...dates,
      ...(talk.image ? { image: upload(png(1, 1), 'speaker.png') } : {})
    }), token(owner))
    expectStatus(created, 201, `create talk ${n}`)
    const path = pathOf(created.json()['@id'])
    await take(path, STEPS[talk.lifecycle], owner)
    return {
      path, portalType: 'talk', state: REACHED[talk.lifecycle], title, description, owner: owner.userId!, effective: at('effective'), expires: at('expires'), subjects: talk.subjects, words: talk.words, marker, hasImage: talk.image, ...NOT_SHARED
    }
  })))
  for (const { item, owner, closing } of folders) await take(item.path, closing, owner)
  items.push(...folders.map(f => f.item))
  await share(app, plan, containers.map(path => items.find(i => i.path === path)!), { userIds, groupIds }, adminToken)
  const byPath = new Map(items.map(item => [item.path, item]))
  for (const item of items) item.roles = inForce(trail(item.path).map(path => byPath.get(path)!.sharing))
  // One talk is being edited: its lock info names its holder to every caller who may view it.
  const edited = items[1]
  expectStatus(await app.call('POST', `${edited.path}/@lock`, {}, token(callers.find(c => c.userId === edited.owner)!)), 200, `lock ${edited.path}`)
  await readDates(app, items, adminToken)
  return {
    callers,
    items,
    token,
    // test/helper.ts gives each user these.
    userFacts: users.flatMap(u => [`User ${u.userId!}`, `${u.userId!}@example.org`]),
    describe: () => [
      ...callers.map(c => `caller ${c.userId ?? 'anonymous'}: [${c.roles.join(', ')}], groups [${c.groups.join(', ')}]`),
      ...items.map(i => `${i.path} (${i.portalType}): ${i.state}, owner ${i.owner}, effective ${iso(i.effective)}, expires ${iso(i.expires)}, subjects [${i.subjects.join(', ')}], words [${i.words.join(', ')}], marker ${i.marker ?? '-'}${i.hasImage ? ', image' : ''}, shared ${JSON.stringify(i.sharing)}, local roles ${JSON.stringify(i.roles)}`)
    ].join('\n')
  }
}

const iso = (ms: number | null): string => ms === null ? '-' : new Date(ms).toISOString()

const ADMIN: Caller = { userId: 'admin', roles: ['Manager'], groups: [] }
const NOT_SHARED: Pick<Item, 'sharing' | 'roles'> = { sharing: { grants: {}, inherit: true }, roles: {} }
/** What the talk type declares for its folder /talks (content-types/talk): every logged-in user may add there. */
const TALKS_SHARING: Pick<Item, 'sharing' | 'roles'> = { sharing: { grants: { Authenticated: ['Contributor'] }, inherit: true }, roles: {} }

/**
 * The planned sharing, by admin on the sharing page: the folders that do not inherit first,
 * then each folder's grants, those of one principal merged (an entry sets a principal's roles
 * whole). Blocking copies admin's acquired roles onto the folder (plone.app.workflow): at most
 * /talks' Contributor, which shows nothing to anyone, so the model leaves it out.
 */
async function share (app: TestApp, plan: WorldPlan, folders: Item[], names: { userIds: string[], groupIds: string[] }, adminToken: string | undefined): Promise<void> {
  const folderOf = (at: number): Item => folders[at % folders.length]
  for (const folder of new Set(plan.closed.map(folderOf))) {
    expectStatus(await app.call('POST', `${folder.path}/@sharing`, { inherit: false }, adminToken), 204, `inherit off on ${folder.path}`)
    folder.sharing = { ...folder.sharing, inherit: false }
  }
  const grants = new Map<Item, Map<string, { type: 'user' | 'group', roles: Set<LocalRole> }>>()
  for (const { at, to, who, roles } of plan.shares) {
    const id = to === 'user' ? names.userIds[who % names.userIds.length] : names.groupIds[who % names.groupIds.length]
    const byPrincipal = grants.get(folderOf(at)) ?? new Map<string, { type: 'user' | 'group', roles: Set<LocalRole> }>()
    grants.set(folderOf(at), byPrincipal)
    const entry = byPrincipal.get(id) ?? { type: to, roles: new Set<LocalRole>() }
    byPrincipal.set(id, entry)
    for (const role of roles) entry.roles.add(role)
  }
  for (const [folder, byPrincipal] of grants) {
    const entries = [...byPrincipal].map(([id, { type, roles }]) => ({ id, type, roles: Object.fromEntries([...roles].map(role => [role, true])) }))
    expectStatus(await app.call('POST', `${folder.path}/@sharing`, { entries }, adminToken), 204, `share ${folder.path}`)
    const added: Record<string, LocalRole[]> = Object.fromEntries([...byPrincipal].map(([id, { roles }]) => [id, [...roles]]))
    folder.sharing = { ...folder.sharing, grants: { ...folder.sharing.grants, ...added } }
  }
}

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

/**
 * Takes on every talk and every folder but /talks the transition that changes who may see it
 * (e.g. while Solr is down).
 */
export async function flipVisibility (app: TestApp, world: World): Promise<void> {
  const adminToken = world.token(ADMIN)
  const flipped = world.items.filter(i => i.path !== '/talks')
  for (const item of flipped) {
    const { by, transition, to } = FLIP[item.state]
    const token = by === 'owner' ? world.token(world.callers.find(c => c.userId === item.owner)!) : adminToken
    expectStatus(await app.call('POST', `${item.path}/@workflow/${transition}`, {}, token), 200, `${transition} ${item.path}`)
    item.state = to
  }
  await readDates(app, flipped, adminToken)
}
