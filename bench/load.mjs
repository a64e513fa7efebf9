/**
 * The load generator, in its own process (run.mjs forks it) so that it never
 * shares a core's event loop with the server it measures. For each job it
 * builds the scenario's requests, checks one round of them, warms up, then
 * runs autocannon and answers with the figures. The varied traffic, whose
 * latencies autocannon cannot tell apart by class, has its own clients
 * (bench/crowd.mjs) in this same process.
 *
 * Latencies are taken from every successful response's own timing (autocannon's
 * histogram keeps whole milliseconds, too coarse for sub-millisecond floors).
 */
import autocannon from 'autocannon'
import { performance } from 'node:perf_hooks'
import { runCrowd } from './crowd.mjs'
import { latencySummary } from './latency.mjs'
import { SCENARIOS } from './scenarios.mjs'

const TIMEOUT_SECONDS = 120

/** Wraps every request so that the first unexpected answer is kept as evidence. */
function withEvidence (requests, evidence) {
  return requests.map(request => ({
    ...request,
    onResponse (status, body, context, headers) {
      if (status >= 300 && evidence.sample === undefined) evidence.sample = `${status} ${String(body).slice(0, 300)}`
      request.onResponse?.(status, body, context, headers)
    }
  }))
}

/** One autocannon run; resolves with its timing and every successful latency. */
function fire (url, requests, options) {
  return new Promise((resolve, reject) => {
    const latencies = []
    const started = performance.now()
    const instance = autocannon({ url, requests, timeout: TIMEOUT_SECONDS, ...options }, (err, result) => {
      if (err) reject(err)
      else resolve({ result, latencies, seconds: (performance.now() - started) / 1000 })
    })
    instance.on('response', (client, status, bytes, ms) => { if (status < 300) latencies.push(ms) })
  })
}

/**
 * Other clients' requests, sent without pause until `stop()`, which answers
 * how many were sent and their statuses (e.g. 401 against 429 for a login
 * flood: whether the service still did the work or turned them away).
 */
function background (url, { connections, requests }) {
  const statuses = {}
  let done
  const finished = new Promise(resolve => { done = resolve })
  // Longer than any job; stop() ends it.
  const instance = autocannon({ url, requests, connections, duration: 3600, timeout: TIMEOUT_SECONDS }, () => done())
  instance.on('response', (client, status) => { statuses[status] = (statuses[status] ?? 0) + 1 })
  return {
    async stop () {
      instance.stop()
      await finished
      return { connections, requests: Object.values(statuses).reduce((a, b) => a + b, 0), statuses }
    }
  }
}

/** What several backgrounds sent, added up. */
function together (loads) {
  const statuses = {}
  for (const load of loads) for (const [status, n] of Object.entries(load.statuses)) statuses[status] = (statuses[status] ?? 0) + n
  return { connections: loads.reduce((sum, l) => sum + l.connections, 0), requests: loads.reduce((sum, l) => sum + l.requests, 0), statuses }
}

/** One round of the scenario's requests, one connection: every answer must be a success and pass the check. */
async function probe (url, plan) {
  const answers = []
  const requests = plan.requests.map(request => ({
    ...request,
    onResponse (status, body, context, headers) {
      answers.push({ status, body, headers })
      request.onResponse?.(status, body, context, headers)
    }
  }))
  await fire(url, requests, { connections: 1, amount: requests.length })
  const failed = answers.find(a => a.status >= 300)
  if (failed !== undefined) return `answered ${failed.status}: ${failed.body.slice(0, 300)}`
  if (answers.length < requests.length) return 'did not answer'
  // An image's bytes are judged as they came, any other answer parsed.
  const [{ body, headers }] = answers
  return plan.check?.(/^image\//.test(headers['content-type'] ?? '') ? body : JSON.parse(body), headers) ?? null
}

async function runJob (job) {
  const { scenarioId, ctx, url, connections, duration, warmup, amount } = job
  const scenario = SCENARIOS.find(s => s.id === scenarioId)
  if (scenario.traffic === 'varied') return await runCrowd({ ...job, scenario })
  // One plan for the check, the warm-up and the run: its counters go on, so every talk created is new.
  const plan = scenario.plan(ctx)
  const problem = await probe(url, plan)
  if (problem !== null) return { status: 'failed', reason: `the check request ${problem}` }
  // One background, or several side by side (each with its own connections and its own cycle of requests).
  const others = plan.background !== undefined ? [plan.background].flat().map(load => background(url, load)) : null
  let run
  let backgroundLoad
  const evidence = {}
  try {
    if (warmup > 0) await fire(url, plan.requests, { connections, duration: warmup })
    run = await fire(url, withEvidence(plan.requests, evidence),
      amount !== undefined ? { connections, amount } : { connections, duration })
  } finally {
    backgroundLoad = others === null ? undefined : together(await Promise.all(others.map(async other => await other.stop())))
  }
  const ok = run.latencies.length
  const { result } = run
  return {
    status: 'measured',
    seconds: run.seconds,
    ok,
    // autocannon counts a timeout as an error too.
    errors: result.non2xx + result.errors,
    timeouts: result.timeouts,
    errorSample: evidence.sample,
    ...(backgroundLoad !== undefined ? { background: backgroundLoad } : {}),
    requestsPerSecond: ok / run.seconds,
    rate: ok / (scenario.requestsPerItem ?? 1) / run.seconds,
    latency: latencySummary(run.latencies)
  }
}

process.on('message', job => {
  runJob(job).then(
    result => process.send({ id: job.id, result }),
    err => process.send({ id: job.id, result: { status: 'failed', reason: err.stack ?? String(err) } })
  )
})
process.on('disconnect', () => process.exit(0))
