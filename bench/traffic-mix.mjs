/**
 * The varied traffic of `npm run bench` (issue 23): what a site's crowd asks,
 * drawn request by request from a seeded random source, in the proportions
 * of `MIX`. Pure: no I/O and no clock, so that the same seed and the same
 * world always give the same requests (bench/crowd.mjs sends them;
 * test/unit/traffic-mix.test.ts checks the draw, test/api/traffic-mix.test.ts
 * the service's answers to it).
 *
 * The world is what the crowd knows of the site (bench/world.mjs reads it):
 *   talks      [{ path, owner, published }], every talk of /talks in folder order
 *   effective  [from, to], the span of the published talks' `effective` (ms)
 *   admin      the admin's token
 *   members    [{ login, token }], Members (the talks' owners among them)
 *   managers   [token], a few users with the global role Manager
 *
 * Every request says which answers it expects (`expect`): a read of a talk
 * the caller may not view expects its denial (401 anonymous, 403 logged in),
 * which counts as an answer of its class. Talks that the crowd publishes and
 * retracts (`inWorkflowPool`: one in ten) may be in either state when read,
 * so a read of one expects either answer.
 */
import { SUBJECTS, WORDS, seededRandom, talkBody } from './talks.mjs'

export const PAGE_SIZE = 25
/** Listings "mostly among the first 20 pages". */
export const FIRST_PAGES = 20
export const SORTS = ['sortable_title', 'effective', 'modified', 'created', 'start', 'getObjPositionInParent']
export const ORDERS = ['ascending', 'descending']
/** Share of the logged-in reads that Managers ask (Members ask the rest). */
export const MANAGERS_SHARE = 0.1
/** One talk in this many may be published and retracted by the crowd (`transition`). */
export const WORKFLOW_EVERY = 10
/** Talks holding a subject: each has two drawn alike from SUBJECTS. */
const SUBJECT_SHARE = 1 - ((SUBJECTS.length - 1) / SUBJECTS.length) ** 2
/** Searches and date ranges ask their first page this often, another page of their matches otherwise. */
const FIRST_PAGE_SHARE = 0.7
/** Date ranges reach this far beyond the published talks' span on each side (a share of the span). */
const RANGE_MARGIN = 0.1

const OK = 200
const CREATED = 201
const NO_CONTENT = 204
const JSON_ACCEPT = { accept: 'application/json' }

const integer = (random, n) => Math.floor(random() * n)
const pick = (random, list) => list[integer(random, list.length)]
const pages = matches => Math.max(1, Math.ceil(matches / PAGE_SIZE))
const query = params => new URLSearchParams(params).toString()

export const inWorkflowPool = index => index % WORKFLOW_EVERY === 0

/** A caller of a read: anonymous, or logged in (a Member mostly, a Manager now and then). */
function callerOf (random, world, loggedIn) {
  if (!loggedIn) return { login: null, token: null, manager: false }
  if (random() < MANAGERS_SHARE) return { login: null, token: pick(random, world.managers), manager: true }
  const member = pick(random, world.members)
  return { login: member.login, token: member.token, manager: false }
}

const authorised = token => token === null ? JSON_ACCEPT : { ...JSON_ACCEPT, authorization: `Bearer ${token}` }

/** What a GET of `talk` answers this caller: the talk, or its denial. */
function viewAnswers (talk, index, caller) {
  const denied = caller.token === null ? 401 : 403
  if (caller.manager || (caller.login !== null && caller.login === talk.owner)) return [OK]
  if (inWorkflowPool(index)) return [OK, denied]
  return [talk.published ? OK : denied]
}

/** `first` pages out of `all` (uniform), or any of them. */
const pageStart = (random, all, first = all) => integer(random, Math.min(first, all)) * PAGE_SIZE
const somePage = (random, matches) => random() < FIRST_PAGE_SHARE ? 0 : pageStart(random, pages(matches))

/**
 * A listing of /talks, as a client pages it: the folder itself (`GET
 * /talks?b_start=`), or as Volto's contents view asks the catalogue.
 */
function listing (random, world, caller, first) {
  const start = pageStart(random, pages(world.published), first)
  const path = random() < 2 / 3
    ? `/talks?${query({ b_start: start })}`
    : `/@search?${query({ 'path.query': '/talks', 'path.depth': 1, sort_on: 'getObjPositionInParent', sort_order: 'ascending', metadata_fields: '_all', b_size: PAGE_SIZE, b_start: start })}`
  return { method: 'GET', path, headers: authorised(caller.token), expect: [OK] }
}

const getTalk = (random, world, caller) => {
  const index = integer(random, world.talks.length)
  const talk = world.talks[index]
  return { method: 'GET', path: talk.path, headers: authorised(caller.token), expect: viewAnswers(talk, index, caller) }
}

const subjectSearch = (random, world, caller) => ({
  method: 'GET',
  path: `/@search?${query({ Subject: pick(random, SUBJECTS), sort_on: pick(random, SORTS), sort_order: pick(random, ORDERS), b_start: somePage(random, world.published * SUBJECT_SHARE) })}`,
  headers: authorised(caller.token),
  expect: [OK]
})

/**
 * Full-text words of every frequency: a word's rank is drawn alike over the
 * whole Zipf vocabulary (the commonest is in every talk, the rarest in few),
 * asked alone, with another, as a prefix, or as a phrase of a talk's text.
 */
export const FULL_TEXT_FORMS = [
  { form: 'word', share: 0.5, text: random => pick(random, WORDS) },
  { form: 'two words', share: 0.2, text: random => `${pick(random, WORDS)} ${pick(random, WORDS)}` },
  {
    form: 'prefix',
    share: 0.2,
    text: random => {
      const word = pick(random, WORDS)
      return `${word.length <= 3 ? word : word.slice(0, 3 + integer(random, word.length - 3))}*`
    }
  },
  {
    form: 'phrase',
    share: 0.1,
    text: (random, world) => {
      const description = talkBody(integer(random, world.talks.length)).description.toLowerCase().split(' ')
      const at = integer(random, description.length - 2)
      return `"${description[at]} ${description[at + 1]}"`
    }
  }
]

function fullTextOf (random, world) {
  let x = random()
  const form = FULL_TEXT_FORMS.find(f => (x -= f.share) < 0) ?? FULL_TEXT_FORMS.at(-1)
  return form.text(random, world)
}

const fullText = (random, world, caller) => ({
  method: 'GET',
  path: `/@search?${query({ SearchableText: fullTextOf(random, world) })}`,
  headers: authorised(caller.token),
  expect: [OK]
})

function dateRange (random, world, caller) {
  const [from, to] = world.effective
  const margin = (to - from) * RANGE_MARGIN
  const at = () => from - margin + random() * (to - from + 2 * margin)
  const [a, b] = [at(), at()].sort((x, y) => x - y)
  const share = to > from ? (Math.min(b, to) - Math.max(a, from)) / (to - from) : 1
  const params = new URLSearchParams([
    ['effective.query', new Date(a).toISOString()], ['effective.query', new Date(b).toISOString()], ['effective.range', 'min:max'],
    ['sort_on', 'effective'], ['sort_order', pick(random, ORDERS)], ['b_start', String(somePage(random, world.published * Math.max(0, share)))]
  ])
  return { method: 'GET', path: `/@search?${params}`, headers: authorised(caller.token), expect: [OK] }
}

const READS = [
  { id: 'get-talk', title: 'GET a random talk', share: 30, ask: getTalk },
  { id: 'listing-first', title: `listing /talks, first ${FIRST_PAGES} pages`, share: 12, ask: (random, world, caller) => listing(random, world, caller, FIRST_PAGES) },
  { id: 'listing-any', title: 'listing /talks, any page', share: 3, ask: (random, world, caller) => listing(random, world, caller, Infinity) },
  { id: 'subject', title: '@search Subject, random sort and page', share: 20, ask: subjectSearch },
  { id: 'fulltext', title: '@search SearchableText', share: 10, ask: fullText },
  { id: 'date-range', title: '@search effective range', share: 5, ask: dateRange }
]
const ANONYMOUS_READS = READS.reduce((sum, r) => sum + r.share, 0)
const LOGGED_IN_READS = 12

const JSON_BODY = { ...JSON_ACCEPT, 'content-type': 'application/json' }
const sentence = (random, n) => Array.from({ length: n }, () => pick(random, WORDS)).join(' ')

/** A PATCH of a random talk's description and subjects, as the admin or as the talk's owner. */
function patch (random, world) {
  const talk = pick(random, world.talks)
  const owner = world.tokenOf.get(talk.owner)
  const token = random() < 0.5 || owner === undefined ? world.admin : owner
  return {
    method: 'PATCH',
    path: talk.path,
    headers: { ...JSON_BODY, authorization: `Bearer ${token}` },
    body: JSON.stringify({ description: sentence(random, 8 + integer(random, 12)), subjects: [pick(random, SUBJECTS), pick(random, SUBJECTS)] }),
    expect: [NO_CONTENT]
  }
}

/** A new talk in /talks, by a Member; `label` makes its title, so its id, unique. */
const create = (random, world, label) => ({
  method: 'POST',
  path: '/talks',
  headers: { ...JSON_BODY, authorization: `Bearer ${pick(random, world.members).token}` },
  body: JSON.stringify(talkBody(integer(random, 2 ** 31), label)),
  expect: [CREATED]
})

export const WRITES = [
  { id: 'patch', title: 'PATCH a talk (admin or owner)', share: 4 },
  { id: 'create', title: 'POST a new talk (a Member)', share: 2 },
  { id: 'transition', title: 'publish or retract a talk (admin)', share: 2 }
]

/**
 * The classes of the mix: each read asked anonymously (80 %) and the same
 * reads, in proportion, logged in (12 %), then the writes (8 %). `weight` is
 * a percentage of all requests.
 */
export const MIX = [
  ...READS.map(r => ({ id: r.id, title: `${r.title}, anonymous`, kind: 'read', loggedIn: false, weight: r.share, ask: r.ask })),
  ...READS.map(r => ({ id: `${r.id}-logged-in`, title: `${r.title}, logged in`, kind: 'read', loggedIn: true, weight: r.share * LOGGED_IN_READS / ANONYMOUS_READS, ask: r.ask })),
  ...WRITES.map(w => ({ id: w.id, title: w.title, kind: 'write', weight: w.share }))
]

/** The classes named (a scenario of one class: `GET a random talk`), or the whole mix. */
export function classesOf (ids) {
  if (ids === undefined) return MIX
  const unknown = ids.filter(id => !MIX.some(c => c.id === id))
  if (unknown.length > 0) throw new Error(`no class ${unknown.join(', ')} in the mix`)
  return MIX.filter(c => ids.includes(c.id))
}

/**
 * A drawer of requests for one client (`loop` of `loops`): `next()` answers
 * the next request, `answered(request, asExpected)` tells it how that went
 * (a transition changes what it knows of its talk only when it was taken).
 * The transitions of a client act on its own share of the workflow pool, so
 * that two clients never race to publish the same talk.
 */
export function createDrawer ({ seed, world: given, classes = MIX, loop = 0, loops = 1, label = 'varied' }) {
  const random = seededRandom(seed)
  // Counted once: every listing's pages and every owner's token are asked for often.
  const world = { ...given, published: given.talks.filter(t => t.published).length, tokenOf: new Map(given.members.map(m => [m.login, m.token])) }
  const total = classes.reduce((sum, c) => sum + c.weight, 0)
  const pool = new Map()
  for (let index = loop * WORKFLOW_EVERY; index < world.talks.length; index += loops * WORKFLOW_EVERY) pool.set(index, world.talks[index].published)
  if (classes.some(c => c.id === 'transition') && pool.size === 0) {
    throw new Error(`${world.talks.length} talks leave client ${loop} of ${loops} no talk to publish or retract (one in ${WORKFLOW_EVERY} is in the workflow pool)`)
  }
  const poolIndexes = [...pool.keys()]
  let created = 0

  function transition () {
    const index = pick(random, poolIndexes)
    const action = pool.get(index) ? 'retract' : 'publish'
    return {
      method: 'POST',
      path: `${world.talks[index].path}/@workflow/${action}`,
      headers: { ...JSON_ACCEPT, authorization: `Bearer ${world.admin}` },
      expect: [OK],
      transition: { index, published: action === 'publish' }
    }
  }

  function request (cls) {
    if (cls.kind === 'read') return cls.ask(random, world, callerOf(random, world, cls.loggedIn))
    if (cls.id === 'patch') return patch(random, world)
    if (cls.id === 'create') return create(random, world, `${label}-${loop}-${created++}`)
    return transition()
  }

  return {
    next () {
      let x = random() * total
      const cls = classes.find(c => (x -= c.weight) < 0) ?? classes.at(-1)
      return { classId: cls.id, ...request(cls) }
    },
    answered (sent, asExpected) {
      if (sent.transition !== undefined && asExpected) pool.set(sent.transition.index, sent.transition.published)
    }
  }
}

/** The seed of one client of one job: distinct streams from one run's seed. */
export const clientSeed = (runSeed, job, loop) => (Math.imul(runSeed ^ 0x5bd1e995, 0x9e3779b1) ^ Math.imul(job + 1, 0x85ebca77) ^ Math.imul(loop + 1, 0xc2b2ae3d)) >>> 0
