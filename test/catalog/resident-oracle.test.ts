import pg from 'pg'
import t from 'tap'
import { build, talkBody, type TestApp } from '../helper.js'

/**
 * The resident catalogue (core/catalog/resident/) answers every query as
 * PostgreSQL does. The oracle is a second process on the same database with
 * RESIDENT_CATALOG=false: every query goes to SQL there. Random writes
 * (creates with ties in titles and dates, future and past effective and
 * expiry dates, edits, transitions, deletes) go through either process;
 * after each round, random queries — subjects, states, paths and depths,
 * ranges, UIDs, full text with phrases, prefixes, OR and NOT, every
 * sortable index in both directions, any page — from every kind of caller
 * must answer the same JSON in both, and the resident process must have
 * answered most of them itself (not by falling back to SQL).
 */
const seed = Number(process.env.SEED ?? Date.now() % 100_000)
t.comment(`seed ${seed} (SEED=${seed} to repeat)`)
let state = seed
/** mulberry32 */
function random (): number {
  state = (state + 0x6d2b79f5) | 0
  let x = Math.imul(state ^ (state >>> 15), 1 | state)
  x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x
  return ((x ^ (x >>> 14)) >>> 0) / 4294967296
}
const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]
const some = <T>(items: readonly T[], most = 3): T[] => [...new Set(Array.from({ length: 1 + Math.floor(random() * most) }, () => pick(items)))]

const resident = await build(t)
const oracle = await build(t, { databaseUrl: resident.databaseUrl, env: { RESIDENT_CATALOG: 'false' } })
const tokens: Record<string, string | undefined> = {
  anonymous: undefined,
  olga: await resident.tokenFor('olga'),
  paul: await resident.tokenFor('paul'),
  rita: await resident.tokenFor('rita', ['Reviewer']),
  admin: await resident.tokenFor('admin')
}
const writers = ['olga', 'paul', 'admin']
/** Bounds of text ranges: before, among and after the titles and ids, a prefix of a state, letters beyond ASCII. */
const TEXT_BOUNDS = ['', 'a', 'alpha', 'f', 'p', 'plone', 'priv', 'published', 'q', 'z', 'é', '\u{1f600}']
const WORDS = ['plone', 'fastify', 'solr', 'volto', 'react', 'python', 'node', 'search', 'catalog', 'index', 'query', 'page', 'alpha', 'alphabet', 'alpine', '2024', '7']
const SUBJECTS = ['Web', 'Python', 'JS', 'Ops', 'Data']
const TITLES = ['Keynote', 'Plone 6', 'plone 6', 'Zope', 'Ärger', 'a b', 'ab', 'Talk 10', 'Talk 2', '\uE000 private', '😀 emoji', '']
const DATES = ['2020-01-01T00:00:00Z', '2024-06-01T12:00:00Z', '2024-06-01T12:00:00.001Z', '2031-01-01T00:00:00Z', '2099-01-01T00:00:00Z']
const sentence = (n: number): string => Array.from({ length: n }, () => pick(WORDS)).join(' ')
const paths: string[] = []

/** An effective date, an expiry date, both (the expiry later) or neither. */
function datesOf (): { effective?: string, expires?: string } {
  const effective = random() < 0.6 ? Math.floor(random() * (DATES.length - 1)) : undefined
  const expires = random() < 0.3 ? (effective ?? -1) + 1 + Math.floor(random() * (DATES.length - (effective ?? -1) - 1)) : undefined
  return { effective: effective === undefined ? undefined : DATES[effective], expires: expires === undefined ? undefined : DATES[expires] }
}

async function write (app: TestApp): Promise<void> {
  const who = pick(writers)
  const token = tokens[who]
  const roll = random()
  if (roll < 0.45 || paths.length < 5) {
    const body = talkBody({
      title: `${pick(TITLES)} ${random() < 0.5 ? pick(WORDS) : ''}`.trim() || 'x',
      description: sentence(3 + Math.floor(random() * 12)),
      subjects: random() < 0.8 ? some(SUBJECTS) : undefined,
      audience: some(['Beginner', 'Advanced', 'Professionals']),
      ...datesOf()
    })
    const res = await app.call('POST', '/talks', body, token)
    if (res.statusCode !== 201) throw new Error(`create: ${res.statusCode} ${res.body}`)
    paths.push(new URL(res.json()['@id']).pathname)
  } else if (roll < 0.7) {
    const res = await app.call('PATCH', pick(paths), { description: sentence(4), subjects: some(SUBJECTS), effective: pick([...DATES, null]) }, tokens.admin)
    // An effective date after the talk's expiry is refused: nothing changed then.
    if (![204, 400].includes(res.statusCode)) throw new Error(`patch: ${res.statusCode} ${res.body}`)
  } else if (roll < 0.9) {
    const res = await app.call('POST', `${pick(paths)}/@workflow/${pick(['publish', 'retract', 'submit'])}`, {}, tokens.admin)
    if (![200, 400].includes(res.statusCode)) throw new Error(`transition: ${res.statusCode} ${res.body}`)
  } else {
    const path = paths.splice(Math.floor(random() * paths.length), 1)[0]
    const res = await app.call('DELETE', path, undefined, tokens.admin)
    if (res.statusCode !== 204) throw new Error(`delete: ${res.statusCode} ${res.body}`)
  }
}

const SORTS = ['sortable_title', 'effective', 'expires', 'modified', 'created', 'getObjPositionInParent', 'review_state', 'Creator', 'UID', 'path_string', 'Date', 'type_of_talk']

function randomQuery (): string {
  const params = new URLSearchParams()
  const roll = () => random()
  if (roll() < 0.4) for (const s of some(SUBJECTS, 2)) params.append('Subject', s)
  if (roll() < 0.15) params.set('Subject.operator', 'and')
  if (roll() < 0.3) for (const s of some(['published', 'private', 'pending'], 2)) params.append('review_state', s)
  if (roll() < 0.3) { params.set('path.query', pick(['/talks', '/', '/nowhere'])); params.set('path.depth', String(pick([-1, 0, 1, 2]))) }
  if (roll() < 0.3) {
    const text = pick([
      () => pick(WORDS), () => `${pick(WORDS)} ${pick(WORDS)}`, () => `${pick(WORDS).slice(0, 3)}*`, () => `"${pick(WORDS)} ${pick(WORDS)}"`,
      () => `${pick(WORDS)} OR ${pick(WORDS)}`, () => `${pick(WORDS)} -${pick(WORDS)}`, () => `NOT ${pick(WORDS)}`, () => `"${pick(WORDS)} ${pick(WORDS).slice(0, 2)}*"`
    ])()
    params.set('SearchableText', text)
  }
  if (roll() < 0.2) {
    const [a, b] = [pick(DATES), pick(DATES)].sort()
    params.append('effective.query', a); params.append('effective.query', b); params.set('effective.range', pick(['min:max', 'min', 'max']))
  }
  if (roll() < 0.1) {
    // A range of text, in code-point order (the C collation): two binary searches in the index's order here.
    const index = pick(['sortable_title', 'id', 'review_state'])
    const [a, b] = [pick(TEXT_BOUNDS), pick(TEXT_BOUNDS)]
    params.append(`${index}.query`, a); params.append(`${index}.query`, b); params.set(`${index}.range`, pick(['min:max', 'min', 'max']))
  }
  if (roll() < 0.1) params.set('portal_type', pick(['talk', 'Folder']))
  if (roll() < 0.1) params.set('is_folderish', pick(['true', 'false']))
  if (roll() < 0.1) params.set('type_of_talk', pick(['Talk', 'Keynote']))
  if (roll() < 0.1) params.set('show_inactive', 'true')
  if (roll() < 0.7) { params.set('sort_on', pick(SORTS)); if (roll() < 0.5) params.set('sort_order', 'descending') }
  if (roll() < 0.1) params.set('sort_limit', String(Math.floor(random() * 10)))
  params.set('b_size', String(pick([1, 3, 10, 25])))
  params.set('b_start', String(pick([0, 0, 1, 3, 10, 30])))
  params.set('metadata_fields', 'UID')
  return `/@search?${params.toString()}`
}

async function answer (app: TestApp, url: string, caller: string): Promise<string> {
  const res = await app.call('GET', url, undefined, tokens[caller])
  if (res.statusCode !== 200) return `${res.statusCode}`
  const body = res.json()
  return JSON.stringify({ total: body.items_total, items: body.items.map((item: Record<string, unknown>) => [item.UID, item.title, item.review_state]) })
}

/**
 * The resident process's answer must equal PostgreSQL's. After a write through
 * the resident process (`immediately`), its very first answer must be right:
 * it is read once, and the oracle — whose kept results hear of the write
 * through its notification, milliseconds later — is asked until it agrees
 * (at most a second; nothing else writes meanwhile, so a wrong answer never
 * becomes right). After another process's write, both may take that long.
 */
async function agree (t: Pick<typeof import('tap').default, 'fail'>, url: string, caller: string, immediately: boolean): Promise<void> {
  let got = await answer(resident, url, caller)
  let expected = await answer(oracle, url, caller)
  for (let tries = 0; got !== expected && tries < 20; tries++) {
    await new Promise(resolve => setTimeout(resolve, 50))
    expected = await answer(oracle, url, caller)
    if (!immediately) got = await answer(resident, url, caller)
  }
  if (got !== expected) t.fail(`${caller} ${url}`, { got, expected, seed })
}

const residentCatalog = resident.app.catalogSearch.residentCatalog
if (residentCatalog === undefined) throw new Error('the resident catalogue is on by default')
t.test('random writes and random queries: the resident process answers as PostgreSQL', async t => {
  for (let i = 0; i < 30; i++) await write(resident)
  await residentCatalog.whenLoaded()
  const before = { ...residentCatalog.counts }
  let compared = 0
  // Rounds 4 to 8 run beside a transaction that holds an id (as an ANALYZE or an import does): each look
  // of the resident catalogue then starts below every change since, and must leave out those it applied.
  const holder = new pg.Client({ connectionString: resident.databaseUrl })
  await holder.connect()
  t.teardown(async () => { await holder.end() })
  for (let round = 0; round < 12; round++) {
    if (round === 4) await holder.query('BEGIN; SELECT pg_current_xact_id()')
    if (round === 9) await holder.query('COMMIT')
    const through = round % 3 === 2 ? oracle : resident
    for (let i = 0; i < 8; i++) await write(through)
    for (let q = 0; q < 40; q++) {
      await agree(t, randomQuery(), pick(Object.keys(tokens)), through === resident)
      compared++
    }
  }
  const after = residentCatalog.counts
  t.ok(after.answered - before.answered > compared * 0.8, `the resident catalogue answered ${after.answered - before.answered} of ${compared} queries itself`)
  t.pass(`${compared} queries compared`)
})

t.test('a full-text page ranked again after its documents changed: the kept ranks of changed documents are not used', async t => {
  const made: string[] = []
  for (let i = 0; i < 6; i++) {
    const res = await resident.call('POST', '/talks', talkBody({ title: `Ranked ${i}`, description: `zeta ${'filler '.repeat(i * 3)}end` }), tokens.admin)
    made.push(new URL(res.json()['@id']).pathname)
  }
  const url = '/@search?SearchableText=zeta&b_size=10&metadata_fields=UID'
  const order = async (app: TestApp): Promise<string> => await answer(app, url, 'admin')
  t.equal(await order(resident), await order(oracle), 'ranked as PostgreSQL ranks')
  // The weakest match becomes the strongest, through either process: the next query must rank it first.
  for (const [i, app] of [[5, resident], [4, oracle]] as const) {
    t.equal((await app.call('PATCH', made[i], { description: 'zeta zeta zeta zeta zeta zeta' }, tokens.admin)).statusCode, 204)
    await agree(t, url, 'admin', app === resident)
    const first = JSON.parse(await order(resident)).items[0][1]
    t.equal(first, `Ranked ${i}`, `the changed talk ranks first (${String(first)})`)
  }
})
