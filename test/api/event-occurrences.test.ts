import t, { type Test } from 'tap'
import { randomInt } from 'node:crypto'
import { MAX_INDEXED_OCCURRENCES } from '../../core/content/recurrence.js'
import { build, type TestApp } from '../helper.js'
import { buildWithSolr, PUSHED, pushToSolr, startSolr } from '../solr/helper.js'

/**
 * Date ranges find the later occurrences of recurring events (Plone's
 * DateRecurringIndex on `start` and `end`), whichever engine answers: the
 * resident catalogue, PostgreSQL alone, Solr. The oracle is written here,
 * without rrule: an event of `FREQ=DAILY|WEEKLY;INTERVAL=i;COUNT=c` occurs
 * at its start plus every k·i days or weeks, k < c, each lasting as its first.
 */

const HOUR = 3_600_000
const DAY = 24 * HOUR
const PERIOD = { DAILY: DAY, WEEKLY: 7 * DAY }

interface Planned { id: string, start: number, length: number, period: keyof typeof PERIOD, interval: number, count: number | null }

/** Every occurrence's start and end, as the catalogue must hold them (an endless rule up to the indexed bound). */
function occurrencesOf (event: Planned): Array<{ start: number, end: number }> {
  const count = Math.min(event.count ?? Infinity, MAX_INDEXED_OCCURRENCES)
  return Array.from({ length: count }, (_, k) => {
    const start = event.start + k * event.interval * PERIOD[event.period]
    return { start, end: start + event.length }
  })
}

const iso = (time: number): string => new Date(time).toISOString()

function plan (seed: number): Planned[] {
  const base = Date.parse('2026-01-05T10:00:00Z')
  return Array.from({ length: 24 }, (_, i) => ({
    id: `event-${seed}-${i}`,
    start: base + randomInt(0, 120) * DAY + randomInt(0, 24) * HOUR,
    length: randomInt(1, 72) * HOUR,
    period: i % 2 === 0 ? 'DAILY' : 'WEEKLY',
    interval: randomInt(1, 4),
    count: i % 6 === 5 ? null : randomInt(1, 25)
  }))
}

const rule = (e: Planned): string => `RRULE:FREQ=${e.period};INTERVAL=${e.interval}${e.count === null ? '' : `;COUNT=${e.count}`}`

async function createEvents (app: TestApp, token: string, events: Planned[]): Promise<void> {
  for (const e of events) {
    const res = await app.call('POST', '/', { '@type': 'Event', id: e.id, title: e.id, start: iso(e.start), end: iso(e.start + e.length), recurrence: rule(e) }, token)
    if (res.statusCode !== 201) throw new Error(`create ${e.id}: ${res.statusCode} ${res.body}`)
  }
}

/** The ids of the events whose `start` (or `end`) occurrences meet the range; `use_solr` asks Solr, which must answer. */
async function found (app: TestApp, token: string, index: 'start' | 'end', min: number | undefined, max: number | undefined, extra = ''): Promise<string[]> {
  const bounds = [min, max].filter((b): b is number => b !== undefined).map(b => `${index}.query=${encodeURIComponent(iso(b))}`).join('&')
  const range = min !== undefined && max !== undefined ? 'min:max' : min !== undefined ? 'min' : 'max'
  const res = await app.call('GET', `/@search?portal_type=Event&${bounds}&${index}.range=${range}&b_size=1000&metadata_fields=getId${extra}`, undefined, token)
  if (res.statusCode !== 200) throw new Error(`search: ${res.statusCode} ${res.body}`)
  if (extra.includes('use_solr') && res.headers['x-search-engine'] !== 'solr') throw new Error(`Solr did not answer (${String(res.headers['x-search-engine'])})`)
  return (res.json().items as Array<{ getId: string }>).map(item => item.getId).sort()
}

function expected (events: Planned[], index: 'start' | 'end', min: number | undefined, max: number | undefined): string[] {
  return events.filter(e => occurrencesOf(e).some(o => (min === undefined || o[index] >= min) && (max === undefined || o[index] <= max))).map(e => e.id).sort()
}

/** Random ranges over the planned events, their bounds often an occurrence's own time (bounds are inclusive). */
async function checkRanges (t: Test, app: TestApp, token: string, events: Planned[], label: string, extra = ''): Promise<void> {
  const times = events.flatMap(e => occurrencesOf(e).slice(0, 40).flatMap(o => [o.start, o.end]))
  const somewhere = (): number => randomInt(3) === 0 ? times[randomInt(times.length)] : Date.parse('2026-01-01T00:00:00Z') + randomInt(0, 400 * 24) * HOUR
  let wrong = 0
  for (let q = 0; q < 40; q++) {
    const index = q % 2 === 0 ? 'start' : 'end'
    const a = somewhere()
    const b = randomInt(3) === 0 ? a : a + randomInt(1, 96) * HOUR
    const shape = q % 3
    const min = shape === 2 ? undefined : a
    const max = shape === 1 ? undefined : b
    const want = expected(events, index, min, max)
    const got = await found(app, token, index, min, max, extra)
    if (JSON.stringify(got) !== JSON.stringify(want)) {
      wrong++
      t.same(got, want, `${label}: ${index} ${min === undefined ? '*' : iso(min)} … ${max === undefined ? '*' : iso(max)}`)
    }
  }
  t.equal(wrong, 0, `${label}: 40 random ranges, each the oracle's events`)
}

for (const engine of ['resident catalogue', 'PostgreSQL alone'] as const) {
  t.test(`date ranges find later occurrences (${engine})`, async t => {
    const app = await build(t, engine === 'PostgreSQL alone' ? { env: { RESIDENT_CATALOG: 'false' } } : {})
    const admin = await app.tokenFor('admin')
    const events = plan(1)
    await createEvents(app, admin, events)
    await checkRanges(t, app, admin, events, engine)

    // A changed rule is indexed anew; a rule taken away leaves the event's own dates.
    const changed = events[0]
    changed.count = 3
    changed.period = 'WEEKLY'
    t.equal((await app.call('PATCH', `/${changed.id}`, { recurrence: rule(changed) }, admin)).statusCode, 204)
    const removed = events[1]
    removed.count = 1
    t.equal((await app.call('PATCH', `/${removed.id}`, { recurrence: '' }, admin)).statusCode, 204)
    await checkRanges(t, app, admin, events, `${engine}, after two rules changed`)

    // Sorted by start, a range whose events began before it still lists them (their place in the order is their first start).
    const last = occurrencesOf(events[3]).at(-1)!
    t.same(await found(app, admin, 'start', last.start, last.start, '&sort_on=start'), expected(events, 'start', last.start, last.start), 'sorted by start')

    // An endless rule is indexed up to the bound: its last indexed occurrence is found, the next is not.
    const endless: Planned = { id: 'daily-for-ever', start: Date.parse('2026-01-01T08:00:00Z'), length: HOUR, period: 'DAILY', interval: 1, count: null }
    await createEvents(app, admin, [endless])
    const lastIndexed = endless.start + (MAX_INDEXED_OCCURRENCES - 1) * DAY
    t.ok((await found(app, admin, 'start', lastIndexed, lastIndexed)).includes(endless.id), 'the last indexed occurrence of an endless rule')
    t.notOk((await found(app, admin, 'start', lastIndexed + DAY, lastIndexed + DAY)).includes(endless.id), 'not the one after')

    // Further occurrences are asked through the date's index, never alone.
    const direct = await app.call('GET', '/@search?start_occurrences.query=2026-01-01T00:00:00Z&start_occurrences.range=min', undefined, admin)
    t.equal(direct.statusCode, 400)
    t.match(direct.json(), { type: 'BadRequest', message: /query 'start'/ })
  })
}

t.test('a catalogue of an earlier version gets the occurrences of the events it holds at the next start', async t => {
  const before = await build(t)
  const admin = await before.tokenFor('admin')
  const events = plan(3)
  await createEvents(before, admin, events)
  // As the catalogue was before recurring dates were indexed.
  await before.app.db.query('ALTER TABLE catalog DROP COLUMN start_occurrences, DROP COLUMN end_occurrences')
  await before.app.close()
  for (const resident of ['true', 'false']) {
    const after = await build(t, { databaseUrl: before.databaseUrl, env: { RESIDENT_CATALOG: resident } })
    await checkRanges(t, after, await after.tokenFor('admin'), events, `restarted on it (resident catalogue: ${resident})`)
    await after.app.close()
  }
})

t.test('date ranges find later occurrences (Solr)', async t => {
  const solr = await startSolr(t)
  const app = await buildWithSolr(t, solr, PUSHED)
  const admin = await app.tokenFor('admin')
  const events = plan(2)
  await createEvents(app, admin, events)
  await pushToSolr(app.app)
  await checkRanges(t, app, admin, events, 'Solr', '&use_solr=true')
})
