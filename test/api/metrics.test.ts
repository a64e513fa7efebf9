import t from 'tap'
import { ADMIN_PASSWORD, build, talkBody } from '../helper.js'
import { asyncEnv, startRedis } from '../queue/helper.js'
import { startSolr } from '../solr/helper.js'

/**
 * Prometheus metrics (docs/operations.md, "Metrics"): off unless METRICS_PORT
 * is set, then on a listener of their own, never on the service's port;
 * behind METRICS_TOKEN when set. The request durations are labelled by the
 * route's pattern, so that a crowd of different URLs (every talk, every
 * unknown path) adds no label set; the pool's and the outbox's gauges say
 * what they hold now.
 */
const scrape = async (address: { port: number }, headers: Record<string, string> = {}): Promise<{ status: number, text: string }> => {
  const res = await fetch(`http://127.0.0.1:${address.port}/metrics`, { headers })
  return { status: res.status, text: await res.text() }
}
/** The samples of a metric in the exposition text, as `name{labels} value` lines. */
const samples = (text: string, name: string): string[] => text.split('\n').filter(line => line.startsWith(`${name}{`) || line.startsWith(`${name} `))

t.test('off by default: no listener, nothing on the service\'s port', async t => {
  const { app, inject } = await build(t)
  t.equal(app.metricsAddress(), null)
  t.equal((await inject({ method: 'GET', url: '/metrics' })).statusCode, 404, 'the service does not answer /metrics')
})

t.test('on its own port: durations by route pattern, the pool, the outbox, the process', async t => {
  const { app, call, tokenFor } = await build(t, { env: { METRICS_PORT: '0', SOLR_ACTIVE: 'false' } })
  const address = app.metricsAddress()!
  t.ok(address.port > 0 && address.address === '127.0.0.1', 'listening on loopback')
  const admin = await tokenFor('admin')
  const paths: string[] = []
  for (let i = 0; i < 5; i++) paths.push(new URL((await call('POST', '/talks', talkBody({ title: `Talk ${i}` }), admin)).json()['@id']).pathname)
  for (const path of paths) t.equal((await call('GET', path, undefined, admin)).statusCode, 200, `GET ${path}`)
  for (let i = 0; i < 30; i++) await call('GET', `/no-such-${i}/${Math.random()}`)
  await call('GET', '/@search?portal_type=talk')

  const { status, text } = await scrape(address)
  t.equal(status, 200)
  const durations = samples(text, 'http_request_duration_seconds_count')
  const routes = new Set(durations.map(line => /route="([^"]*)"/.exec(line)?.[1]))
  t.ok(routes.has('/*') && routes.has('/@search'), `the routes' patterns: ${[...routes].join(' ')}`)
  t.notOk([...routes].some(route => route?.includes('no-such') === true || route?.includes('talk-') === true), 'no URL became a label')
  t.ok(durations.length < 20, `a bounded label set (${durations.length} series after 50 different URLs)`)
  const created = durations.find(line => line.includes('method="POST"') && line.includes('route="/*"') && line.includes('status_code="201"'))
  t.match(created, / 5$/, 'the five creates counted')
  t.match(samples(text, 'pg_pool_connections').join('\n'), /state="idle"/, 'the pool\'s connections')
  t.match(samples(text, 'index_outbox_objects').join('\n'), /state="pending"\} \d+/, 'the outbox\'s depth')
  t.equal(samples(text, 'index_outbox_oldest_pending_seconds').length, 1, 'the outbox\'s oldest operation')
  t.ok(samples(text, 'nodejs_eventloop_lag_seconds').length > 0 && samples(text, 'process_cpu_seconds_total').length > 0, 'the process: event loop, CPU')
  t.equal((await fetch(`http://127.0.0.1:${address.port}/other`)).status, 404, 'nothing else on that port')
})

t.test('behind METRICS_TOKEN when set', async t => {
  const { app } = await build(t, { env: { METRICS_PORT: '0', METRICS_TOKEN: 's3cret-token' } })
  const address = app.metricsAddress()!
  t.equal((await scrape(address)).status, 401, 'no token')
  t.equal((await scrape(address, { authorization: 'Bearer wrong-token!' })).status, 401, 'another token')
  t.equal((await scrape(address, { authorization: 'bearer s3cret-token' })).status, 401, 'another spelling of the scheme')
  t.equal((await scrape(address, { authorization: 'Bearer s3cret-token' })).status, 200, 'the token')
})

t.test('Solr\'s calls and the index queue\'s jobs; with Redis down the scrape still answers, without them', async t => {
  const solr = await startSolr(t)
  const redis = await startRedis(t)
  const { app } = await build(t, { env: { ...asyncEnv(solr, redis), INDEX_WORKER: 'external', METRICS_PORT: '0' } })
  const address = app.metricsAddress()!
  const up = await scrape(address)
  t.equal(up.status, 200)
  t.same(samples(up.text, 'index_queue_jobs').map(line => /state="(\w+)"/.exec(line)?.[1]).sort(), ['active', 'delayed', 'failed', 'waiting'], 'the queue by state')
  // At start the service read the live core's fields: a search call that succeeded.
  t.match(samples(up.text, 'solr_request_duration_seconds_count').join('\n'), /kind="search",outcome="ok"\} [1-9]/, 'Solr\'s calls timed')
  await redis.stop()
  const down = await scrape(address)
  t.equal(down.status, 200, 'answered with Redis down')
  t.same(samples(down.text, 'index_queue_jobs'), [], 'the queue left out of this scrape')
  t.ok(samples(down.text, 'process_cpu_seconds_total').length > 0 && samples(down.text, 'pg_pool_connections').length > 0, 'the process and the pool still there')
})

t.test('each cache\'s entries, bytes and look-ups; logins by outcome', async t => {
  const { app, call, tokenFor } = await build(t, { env: { METRICS_PORT: '0', LOGIN_MAX_FAILURES: '2' } })
  const address = app.metricsAddress()!
  /** A sample's value, NaN when the series is absent. */
  const value = (text: string, series: string): number => Number(text.split('\n').find(line => line.startsWith(`${series} `))?.split(' ')[1])
  const admin = await tokenFor('admin')
  const before = (await scrape(address)).text
  const path = new URL((await call('POST', '/talks', talkBody({ title: 'Kept' }), admin)).json()['@id']).pathname
  for (let i = 0; i < 3; i++) t.equal((await call('GET', path, undefined, admin)).statusCode, 200)
  for (let i = 0; i < 2; i++) await call('GET', '/@search?portal_type=talk&sort_on=sortable_title')
  const login = async (password: string): Promise<number> => (await app.inject({
    method: 'POST', url: '/@login', headers: { 'content-type': 'application/json' }, payload: { login: 'admin', password }
  })).statusCode
  t.equal(await login(ADMIN_PASSWORD), 200)
  t.same([await login('wrong'), await login('wrong'), await login('wrong')], [401, 401, 429])
  const after = (await scrape(address)).text

  for (const cache of ['objects', 'catalog_pages', 'catalog_totals', 'catalog_rows', 'resident_catalog', 'principals', 'image_scales']) {
    // An absent series reads NaN, which is not >= 0.
    t.ok(value(after, `cache_lookups_total{cache="${cache}",result="hit"}`) >= 0 && value(after, `cache_lookups_total{cache="${cache}",result="miss"}`) >= 0, `${cache}'s look-ups`)
  }
  const lookups = (text: string, result: string): number => value(text, `cache_lookups_total{cache="objects",result="${result}"}`)
  t.ok(lookups(after, 'hit') - lookups(before, 'hit') >= 2, 'the talk read again was found kept')
  t.ok(lookups(after, 'miss') > lookups(before, 'miss'), 'its first read was not')
  t.ok(value(after, 'cache_entries{cache="objects"}') >= 1 && value(after, 'cache_bytes{cache="objects"}') > 0, 'the objects kept, and their bytes')
  t.ok(value(after, 'cache_entries{cache="principals"}') >= 1, 'the admin\'s token kept')
  t.ok(Number.isNaN(value(after, 'cache_bytes{cache="principals"}')), 'no bytes where a cache does not count them')
  const logins = (text: string, outcome: string): number => value(text, `login_attempts_total{outcome="${outcome}"}`) || 0
  t.same(['succeeded', 'failed', 'throttled'].map(outcome => logins(after, outcome) - logins(before, outcome)), [1, 2, 1], 'one login, two failures, one throttled')
})
