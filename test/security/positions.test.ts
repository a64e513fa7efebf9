import fc from 'fast-check'
import t from 'tap'
import { build, talkBody, type TestApp } from '../helper.js'
import { png, upload } from '../image-samples.js'
import { startSolr } from '../solr/helper.js'

/**
 * A refused request consumes nothing shared (issue 22, finding 5; docs/api.md, "Security"):
 * a folder's positions are taken only by a create that commits. Every way a create or an
 * import is refused (401, 403, 404, 405, 400, 409, 413, 415) or fails once it reached the
 * database (an explicit id another object holds: the import's transaction rolls back after
 * its first rows took their positions) leaves the folder's counter where it was, and neither
 * does it advance the outbox's ids. The oracle: after any mix of refused and successful
 * requests, sent side by side, the folder's objects sit at exactly the positions 0 … n-1.
 * And no counter overflows: a folder whose counter stands past the 32-bit limit (set in the
 * database) still takes creates and imports, in PostgreSQL, the catalogue and Solr.
 */
const solr = await startSolr(t)
const { app, call, tokenFor } = await build(t, {
  env: { SOLR_ACTIVE: 'true', SOLR_PORT: String(solr.port), SOLR_BASE: '/solr/plone', IMAGE_MAX_BYTES: '2000' }
})
const admin = await tokenFor('admin')
const member = await tokenFor('member')

const created = async (res: Promise<Awaited<ReturnType<TestApp['call']>>>): Promise<string> => {
  const answer = await res
  if (answer.statusCode !== 201) throw new Error(`expected 201, got ${answer.statusCode} ${answer.body}`)
  return new URL(answer.json()['@id']).pathname
}
const published = async (path: string): Promise<string> => {
  if ((await call('POST', `${path}/@workflow/publish`, {}, admin)).statusCode !== 200) throw new Error(`publishing ${path}`)
  return path
}
/** A folder in /talks (where Members are Contributors), published, with one talk `taken`. */
const FOLDER = await published(await created(call('POST', '/talks', { '@type': 'folder', id: 'positions', title: 'Positions' }, admin)))
const TAKEN = await created(call('POST', FOLDER, talkBody({ id: 'taken', title: 'Taken' }), admin))
/** A folder Members may view (published) but not add to. */
const CLOSED = await published(await created(call('POST', '/', { '@type': 'folder', id: 'closed', title: 'Closed' }, admin)))

const imported = (...items: Array<Record<string, unknown>>): Record<string, unknown> => ({ items })
const tooLarge = upload(png(64, 64, { comment: 'x'.repeat(3000) }))

interface Request { name: string, status: number, method: 'POST', path: string, body?: unknown, token?: string, headers?: Record<string, string>, payload?: string }
/** Every way a create or an import into FOLDER is refused, or fails in the database. */
const REFUSED: Request[] = [
  { name: 'anonymous create', status: 401, method: 'POST', path: FOLDER, body: talkBody() },
  { name: 'anonymous import', status: 401, method: 'POST', path: `${FOLDER}/@import`, body: imported(talkBody()) },
  { name: 'create in a folder the Member may not add to', status: 403, method: 'POST', path: CLOSED, body: talkBody(), token: member },
  { name: 'import into a folder the Member may not add to', status: 403, method: 'POST', path: `${CLOSED}/@import`, body: imported(talkBody()), token: member },
  { name: 'a field the Member may not write', status: 403, method: 'POST', path: FOLDER, body: talkBody({ room: '101' }), token: member },
  { name: 'an imported field the Member may not write', status: 403, method: 'POST', path: `${FOLDER}/@import`, body: imported(talkBody(), talkBody({ room: '101' })), token: member },
  { name: 'an unknown type', status: 403, method: 'POST', path: FOLDER, body: { '@type': 'nonsense', title: 'x' }, token: admin },
  { name: 'an invalid talk', status: 400, method: 'POST', path: FOLDER, body: talkBody({ type_of_talk: 'Sermon' }), token: member },
  { name: 'no type', status: 400, method: 'POST', path: FOLDER, body: { title: 'x' }, token: admin },
  { name: 'an invalid item', status: 400, method: 'POST', path: `${FOLDER}/@import`, body: imported(talkBody(), talkBody({ audience: [] })), token: admin },
  { name: 'a transition the item does not offer', status: 400, method: 'POST', path: `${FOLDER}/@import`, body: imported({ ...talkBody(), transitions: ['retract'] }), token: admin },
  { name: 'an explicit id taken', status: 409, method: 'POST', path: FOLDER, body: talkBody({ id: 'taken' }), token: admin },
  { name: 'an imported id taken (after the first rows were written)', status: 409, method: 'POST', path: `${FOLDER}/@import`, body: imported(talkBody({ title: 'Free' }), talkBody({ id: 'taken' })), token: admin },
  { name: 'an id given twice in an import', status: 409, method: 'POST', path: `${FOLDER}/@import`, body: imported(talkBody({ id: 'twice' }), talkBody({ id: 'twice' })), token: admin },
  { name: 'an image too large', status: 413, method: 'POST', path: FOLDER, body: talkBody({ image: tooLarge }), token: admin },
  { name: 'a body that is not JSON', status: 415, method: 'POST', path: FOLDER, payload: 'title=x', headers: { 'content-type': 'application/x-www-form-urlencoded' }, token: admin },
  { name: 'a create in a talk', status: 405, method: 'POST', path: TAKEN, body: talkBody(), token: admin },
  { name: 'a create in a folder that is not there', status: 404, method: 'POST', path: `${FOLDER}/nowhere`, body: talkBody(), token: admin }
]

const send = async (r: Request): Promise<number> => r.payload !== undefined
  ? (await app.inject({ method: r.method, url: r.path, payload: r.payload, headers: { ...r.headers, authorization: `Bearer ${r.token ?? ''}` } })).statusCode
  : (await call(r.method, r.path, r.body, r.token)).statusCode

const counterOf = async (path: string): Promise<number | null> =>
  (await app.db.query<{ next: number }>('SELECT next FROM folder_positions p JOIN content f ON f.uid = p.parent_uid WHERE f.path = $1', [path])).rows[0]?.next ?? null
const outboxIds = async (): Promise<number> => (await app.db.query<{ last_value: number }>('SELECT last_value FROM index_outbox_id_seq')).rows[0].last_value
const positionsIn = async (path: string): Promise<number[]> =>
  (await app.db.query<{ position: number }>('SELECT c.position FROM content c JOIN content f ON f.uid = c.parent_uid WHERE f.path = $1 ORDER BY c.position', [path])).rows.map(r => r.position)

t.test('each refused or failed create and import leaves the counters where they were', async t => {
  for (const r of REFUSED) {
    const [counter, closed, outbox] = [await counterOf(FOLDER), await counterOf(CLOSED), await outboxIds()]
    t.equal(await send(r), r.status, `${r.name}: ${r.status}`)
    t.same([await counterOf(FOLDER), await counterOf(CLOSED), await outboxIds()], [counter, closed, outbox], `${r.name}: the folder's counter and the outbox's ids unchanged`)
  }
})

t.test('refused and successful requests side by side: the objects sit at positions 0 … n-1', async t => {
  const successes: Request[] = [
    { name: 'a Member\'s create', status: 201, method: 'POST', path: FOLDER, body: talkBody({ title: 'By a Member' }), token: member },
    { name: 'a Manager\'s create', status: 201, method: 'POST', path: FOLDER, body: talkBody({ title: 'By a Manager' }), token: admin },
    { name: 'an import of three', status: 201, method: 'POST', path: `${FOLDER}/@import`, body: imported(talkBody({ title: 'I' }), talkBody({ title: 'I' }), { ...talkBody({ title: 'I' }), transitions: ['submit'] }), token: member }
  ]
  const request = fc.constantFrom(...REFUSED, ...successes)
  await fc.assert(fc.asyncProperty(fc.array(fc.array(request, { minLength: 1, maxLength: 8 }), { minLength: 1, maxLength: 4 }), async batches => {
    for (const batch of batches) {
      const statuses = await Promise.all(batch.map(send))
      const wrong = batch.filter((r, i) => statuses[i] !== r.status).map((r, i) => `${r.name}: ${statuses[i]}`)
      if (wrong.length > 0) throw new Error(`unexpected answers: ${wrong.join('; ')}`)
    }
    const positions = await positionsIn(FOLDER)
    const dense = positions.every((position, i) => position === i)
    if (!dense || await counterOf(FOLDER) !== positions.length) throw new Error(`positions ${positions.join(' ')}, counter ${String(await counterOf(FOLDER))}`)
  }), { numRuns: 15 })
  t.pass('15 random mixes: positions dense, the counter at the number of objects')
})

t.test('a folder past the 32-bit limit still takes creates and imports', async t => {
  const folder = await published(await created(call('POST', '/talks', { '@type': 'folder', id: 'crowded', title: 'Crowded' }, admin)))
  await created(call('POST', folder, talkBody({ title: 'First' }), admin))
  // As if two thousand million objects had been created here (and deleted).
  await app.db.query('UPDATE folder_positions p SET next = $2 FROM content f WHERE f.uid = p.parent_uid AND f.path = $1', [folder, 2 ** 31 - 2])
  await created(call('POST', folder, talkBody({ title: 'Near' }), member))
  await created(call('POST', folder, talkBody({ title: 'At' }), member))
  const res = await call('POST', `${folder}/@import`, imported(talkBody({ title: 'Past' }), talkBody({ title: 'Further' })), admin)
  t.equal(res.statusCode, 201, 'an import past the limit')
  t.same(await positionsIn(folder), [0, 2 ** 31 - 2, 2 ** 31 - 1, 2 ** 31, 2 ** 31 + 1], 'positions in PostgreSQL')
  const listing = (await call('GET', `${folder}?b_size=10`, undefined, admin)).json()
  t.same(listing.items.map((i: { title: string }) => i.title), ['First', 'Near', 'At', 'Past', 'Further'], 'the folder lists them in their order')
  const found = (await call('GET', `/@search?path.query=${folder}&getObjPositionInParent=${2 ** 31 + 1}`, undefined, admin)).json()
  t.same(found.items.map((i: { title: string }) => i.title), ['Further'], 'the catalogue finds a position past the limit')
  const solrDoc = await solr.get('plone/select', { q: `getObjPositionInParent:${2 ** 31 + 1}`, fl: 'Title' })
  t.same(solrDoc.body.response.docs.map((d: { Title: string }) => d.Title), ['Further'], 'so does Solr')
  t.same(await app.solr.maintenance.sync({ check: true }), { missing: [], orphan: [], stale: [] }, 'Solr took every document')
  t.equal((await call('GET', `/@search?getObjPositionInParent=${2 ** 53}`, undefined, admin)).statusCode, 400, 'a position JavaScript cannot hold exactly is a bad query, not a 500')
})
