import { execFile } from 'node:child_process'
import { createHash, randomBytes } from 'node:crypto'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { promisify } from 'node:util'
import pg from 'pg'
import t from 'tap'
import { ADMIN_PASSWORD, freshDatabase, JWT_SECRET, PG_ADMIN_URL, talkBody } from '../helper.js'
import { png } from '../image-samples.js'
import { asyncEnv, failures, ROOT, spawnService, startRedis, waitFor } from '../queue/helper.js'
import { CONFIGSET } from '../solr/helper.js'
import { freePort, startSolrDev } from '../solr-dev/helper.js'

/**
 * docs/operations.md, "Backups", followed as an operator would: `pg_dump -Fc`
 * of a service's database while several clients write to it, `createdb` and
 * `pg_restore` into a new database, `ANALYZE`, a new service process on it
 * with an empty Solr core and an empty Redis, `npm run solr -- sync`.
 *
 * What the restored service answers is judged by an oracle that knows only
 * what the clients were told: every state of every object that a write
 * acknowledged (2xx), as the original service answered a GET right after
 * it, with the times of the request and of its acknowledgement. pg_dump's
 * snapshot was taken at some moment between its start and its end, so an
 * object may be in any state that could have been committed at such a
 * moment (absent if it could have been created after it), and in no other.
 */
const run = promisify(execFile)
const sha256 = (bytes: Buffer): string => createHash('sha256').update(bytes).digest('hex')

t.test('a backup taken under writes, restored, answers as the site did at the dump\'s moment', async t => {
  const [solr, originalRedis, originalUrl, originalPort] = await Promise.all([
    startSolrDev(t, { cores: { plone: CONFIGSET, restored: CONFIGSET } }), startRedis(t), freshDatabase(t), freePort()
  ])
  const original = `http://127.0.0.1:${originalPort}`
  // Indexing as in production: asynchronous, through Redis (the worker inside the web process).
  await spawnService(t, 'app/server.js', {
    ...asyncEnv(solr, originalRedis, { INDEX_WORKER: 'inline' }), DATABASE_URL: originalUrl, ADMIN_PASSWORD, JWT_SECRET, HOST: '127.0.0.1', PORT: String(originalPort)
  }, 'ready')

  interface Answer { status: number, body: any, bytes: Buffer }
  async function ask (base: string, method: string, path: string, body?: unknown, token?: string): Promise<Answer> {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: { accept: 'application/json', ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...(token !== undefined ? { authorization: `Bearer ${token}` } : {}) },
      body: body !== undefined ? JSON.stringify(body) : undefined
    })
    const bytes = Buffer.from(await res.arrayBuffer())
    const json = (res.headers.get('content-type') ?? '').includes('json') && bytes.length > 0
    return { status: res.status, body: json ? JSON.parse(bytes.toString()) : null, bytes }
  }
  const admin = (await ask(original, 'POST', '/@login', { login: 'admin', password: ADMIN_PASSWORD })).body.token as string

  /** A JSON answer as text with its keys sorted and the service's origin written `{base}`: equal across two processes. */
  function stateText (body: unknown, base: string): string {
    const canonical = (value: unknown): unknown => Array.isArray(value)
      ? value.map(canonical)
      : value !== null && typeof value === 'object'
        ? Object.fromEntries(Object.entries(value).sort(([a], [b]) => a < b ? -1 : a > b ? 1 : 0).map(([k, v]) => [k, canonical(v)]))
        : value
    return JSON.stringify(canonical(body)).replaceAll(base, '{base}')
  }
  /** An object's state as a Manager's GET answers it; null when it is not there (404). */
  async function stateOf (base: string, path: string, token: string): Promise<string | null> {
    const res = await ask(base, 'GET', path, undefined, token)
    if (res.status === 404) return null
    if (res.status !== 200) throw new Error(`GET ${path}: ${res.status} ${res.bytes.toString()}`)
    return stateText(res.body, base)
  }

  /** One acknowledged write: when it was sent and answered (performance.now()), and the state it left. */
  interface Step { requested: number, acked: number, state: string | null }
  /** Every acknowledged state of one object, in order; the first is its creation. */
  const histories = new Map<string, Step[]>()
  const statuses: number[] = []

  /** A write by the one client that writes this object, then its state as a GET answers it. */
  async function write (path: string, method: 'POST' | 'PATCH' | 'DELETE', url: string, body?: unknown): Promise<void> {
    const requested = performance.now()
    const res = await ask(original, method, url, body, admin)
    const acked = performance.now()
    statuses.push(res.status)
    if (res.status < 200 || res.status >= 300) return
    const state = method === 'DELETE' ? null : await stateOf(original, path, admin)
    if (method !== 'DELETE' && state === null) throw new Error(`${path} is not there after ${method} ${url} answered ${res.status}`)
    histories.set(path, [...histories.get(path) ?? [], { requested, acked, state }])
  }

  // ---- Content of several kinds, before the dump ----
  const fileBytes = randomBytes(3 * 1024 * 1024 + 17)
  const imageBytes = png(320, 200, { comment: 'restored from a backup' })
  const upload = (bytes: Buffer, filename: string, contentType: string): Record<string, string> =>
    ({ data: bytes.toString('base64'), encoding: 'base64', filename, 'content-type': contentType })
  const slate = (text: string): Record<string, unknown> => ({ '@type': 'slate', value: [{ type: 'p', children: [{ text }] }], plaintext: text })

  const blocks = {
    'b-title': { '@type': 'title' },
    'b-text': slate('Lighthouse keepers restore their logs'),
    'b-image': { '@type': 'image', url: 'https://example.org/a.png', alt: 'Narwhal' },
    'b-grid': { '@type': 'gridBlock', blocks: { 'g-1': slate('Quokka sightings') }, blocks_layout: { items: ['g-1'] } }
  }
  const USER = { username: 'backup-user', email: 'backup-user@example.org', fullname: 'Backup User', password: 'a-password-to-restore' }
  // Each object by one client, as in the load below; the objects side by side.
  await Promise.all([
    async () => {
      await write('/talks/zanzibar-keynote', 'POST', '/talks', talkBody({ id: 'zanzibar-keynote', title: 'Zanzibar keynote', speaker: 'Ada', room: '101' }))
      await write('/talks/zanzibar-keynote', 'POST', '/talks/zanzibar-keynote/@workflow/publish', {})
    },
    async () => { await write('/talks/private-draft', 'POST', '/talks', talkBody({ id: 'private-draft', title: 'A private draft', type_of_talk: 'Keynote', audience: ['Advanced'] })) },
    async () => { await write('/harbour', 'POST', '/', { '@type': 'Image', id: 'harbour', title: 'Harbour', image: upload(imageBytes, 'harbour.png', 'image/png') }) },
    async () => {
      await write('/report', 'POST', '/', { '@type': 'File', id: 'report', title: 'Annual report', file: upload(fileBytes, 'report.bin', 'application/octet-stream') })
      await write('/report', 'POST', '/report/@workflow/publish', {})
    },
    async () => {
      await write('/about', 'POST', '/', { '@type': 'Document', id: 'about', title: 'About us', blocks, blocks_layout: { items: Object.keys(blocks) } })
      await write('/about', 'POST', '/about/@workflow/publish', {})
    },
    async () => {
      const created = await ask(original, 'POST', '/@users', USER, admin)
      if (created.status !== 201) throw new Error(`creating the user: ${created.status} ${created.bytes.toString()}`)
    }
  ].map(async client => { await client() }))
  const userState = await stateOf(original, `/@users/${USER.username}`, admin)
  const originalDownloads = {
    file: await ask(original, 'GET', '/report/@@download/file', undefined, admin),
    image: await ask(original, 'GET', '/harbour/@@download/image', undefined, admin)
  }

  // ---- Writes from several clients, pg_dump in the middle of them ----
  const CLIENTS = 6
  let stop = false
  let acknowledged = 0
  /** Each client creates talks of its own and changes them: PATCH, publish, then delete, PATCH again or retract. */
  async function client (c: number): Promise<void> {
    for (let n = 0; !stop; n++) {
      const id = `load-c${c}-n${n}`
      const path = `/talks/${id}`
      const steps: Array<[method: 'POST' | 'PATCH' | 'DELETE', url: string, body?: unknown]> = [
        ['POST', '/talks', talkBody({ id, title: `Load ${c} ${n}`, speaker: `Speaker ${c}` })],
        ['PATCH', path, { description: `changed by client ${c}` }],
        ['POST', `${path}/@workflow/publish`, {}],
        n % 3 === 0 ? ['DELETE', path] : n % 3 === 1 ? ['PATCH', path, { title: `Load ${c} ${n}, revised`, audience: ['Professionals'] }] : ['POST', `${path}/@workflow/retract`, {}]
      ]
      for (const [method, url, body] of steps) {
        await write(path, method, url, body)
        acknowledged++
      }
    }
  }
  const load = Promise.all(Array.from({ length: CLIENTS }, async (_, c) => { await client(c) }))
  load.catch(() => {}) // awaited below; a set-up that fails before then stops the clients at teardown
  t.teardown(() => { stop = true })

  const dumpDir = await mkdtemp(join(tmpdir(), 'backup-test-'))
  t.teardown(async () => { await rm(dumpDir, { recursive: true, force: true }) })
  const dumpFile = join(dumpDir, 'site.dump')
  await waitFor('writes under way', () => acknowledged >= 40, 20_000)
  const dumpStarted = performance.now()
  await run('pg_dump', ['--format=custom', `--file=${dumpFile}`, originalUrl])
  const dumpEnded = performance.now()
  const atDumpEnd = acknowledged
  await waitFor('writes after the dump', () => acknowledged >= atDumpEnd + 40, 20_000)
  stop = true
  await load

  // ---- Restore into a new database, start a new service on it ----
  const restoreName = `cms_restore_${process.pid}_${Math.random().toString(36).slice(2, 10)}`
  const restoreUrl = Object.assign(new URL(PG_ADMIN_URL), { pathname: `/${restoreName}` }).toString()
  await run('createdb', [`--maintenance-db=${PG_ADMIN_URL}`, restoreName])
  t.teardown(async () => {
    const client = new pg.Client({ connectionString: PG_ADMIN_URL })
    await client.connect()
    await client.query(`DROP DATABASE IF EXISTS ${restoreName} WITH (FORCE)`)
    await client.end()
  })
  await run('pg_restore', ['--exit-on-error', `--dbname=${restoreUrl}`, dumpFile])
  await run('vacuumdb', ['--analyze-only', '--quiet', `--dbname=${restoreUrl}`])
  const restoredDb = new pg.Client({ connectionString: restoreUrl })
  await restoredDb.connect()
  t.teardown(async () => { await restoredDb.end() })
  const outboxEmpty = async (): Promise<boolean> => (await restoredDb.query('SELECT 1 FROM index_outbox')).rowCount === 0
  const catalogued = async (): Promise<number> => Number((await restoredDb.query('SELECT count(*) AS n FROM catalog')).rows[0].n)

  // A Redis that never saw the site, and a Solr core of its own, empty: both are rebuilt.
  const restoredRedis = await startRedis(t)
  const restoredEnv = {
    ...asyncEnv(solr, restoredRedis, { INDEX_WORKER: 'inline', SOLR_BASE: '/solr/restored' }),
    DATABASE_URL: restoreUrl,
    JWT_SECRET,
    // Not the password the site's admin has: it is used only when the user is first created.
    ADMIN_PASSWORD: 'not-the-password-of-the-restored-admin'
  }
  const restoredPort = await freePort()
  const restored = `http://127.0.0.1:${restoredPort}`
  await spawnService(t, 'app/server.js', { ...restoredEnv, HOST: '127.0.0.1', PORT: String(restoredPort) }, 'ready')
  const restoredAdmin = await ask(restored, 'POST', '/@login', { login: 'admin', password: ADMIN_PASSWORD })

  /** `npm run solr -- <args>` (the built CLI) against the restored database: exit code and output. */
  async function cli (...args: string[]): Promise<{ code: number, stdout: string }> {
    try {
      const { stdout } = await run(process.execPath, ['dist/app/cli.js', ...args], { cwd: ROOT, env: { ...process.env, ...restoredEnv, LOG_LEVEL: 'silent' } })
      return { code: 0, stdout }
    } catch (err) {
      const e = err as { code: number, stdout: string }
      return { code: e.code, stdout: e.stdout }
    }
  }

  /** The documents of the restored core that a search sees. */
  const documents = async (): Promise<number> => (await solr.get('restored/select', { q: '*:*', rows: 0 })).body.response.numFound
  /** The restored service's drift check (`GET @solr-maintenance/sync?check=1`, what `npm run solr -- sync --check` prints). */
  const driftCheck = async (): Promise<string> => (await ask(restored, 'GET', '/@solr-maintenance/sync?check=1', undefined, restoredAdmin.body.token)).bytes.toString()

  await t.test('the backup was taken under writes', async t => {
    t.same(failures(statuses), [], `${statuses.length} writes from ${CLIENTS} clients, all acknowledged`)
    const during = [...histories.values()].flat().filter(step => step.acked > dumpStarted && step.requested < dumpEnded).length
    t.ok(during > 0, `${during} writes were under way while pg_dump ran (${Math.round(dumpEnded - dumpStarted)} ms)`)
  })

  /**
   * The states an object may be in in a snapshot taken between the dump's start
   * and end: state i, committed between its request and its acknowledgement, is
   * possible when it may have been committed before the end and the next one
   * after the start; absent, when its creation may have been committed after the start.
   */
  function possibleStates (steps: Step[]): Array<string | null> {
    const states: Array<string | null> = []
    if (steps[0].acked > dumpStarted) states.push(null)
    steps.forEach((step, i) => {
      if (step.requested < dumpEnded && (i === steps.length - 1 || steps[i + 1].acked > dumpStarted)) states.push(step.state)
    })
    return states
  }

  /** What the restored service answers for each object the clients wrote (null: not there). */
  const restoredStates = new Map<string, string | null>()

  await t.test('every object answers as it was at the dump\'s moment', async t => {
    const token = restoredAdmin.body.token as string
    const kinds = { before: 0, during: 0, after: 0 }
    const wrong: string[] = []
    for (const [path, steps] of histories) {
      const possible = possibleStates(steps)
      if (possible.length === 1 && possible[0] === null) kinds.after++
      else if (possible.length === 1) kinds.before++
      else kinds.during++
      const state = await stateOf(restored, path, token)
      restoredStates.set(path, state)
      if (!possible.includes(state)) {
        const held = state === null ? 'absent' : state === steps[steps.length - 1].state ? 'in its last state' : `in state ${String(steps.findIndex(step => step.state === state))}`
        wrong.push(`${path} is ${held}; possible: ${possible.map(p => p === null ? 'absent' : `state ${steps.findIndex(step => step.state === p)}`).join(', ')}`)
      }
    }
    t.same(wrong, [], `${histories.size} objects: ${kinds.before} settled before the dump, ${kinds.during} written while it ran, ${kinds.after} created after it`)
    t.ok(kinds.during > 0 && kinds.after > 0 && kinds.before > 0, 'each kind was met')
    t.equal(await stateOf(restored, `/@users/${USER.username}`, token), userState, 'the user answers as before')
  })

  await t.test('file and image bytes are restored', async t => {
    const file = await ask(restored, 'GET', '/report/@@download/file')
    t.equal(file.status, 200)
    t.equal(sha256(file.bytes), sha256(fileBytes), `the file's ${fileBytes.length} bytes (a large object)`)
    t.equal(sha256(originalDownloads.file.bytes), sha256(fileBytes), 'as the original service served them')
    const image = await ask(restored, 'GET', '/harbour/@@download/image', undefined, restoredAdmin.body.token)
    t.equal(image.status, 200)
    t.equal(sha256(image.bytes), sha256(originalDownloads.image.bytes), 'the image\'s bytes, as the original service served them')
    t.equal(sha256(image.bytes), sha256(imageBytes), 'which are the uploaded ones')
  })

  await t.test('the users log in with their passwords; tokens issued before the backup hold', async t => {
    t.equal(restoredAdmin.status, 200, 'the admin logs in with the password it had (not the ADMIN_PASSWORD of the new process)')
    const login = await ask(restored, 'POST', '/@login', { login: USER.username, password: USER.password })
    t.equal(login.status, 200, 'the restored user logs in')
    t.equal((await ask(restored, 'GET', `/@users/${USER.username}`, undefined, login.body.token)).status, 200, 'and reads themself with the new token')
    t.equal((await ask(restored, 'POST', '/@login', { login: USER.username, password: 'not-their-password' })).status, 401, 'not with another password')
    t.equal((await ask(restored, 'GET', '/@users/admin', undefined, admin)).status, 200, 'the admin\'s token from before the backup (same JWT_SECRET)')
  })

  /** Every page of a batched listing, followed by its `batching.next` links: the paths of its items. */
  async function allItems (base: string, url: string, token: string): Promise<Array<Record<string, any>>> {
    const items: Array<Record<string, any>> = []
    for (let next: string | undefined = `${base}${url}`; next !== undefined;) {
      const res = await ask('', 'GET', next, undefined, token)
      if (res.status !== 200) throw new Error(`GET ${next}: ${res.status}`)
      items.push(...res.body.items)
      next = res.body.batching?.next
    }
    return items
  }
  const pathOf = (id: string): string => new URL(id).pathname

  await t.test('the restored catalogue lists exactly what traversal finds', async t => {
    const token = restoredAdmin.body.token as string
    const found = new Map<string, Record<string, any>>()
    const unreadable: string[] = []
    const visit = async (path: string): Promise<void> => {
      const res = await ask(restored, 'GET', path, undefined, token)
      if (res.status !== 200) { unreadable.push(`${path}: ${res.status}`); return }
      found.set(path, res.body)
      if (res.body.is_folderish === true || path === '/') {
        for (const item of await allItems(restored, `${path === '/' ? '' : path}?b_size=500`, token)) await visit(pathOf(item['@id']))
      }
    }
    await visit('/')
    found.delete('/')
    const traversed = [...found.keys()].sort()
    t.same(unreadable, [], `traversal reads every object it meets (${traversed.length})`)
    const stored = (await restoredDb.query<{ path: string }>("SELECT path FROM content WHERE path <> '/'")).rows.map(row => row.path).sort()
    t.same(traversed, stored, 'traversal finds exactly the objects the restored database holds')
    const present = ['/talks', ...[...restoredStates].filter(([, state]) => state !== null).map(([path]) => path)].sort()
    t.same(traversed, present, 'which are those the oracle found there (and the first start\'s talks folder): nothing the dump could not have seen')

    const searched = await allItems(restored, '/@search?b_size=500', token)
    t.same(searched.map(item => pathOf(item['@id'])).sort(), traversed, `@search lists the ${found.size} objects traversal finds, no more, no less`)
    const summary = (o: Record<string, any>): unknown => [o['@type'], o.title, o.description, o.review_state]
    t.same(searched.filter(item => JSON.stringify(summary(item)) !== JSON.stringify(summary(found.get(pathOf(item['@id'])) ?? {}))).map(item => pathOf(item['@id'])), [],
      'with each object\'s type, title, description and state')
  })

  await t.test('npm run solr -- sync brings the empty Solr core to zero drift', async t => {
    // What the dump's outbox held goes to the new core through the new Redis.
    await waitFor('the restored outbox to drain', outboxEmpty, 20_000)
    const synced = await cli('sync')
    t.equal(synced.code, 0, 'sync ends well')
    t.match(synced.stdout, /\nmissing [1-9]\d*, orphan 0, stale 0 \(repaired\)\n$/, 'it found missing what was indexed before the dump, and indexed it')
    t.equal(await driftCheck(), 'missing 0, orphan 0, stale 0\n', 'then the drift check: zero drift')
    const objects = await catalogued()
    t.equal(await documents(), objects, `the core holds the ${objects} catalogued objects`)

    const search = await fetch(`${restored}/@search?SearchableText=zanzibar`, { headers: { accept: 'application/json' } })
    t.equal(search.headers.get('x-search-engine'), 'solr', 'a full-text search goes to Solr')
    t.same((await search.json()).items.map((item: { '@id': string }) => pathOf(item['@id'])), ['/talks/zanzibar-keynote'], 'and finds the restored talk')
  })

  await t.test('the restored site goes on: writes, a new file, a delete, all found and indexed', async t => {
    const token = restoredAdmin.body.token as string
    const wrote = async (method: string, path: string, body?: unknown): Promise<number> => (await ask(restored, method, path, body, token)).status
    t.equal(await wrote('POST', '/talks', talkBody({ id: 'after-restore', title: 'Yodelling after the restore' })), 201, 'a new talk in a restored folder')
    t.equal(await wrote('PATCH', '/talks/zanzibar-keynote', { description: 'given again after the restore' }), 204, 'a restored talk changed')
    t.equal(await wrote('POST', '/talks/after-restore/@workflow/publish', {}), 200, 'and published')
    t.equal(await wrote('DELETE', '/talks/private-draft'), 204, 'a restored talk deleted')
    const second = randomBytes(300 * 1024)
    t.equal(await wrote('POST', '/', { '@type': 'File', id: 'second-report', title: 'Second report', file: upload(second, 'second.bin', 'application/octet-stream') }), 201, 'a new file (a new large object)')
    t.equal(sha256((await ask(restored, 'GET', '/second-report/@@download/file', undefined, token)).bytes), sha256(second), 'served whole')
    t.equal(sha256((await ask(restored, 'GET', '/report/@@download/file', undefined, token)).bytes), sha256(fileBytes), 'beside the restored one, unchanged')

    const talks = (await allItems(restored, '/@search?portal_type=talk&b_size=500', token)).map(item => pathOf(item['@id']))
    t.ok(talks.includes('/talks/after-restore') && !talks.includes('/talks/private-draft'), 'the catalogue has the new talk and not the deleted one')
    await waitFor('the writes indexed', outboxEmpty, 20_000)
    const objects = await catalogued()
    await waitFor('Solr to commit', async () => await documents() === objects, 10_000).catch(() => {})
    t.equal(await documents(), objects, `Solr follows: ${objects} documents`)
    t.equal(await driftCheck(), 'missing 0, orphan 0, stale 0\n', 'zero drift')
    const found = await ask(restored, 'GET', '/@search?SearchableText=yodelling')
    t.equal(found.status, 200)
    t.same(found.body.items.map((item: { '@id': string }) => pathOf(item['@id'])), ['/talks/after-restore'], 'a full-text search finds the new talk')
  })
})
