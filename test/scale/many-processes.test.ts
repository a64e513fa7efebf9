import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import t from 'tap'
import { createPostgres } from '../../core/db/db.js'
import { DEFAULT_SEARCH_PATTERN } from '../../core/solr/settings.js'
import { ADMIN_PASSWORD, freshDatabase, JWT_SECRET, silentLogger, talkBody } from '../helper.js'
import { asyncEnv, failures, indexed, ROOT, spawnService, startRedis, waitFor, writeLoad, type ServiceProcess } from '../queue/helper.js'
import { startSolr } from '../solr/helper.js'
import { freePort } from '../solr-dev/helper.js'

/**
 * The service grows by processes on engines that scale, without a cluster
 * layer of its own: three web processes and two index workers on one
 * PostgreSQL, one Redis and one search server, with clients spread over the
 * three. What one process changes, the others know within a second.
 */
const run = promisify(execFile)
const solr = await startSolr(t)
const redis = await startRedis(t)
const databaseUrl = await freshDatabase(t)
const db = createPostgres(databaseUrl, silentLogger)
t.teardown(async () => { await db.close() })
// Solr is switched on and off through the control panel, so its switch is not declared; asynchronous indexing is.
const env: Record<string, string> = { ...asyncEnv(solr, redis), DATABASE_URL: databaseUrl, ADMIN_PASSWORD, JWT_SECRET, LOGIN_MAX_FAILURES: '3', LOG_LEVEL: 'info' }
delete env.SOLR_ACTIVE

const webs: Array<{ process: ServiceProcess, base: string }> = []
for (let i = 0; i < 3; i++) {
  const port = await freePort()
  webs.push({ process: await spawnService(t, 'app/server.js', { ...env, PORT: String(port), HOST: '127.0.0.1' }, 'ready'), base: `http://127.0.0.1:${port}` })
}
// At debug level the workers log each batch they deliver: that is how the test sees both take part.
const workerEnv = { ...env, LOG_LEVEL: 'debug' }
const workers = [await spawnService(t, 'app/worker.js', workerEnv, 'index worker ready'), await spawnService(t, 'app/worker.js', workerEnv, 'index worker ready')]
const batches = (worker: ServiceProcess): number => worker.lines.filter(line => line.includes('"msg":"index batch delivered"')).length

interface Answer { status: number, headers: Headers, body: any }
async function ask (web: number, method: string, path: string, body?: unknown, token?: string): Promise<Answer> {
  const res = await fetch(`${webs[web].base}${path}`, {
    method,
    headers: { accept: 'application/json', ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...(token !== undefined ? { authorization: `Bearer ${token}` } : {}) },
    body: body !== undefined ? JSON.stringify(body) : undefined
  })
  const text = await res.text()
  return { status: res.status, headers: res.headers, body: text === '' ? null : JSON.parse(text) }
}
async function login (web: number, user = 'admin', password = ADMIN_PASSWORD): Promise<Answer> {
  return await ask(web, 'POST', '/@login', { login: user, password })
}
const admin = (await login(0)).body.token as string

/** Waits until every process answers as `agrees` says, and reports how long that took (ms). */
async function everywhere (what: string, agrees: (web: number) => Promise<boolean>): Promise<number> {
  const started = Date.now()
  await waitFor(what, async () => (await Promise.all(webs.map(async (_, i) => await agrees(i)))).every(Boolean), 5_000)
  return Date.now() - started
}
const settingsOf = async (web: number): Promise<Record<string, any>> => (await ask(web, 'GET', '/@controlpanels/solr-controlpanel', undefined, admin)).body.data

t.test('a control-panel change made in one process applies in all three within a second', async t => {
  const patch = async (web: number, changes: Record<string, unknown>): Promise<void> => {
    t.equal((await ask(web, 'PATCH', '/@controlpanels/solr-controlpanel', changes, admin)).status, 204)
  }
  const engineOf = async (web: number): Promise<string | null> => (await ask(web, 'GET', '/@search?SearchableText=anything')).headers.get('x-search-engine')

  t.same(await Promise.all(webs.map(async (_, i) => await engineOf(i))), ['catalogue', 'catalogue', 'catalogue'], 'Solr is off everywhere')
  await patch(1, { active: true })
  const on = await everywhere('Solr on in every process', async web => await engineOf(web) === 'solr')
  t.ok(on < 1000, `Solr switched on in process 2 answers from Solr in all three after ${on} ms`)

  await patch(2, { boost_rules: { 'room:Auditorium': 50 }, search_pattern: '+Title:{value}' })
  const boosted = await everywhere('boost rules and search pattern everywhere', async web => {
    const data = await settingsOf(web)
    return data.search_pattern === '+Title:{value}' && data.boost_rules['room:Auditorium'] === 50
  })
  t.ok(boosted < 1000, `boost rules and search pattern changed in process 3 are in force in all three after ${boosted} ms`)

  await patch(0, { active: false })
  const off = await everywhere('Solr off everywhere', async web => await engineOf(web) === 'catalogue')
  t.ok(off < 1000, `Solr switched off in process 1: the catalogue answers in all three after ${off} ms`)
  await patch(0, { active: true, boost_rules: {}, search_pattern: DEFAULT_SEARCH_PATTERN })
})

t.test('login throttling counts the failures made in every process', async t => {
  for (const web of [0, 1, 2]) t.equal((await login(web, 'admin', 'wrong password')).status, 401, `a wrong password in process ${web + 1}`)
  const throttled = await login(0)
  t.equal(throttled.status, 429, 'three failures spread over three processes throttle the user in the first')
  t.ok(Number(throttled.headers.get('retry-after')) > 0, 'with Retry-After')
  t.equal((await login(2)).status, 429, 'and in the others, even with the right password')
  await db.query('DELETE FROM login_failures')
})

t.test('a logout in one process revokes the token in the others', async t => {
  const token = (await login(0)).body.token as string
  for (const web of [0, 1, 2]) t.equal((await ask(web, 'GET', '/@users/admin', undefined, token)).status, 200, `the token works in process ${web + 1}`)
  t.equal((await ask(1, 'POST', '/@logout', undefined, token)).status, 204, 'logged out in process 2')
  const refused = await everywhereStatus(1, async web => (await ask(web, 'GET', '/@users/admin', undefined, token)).status, 401)
  t.ok(refused < 1000, `refused at once in process 2, in the others after ${refused} ms`)
})

/**
 * A change applies at once in the process that made it, and in the others as
 * soon as PostgreSQL's notification reaches them (their cached principals
 * are dropped then): the test measures that delay, which must stay well
 * under a second.
 */
async function everywhereStatus (writer: number, web: (web: number) => Promise<number>, status: number): Promise<number> {
  const others = [0, 1, 2].filter(w => w !== writer)
  if (await web(writer) !== status) throw new Error(`process ${writer + 1} itself still answers ${await web(writer)}`)
  const started = Date.now()
  await waitFor(`status ${status} in every process`, async () => (await Promise.all(others.map(async w => await web(w)))).every(s => s === status), 1_000)
  return Date.now() - started
}

t.test('a user\'s change in one process applies in the others as soon as they are notified', async t => {
  t.equal((await ask(0, 'POST', '/@users', { username: 'eve', email: 'eve@example.org', password: 'eve-password', roles: ['Manager'] }, admin)).status, 201)
  const eve = (await login(1, 'eve', 'eve-password')).body.token as string
  for (const web of [0, 1, 2]) t.equal((await ask(web, 'GET', '/@users', undefined, eve)).status, 200, `eve manages users in process ${web + 1} (and each keeps her principal)`)
  t.equal((await ask(2, 'PATCH', '/@users/eve', { roles: ['Member'] }, admin)).status, 204, 'process 3 takes the Manager role away')
  const demoted = await everywhereStatus(2, async web => (await ask(web, 'GET', '/@users', undefined, eve)).status, 403)
  t.ok(demoted < 1000, `at once in process 3, in the others after ${demoted} ms`)
  t.equal((await ask(0, 'PATCH', '/@users/eve', { password: 'a-new-password' }, admin)).status, 204, 'process 1 changes her password')
  const ended = await everywhereStatus(0, async web => (await ask(web, 'GET', '/@users/eve', undefined, eve)).status, 401)
  t.ok(ended < 1000, `her token ends at once in process 1, in the others after ${ended} ms`)
})
t.test('two workers share the queue; one is SIGKILLed mid-run; nothing is indexed out of order, zero drift', async t => {
  let turn = 0
  // Writes spread round-robin over the three web processes.
  const write = async (method: 'POST' | 'PATCH' | 'DELETE', path: string, body?: unknown): Promise<{ status: number, body: any }> =>
    await ask(turn++ % 3, method, path, body, admin)
  const first = writeLoad(write, { clients: 12, total: 360, label: 'spread' })
  // Each of the first talks is changed again and again from every process: the last change must be the one Solr keeps.
  const hot = await Promise.all([0, 1, 2].map(async i => (await write('POST', '/talks', talkBody({ title: `hot ${i}`, speaker: 'v0' }))).body['@id'] as string))
  const revisions = Promise.all(hot.map(async url => {
    const path = new URL(url).pathname
    for (let v = 1; v <= 40; v++) await write('PATCH', path, { speaker: `v${v}` })
  }))
  // The worker that is delivering dies: a worker claims every object that waits when it wakes,
  // so while writes trickle in, the other may have had nothing to take yet.
  await waitFor('a worker delivering', () => workers.some(worker => batches(worker) > 0), 30_000)
  const busy = batches(workers[0]) >= batches(workers[1]) ? 0 : 1
  const survivor = workers[1 - busy]
  const survivorBefore = batches(survivor)
  t.ok(batches(workers[busy]) > 0, `worker ${busy + 1} took batches from the queue (${workers.map(batches).join(' and ')})`)
  await workers[busy].kill('SIGKILL')
  const { statuses, expected } = await first
  await revisions
  t.same(failures(statuses), [], `${statuses.length} writes over three processes, all 2xx, with a worker killed along the way`)

  const pending = async (): Promise<number> => (await db.query('SELECT 1 FROM index_outbox')).rowCount
  await waitFor('the remaining worker drains the outbox', async () => await pending() === 0, 90_000)
  t.ok(batches(survivor) > survivorBefore, `the other worker took over (${survivorBefore} → ${batches(survivor)} batches)`)
  t.same(await indexed(solr, 'spread'), expected, 'Solr holds what the writes left')
  const speakers = await Promise.all(hot.map(async url => {
    const res = await solr.get('plone/select', { q: `UID:"${(await ask(0, 'GET', new URL(url).pathname, undefined, admin)).body.UID as string}"`, fl: 'speaker' })
    return res.body.response.docs[0]?.speaker
  }))
  t.same(speakers, ['v40', 'v40', 'v40'], 'the last of 40 changes made from three processes is what Solr keeps')
  const check = await run(process.execPath, ['dist/app/cli.js', 'sync', '--check'], { cwd: ROOT, env: { ...process.env, ...env, LOG_LEVEL: 'silent' } })
  t.equal(check.stdout, 'missing 0, orphan 0, stale 0\n', '`npm run solr -- sync --check`: zero drift')
})
