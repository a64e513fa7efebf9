/**
 * The varied traffic's clients (issue 23), in the load generator's process
 * (load.mjs): `connections` clients, each drawing its next request from the
 * mix (bench/traffic-mix.mjs) as soon as its previous one is answered, with no
 * pause, round-robin over the service's processes, on one undici pool of
 * keep-alive connections per process. Every answer's latency goes to its class; every status is
 * checked against what the request expected (and a search's engine against
 * the scenario's); the first unexpected answer of each class is kept as
 * evidence. A 5xx is counted apart: any fails the run (run.mjs).
 *
 * Warm-up, then the measured window: an answer counts when its request was
 * sent inside the window; the clients stop drawing at its end, and the
 * window's seconds run to the last answer counted.
 *
 * Paced (`arrivalRate`, requests a second): a crowd does not wait for one
 * another. With `connections` clients that send again as soon as they are
 * answered, every latency is the queue of the saturated machine (Little's
 * law: 20 clients at 600 answers a second wait 33 ms on average, whatever a
 * request costs). Paced, requests arrive at random (a Poisson process: gaps
 * drawn from the exponential distribution, from the run's seed) at the given
 * rate, whoever is waiting; each is sent by an idle client of up to
 * `PACED_USERS` (each its own drawer), and when all are busy it waits for one. Its latency
 * runs from its arrival, not from its send (no coordinated omission: a
 * service that falls behind is charged for the wait). At the window's end
 * the arrivals still waiting are not sent: `unsent` says how far the service
 * fell behind the rate.
 *
 * PostgreSQL's own count of the database's transactions (`pg_stat_database`)
 * is read at the window's start and end: the transactions a request cost,
 * counted outside the service (a statement outside a transaction is one; a
 * write's transaction is one for all its statements). Each backend reports
 * its counts about once a second under load, so both readings lag alike.
 */
import { performance } from 'node:perf_hooks'
import { setTimeout as sleep } from 'node:timers/promises'
import { Pool } from 'undici'
import { latencySummary } from './latency.mjs'
import { pausesWithin, watchPauses } from './pauses.mjs'
import { queryOnce } from './processes.mjs'
import { seededRandom } from './talks.mjs'
import { WORKFLOW_EVERY, classesOf, clientSeed, createDrawer } from './traffic-mix.mjs'
import { loadWorld } from './world.mjs'

const TIMEOUT_MS = 120_000
const SAMPLE_CHARS = 300
/** Clients of a paced crowd: requests in flight at most (more arrivals wait). */
const PACED_USERS = 256

/** The next gap between arrivals of a Poisson process of `rate` a second (ms), from a uniform draw in [0, 1). */
export const arrivalGap = (uniform, rate) => -Math.log(1 - uniform) * 1000 / rate

/** The bytes of an answer kept for the notes: more than enough for SAMPLE_CHARS characters. */
const SAMPLE_BYTES = SAMPLE_CHARS * 4

/**
 * One request; never rejects: a request that got no answer is status 0 with
 * the error as its body. The answer is read to its end but only its first
 * bytes are kept, as text for the notes: the clients share the cores with the
 * service, and decoding every page of 25 talks cost them more than sending it.
 */
async function send (pool, request) {
  try {
    const answer = await pool.request({ path: request.path, method: request.method, headers: request.headers, body: request.body })
    const chunks = []
    let kept = 0
    for await (const chunk of answer.body) {
      if (kept < SAMPLE_BYTES) chunks.push(chunk)
      kept += chunk.length
    }
    return { status: answer.statusCode, headers: answer.headers, body: Buffer.concat(chunks).toString('utf8', 0, Math.min(kept, SAMPLE_BYTES)) }
  } catch (err) {
    return { status: 0, headers: {}, body: `${err.code ?? ''} ${err.message}` }
  }
}

/** Why an answer is not the one expected, or null. */
function unexpected (request, answer, engine) {
  if (!request.expect.includes(answer.status)) return `answered ${answer.status}, expected ${request.expect.join(' or ')}`
  const answeredBy = answer.headers['x-search-engine']
  if (engine !== undefined && answeredBy !== undefined && answeredBy !== engine) return `answered from ${answeredBy} (${answer.headers['x-search-fallback'] ?? ''}), not ${engine}`
  return null
}

const statusClass = status => status === 0 ? 'no answer' : `${Math.floor(status / 100)}xx`

function classRecord (cls) {
  return { id: cls.id, title: cls.title, kind: cls.kind, count: 0, latencies: [], statuses: {}, codes: {}, unexpected: 0, sample: undefined }
}

function count (record, request, answer, problem, ms, target) {
  record.count++
  record.statuses[statusClass(answer.status)] = (record.statuses[statusClass(answer.status)] ?? 0) + 1
  record.codes[answer.status] = (record.codes[answer.status] ?? 0) + 1
  if (problem === null) {
    record.latencies.push(ms)
    return
  }
  record.unexpected++
  record.sample ??= `${request.method} ${request.path} to ${target.host}${request.body !== undefined ? ` with ${request.body.slice(0, SAMPLE_CHARS)}` : ''}: ${problem}: ${answer.body.slice(0, SAMPLE_CHARS)}`
}

/** The transactions committed and rolled back in the database so far, as PostgreSQL counts them. */
async function transactionsOf (databaseUrl) {
  const { rows: [{ n }] } = await queryOnce(databaseUrl, 'SELECT (xact_commit + xact_rollback)::float8 AS n FROM pg_stat_database WHERE datname = current_database()')
  return n
}

/** A class's figures for the report (its latencies summarised). */
function classFigures ({ latencies, ...record }) {
  const { p50, p99, max } = latencySummary(latencies)
  return { ...record, ok: latencies.length, latency: { p50, p99, max } }
}

export async function runCrowd ({ scenario, ctx, urls, connections, duration, warmup, databaseUrl }) {
  const world = await loadWorld(databaseUrl, ctx.crowd)
  const classes = classesOf(scenario.mix)
  // Paced: a share of the level's floor (run.mjs measures it first).
  const arrivalRate = scenario.pace === undefined ? undefined : scenario.pace * ctx.floorRate
  if (arrivalRate !== undefined && !(arrivalRate > 0)) return { status: 'failed', reason: 'paced by the floor, which was not measured' }
  // Each client publishes and retracts talks of its own share of the workflow pool (traffic-mix.mjs): no more clients than it has talks.
  const users = arrivalRate === undefined ? connections : Math.min(PACED_USERS, Math.floor(world.talks.length / WORKFLOW_EVERY))
  // undici's pools, not node:http: a request costs the clients half the CPU (docs/performance.md, "How it measures").
  const targets = urls.map(url => ({ host: new URL(url).host, pool: new Pool(url, { connections: users, headersTimeout: TIMEOUT_MS, bodyTimeout: TIMEOUT_MS }) }))
  const records = new Map(classes.map(cls => [cls.id, classRecord(cls)]))
  const all = []
  /** Latencies of the answers as expected, by the second of the window their request arrived in: when the slow answers came. */
  const bySecond = []
  // Not measured, but checked: a 5xx while warming up fails the run as well.
  const warmUp = { answers: 0, serverErrors: 0, sample: undefined }
  let turn = 0
  const from = performance.now() + warmup * 1000
  const to = from + duration * 1000
  let lastAnswer = from
  const drawers = Array.from({ length: users }, (_, loop) =>
    createDrawer({ seed: clientSeed(ctx.seed, ctx.job, loop), world, classes, loop, loops: users, label: `varied-${ctx.job}` }))

  /** Sends the drawer's next request, which arrived at `arrived` (closed loop: the moment it is sent). */
  async function sendNext (drawer, arrived) {
    const request = drawer.next()
    const target = targets[turn++ % targets.length]
    const sent = arrived ?? performance.now()
    const answer = await send(target.pool, request)
    const answered = performance.now()
    const problem = unexpected(request, answer, scenario.engine)
    drawer.answered(request, problem === null)
    if (sent < from) {
      warmUp.answers++
      if (answer.status >= 500) warmUp.serverErrors++
      if (problem !== null) warmUp.sample ??= `${request.method} ${request.path}: ${problem}: ${answer.body.slice(0, SAMPLE_CHARS)}`
      return
    }
    count(records.get(request.classId), request, answer, problem, answered - sent, target)
    if (problem === null) {
      all.push(answered - sent)
      ;(bySecond[Math.floor((sent - from) / 1000)] ??= []).push(answered - sent)
    }
    lastAnswer = Math.max(lastAnswer, answered)
  }

  async function client (drawer) {
    while (performance.now() < to) await sendNext(drawer)
  }

  /** Arrivals at `arrivalRate` until the window's end, each sent by an idle drawer; answers how many were left waiting. */
  async function paced () {
    const random = seededRandom(clientSeed(ctx.seed, ctx.job, -1))
    const idle = [...drawers]
    const waiting = []
    const inFlight = new Set()
    const serve = (drawer, arrived) => {
      const sending = (async () => {
        await sendNext(drawer, arrived)
        // The drawer takes the oldest arrival still waiting, if it came within the window.
        while (waiting.length > 0 && performance.now() < to) await sendNext(drawer, waiting.shift())
        idle.push(drawer)
      })()
      inFlight.add(sending)
      sending.finally(() => inFlight.delete(sending))
    }
    let next = performance.now()
    while (next < to) {
      // A wait under a millisecond is a timer's shortest too: no turn of this loop spins on the cores the service shares.
      const wait = next - performance.now()
      if (wait > 0) await sleep(wait)
      for (const now = performance.now(); next <= now && next < to; next += arrivalGap(random(), arrivalRate)) {
        const drawer = idle.pop()
        if (drawer === undefined) waiting.push(next)
        else serve(drawer, next)
      }
    }
    while (inFlight.size > 0) await Promise.all(inFlight)
    return waiting.length
  }

  // The clients' own pauses delay the answers they read as much as the service's (bench/pauses.mjs).
  const clientPauses = []
  const unwatch = watchPauses(pause => clientPauses.push(pause))
  const cpuBefore = process.cpuUsage()
  // This reading's own transaction is in the window's count: one against tens of thousands.
  const atStart = sleep(from - performance.now()).then(async () => await transactionsOf(databaseUrl))
  let unsent
  try {
    if (arrivalRate === undefined) await Promise.all(drawers.map(client))
    else unsent = await paced()
  } finally {
    await Promise.all(targets.map(async ({ pool }) => await pool.destroy()))
    unwatch()
  }
  const transactions = await transactionsOf(databaseUrl) - await atStart
  // Near one CPU-second a second, the clients themselves would be what limits the rate.
  const { user, system } = process.cpuUsage(cpuBefore)
  const seconds = (lastAnswer - from) / 1000
  const figures = [...records.values()].map(classFigures)
  const sum = key => figures.reduce((total, c) => total + c[key], 0)
  return {
    status: 'measured',
    seconds,
    ok: all.length,
    errors: sum('unexpected'),
    serverErrors: figures.reduce((total, c) => total + (c.statuses['5xx'] ?? 0), 0) + warmUp.serverErrors,
    warmUp,
    requestsPerSecond: all.length / seconds,
    rate: all.length / seconds,
    latency: latencySummary(all),
    transactionsPerRequest: transactions / all.length,
    classes: figures,
    // The window in wall-clock time (epoch ms), where the service processes' pauses are matched to its seconds.
    window: { from: performance.timeOrigin + from, to: performance.timeOrigin + to },
    clientPauses: pausesWithin(clientPauses, performance.timeOrigin + from, performance.timeOrigin + to),
    timeline: Array.from(bySecond, (latencies = [], second) => ({ second, answers: latencies.length, ...latencySummary(latencies) })),
    ...(arrivalRate !== undefined ? { paced: { arrivalRate, pace: scenario.pace, unsent } } : {}),
    crowd: { seed: ctx.seed, connections: users, processes: urls.length, talks: world.talks.length, published: world.talks.filter(t => t.published).length, cpuSeconds: (user + system) / 1e6 }
  }
}
