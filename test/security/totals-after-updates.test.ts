import fc from 'fast-check'
import t from 'tap'
import { CATALOG_CHANGED } from '../../core/catalog/kept-results.js'
import { build, talkBody } from '../helper.js'
import { waitFor } from '../queue/helper.js'

/**
 * A kept `items_total` survives an update that changes no column its query
 * filters on (core/catalog/kept-results.ts), and only such an update: after
 * any sequence of edits and workflow transitions, in either of two processes
 * on one database, every query's `items_total` in both processes is what the
 * test's own record of the talks says. The record and its matching rules are
 * the test's (a word in the title or description, a value of a field or
 * list, a date after a moment), not the catalogue's.
 */
const one = await build(t)
const other = await build(t, { databaseUrl: one.databaseUrl })
const processes = [one, other]
const manager = await one.tokenFor('admin')

/**
 * How many catalogue notifications each process heard from each writer. The
 * test's listener comes after the service's (listeners hear a message in the
 * order they were added), so once it has heard a write, what the process kept
 * was already dropped or kept by it. Waiting for that, rather than for a shown
 * object to change, proves the hearing: a write can leave an object's
 * representation as it was (the same value again, within the second that
 * `modified` is shown to) while it moves the talk into a query on `modified`.
 */
const heard = processes.map(app => {
  const counts = new Map<string, number>()
  app.app.db.notifications.onChange(CATALOG_CHANGED, key => { if (key !== null) counts.set(key, (counts.get(key) ?? 0) + 1) })
  return counts
})
const heardFrom = (listener: number, writer: number): number => heard[listener].get(processes[writer].app.content.writerId) ?? 0

/** A write in process `writer`, once the other process heard of it. */
async function heardByTheOther<T> (writer: number, write: () => Promise<T>): Promise<T> {
  const other = 1 - writer
  const before = heardFrom(other, writer)
  const result = await write()
  await waitFor('the other process heard of the write', () => heardFrom(other, writer) > before, 2_000)
  return result
}

/** `written`: the round of the talk's last write (what `modified` tells). */
interface Talk { path: string, title: string, description: string, audience: string[], type_of_talk: string, start?: string, published: boolean, written: number }

const WORD = 'marmot'
const AUDIENCES = ['Beginner', 'Advanced', 'Professionals']
const TYPES = ['Talk', 'Training', 'Keynote', 'Lightning Talk']
/** Starts before and after the moment the date query asks for. */
const STARTS = ['2027-03-01T10:00:00+00:00', '2027-03-01T14:00:00+00:00']

/** The queries asked after every step (of talks only: the folder is published too), each with the rule the test decides it by. */
const QUERIES: Array<{ query: string, matches: (talk: Talk) => boolean }> = [
  { query: 'sort_on=created', matches: () => true },
  { query: 'audience=Advanced', matches: talk => talk.audience.includes('Advanced') },
  { query: 'type_of_talk=Keynote', matches: talk => talk.type_of_talk === 'Keynote' },
  { query: `SearchableText=${WORD}`, matches: talk => `${talk.title} ${talk.description}`.split(' ').includes(WORD) },
  { query: 'review_state=published', matches: talk => talk.published },
  { query: 'start.query=2027-03-01T12:00:00Z&start.range=min', matches: talk => talk.start === STARTS[1] }
]

type Step =
  | { kind: 'edit', process: number, talk: number, field: 'title' | 'description', withWord: boolean }
  | { kind: 'audience', process: number, talk: number, audience: string[] }
  | { kind: 'type', process: number, talk: number, type: string }
  | { kind: 'start', process: number, talk: number, start: string }
  | { kind: 'transition', process: number, talk: number }

const TALKS = 4
/** A process to write in, and a talk of this round's or the previous one's (counted back from the newest). */
const target = { process: fc.integer({ min: 0, max: 1 }), talk: fc.integer({ min: 0, max: 2 * TALKS - 1 }) }
const steps = fc.array(fc.oneof(
  fc.record({ kind: fc.constant('edit' as const), ...target, field: fc.constantFrom('title' as const, 'description' as const), withWord: fc.boolean() }),
  fc.record({ kind: fc.constant('audience' as const), ...target, audience: fc.subarray(AUDIENCES, { minLength: 1 }) }),
  fc.record({ kind: fc.constant('type' as const), ...target, type: fc.constantFrom(...TYPES) }),
  fc.record({ kind: fc.constant('start' as const), ...target, start: fc.constantFrom(...STARTS) }),
  fc.record({ kind: fc.constant('transition' as const), ...target })
), { minLength: 1, maxLength: 8 })

async function call (app: typeof one, method: string, path: string, body?: unknown, token?: string): Promise<any> {
  const res = await app.call(method, path, body, token)
  if (res.statusCode >= 300) throw new Error(`${method} ${path}: ${res.statusCode} ${res.body}`)
  return res.statusCode === 204 ? undefined : res.json()
}

/** `items_total` of a query for a caller, asked with one item a page: a page that does not hold every match, so the count (kept or not) answers. */
async function total (app: typeof one, query: string, token?: string): Promise<number> {
  return (await call(app, 'GET', `/@search?portal_type=talk&${query}&b_size=1`, undefined, token)).items_total
}

/** Every talk this file wrote, across rounds: the record the totals are checked against. */
const record: Talk[] = []
let round = 0

/** Every query's total in both processes, as anonymous (published talks) and as the Manager (all of them), against the record; the first difference, or null. */
async function differences (since: string): Promise<string | null> {
  // Changed in this round: every write moves `modified` (a date, compared as such).
  const changedThisRound = { query: `modified.query=${since}&modified.range=min`, matches: (talk: Talk) => talk.written === round }
  for (const [p, app] of processes.entries()) {
    for (const { query, matches } of [...QUERIES, changedThisRound]) {
      const matching = record.filter(matches)
      const expected = [matching.filter(talk => talk.published).length, matching.length]
      const found = [await total(app, query), await total(app, query, manager)]
      if (found[0] !== expected[0] || found[1] !== expected[1]) return `process ${p + 1}, ${query}: anonymous ${found[0]}, Manager ${found[1]}; the record says ${expected[0]} and ${expected[1]}`
    }
  }
  return null
}

/** The write of a step, as the API is asked for it, and the same change in the record. */
async function apply (step: Step, talk: Talk): Promise<void> {
  const app = processes[step.process]
  if (step.kind === 'transition') {
    await call(app, 'POST', `${talk.path}/@workflow/${talk.published ? 'retract' : 'publish'}`, {}, manager)
    talk.published = !talk.published
    talk.written = round
    return
  }
  const change: Partial<Talk> = step.kind === 'audience'
    ? { audience: step.audience }
    : step.kind === 'type'
      ? { type_of_talk: step.type }
      : step.kind === 'start'
        ? { start: step.start }
        : { [step.field]: `${step.field === 'title' ? talk.title.replace(` ${WORD}`, '') : 'Plain words'}${step.withWord ? ` ${WORD}` : ''}` }
  Object.assign(talk, change, { written: round })
  await call(app, 'PATCH', talk.path, change, manager)
}

t.test('after edits and transitions in two processes, every kept total is the record\'s', async t => {
  const problems: string[] = []
  await fc.assert(fc.asyncProperty(steps, async plan => {
    round++
    const since = new Date().toISOString()
    for (let i = 0; i < TALKS; i++) {
      const talk: Talk = { path: '', title: `Round ${round} talk ${i}`, description: 'Plain words', audience: ['Beginner'], type_of_talk: 'Talk', published: i % 2 === 0, written: round }
      const { path: _, published: __, written: ___, ...fields } = talk
      talk.path = new URL((await heardByTheOther(0, async () => await call(one, 'POST', '/talks', talkBody(fields), manager)))['@id']).pathname
      if (talk.published) await heardByTheOther(0, async () => await call(one, 'POST', `${talk.path}/@workflow/publish`, {}, manager))
      record.push(talk)
    }
    let problem = await differences(since)
    if (problem !== null) { problems.push(`after round ${round}'s talks were created: ${problem}`); return false }
    for (const step of plan) {
      const talk = record[Math.max(0, record.length - 1 - step.talk)]
      try {
        await heardByTheOther(step.process, async () => { await apply(step, talk) })
      } catch (err) {
        problems.push(`${JSON.stringify(step)}: ${String(err)}`)
        return false
      }
      problem = await differences(since)
      if (problem !== null) { problems.push(`after ${JSON.stringify(step)}: ${problem}`); return false }
    }
    return true
  }), { numRuns: 15 }).catch(err => { problems.push(String(err).split('\n').slice(0, 12).join(' ')) })
  t.same(problems, [], 'every total in both processes was the record\'s')
})
