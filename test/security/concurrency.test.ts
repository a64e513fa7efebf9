import t from 'tap'
import { build, talkBody } from '../helper.js'
import { png, upload } from '../image-samples.js'

/**
 * Concurrent writes never lose an acknowledged change (docs/api.md, issue 11). Real HTTP
 * clients against a listening server, so that the requests interleave in PostgreSQL;
 * each race runs ROUNDS times, and every round says how many writes it lost.
 *
 * What "acknowledged" means per client: each client sends its writes one after the other,
 * so its last acknowledged write is its newest. When clients write different fields, each
 * field must end with its client's last acknowledged value; when they write the same field,
 * with the last acknowledged value of one of them (whichever PostgreSQL ordered last).
 */
const ROUNDS = Number(process.env.RACE_ROUNDS ?? 3)
const WRITES = 40
const PANEL = '/@controlpanels/solr-controlpanel'

interface Answer { status: number, body: any, etag: string | null }
type Http = (method: string, path: string, body?: unknown, headers?: Record<string, string>) => Promise<Answer>

/** A field, the value a client writes in its i-th write, and how a GET shows it (to compare). */
interface Field { name: string, write: (i: number) => unknown, shown: (body: any) => unknown, written: (i: number) => unknown }
const plain = (name: string, write: (i: number) => unknown): Field => ({ name, write, shown: body => body[name], written: write })
const TALK_FIELDS: Field[] = [
  plain('title', i => `Title ${i}`),
  plain('description', i => `Description ${i}`),
  plain('speaker', i => `Speaker ${i}`),
  plain('email', i => `speaker${i}@example.org`),
  // Rich text: its text is compared, whatever markup the service wraps it in.
  { name: 'details', write: i => `Details ${i}`, shown: body => body.details?.data.replace(/<[^>]*>/g, ''), written: i => `Details ${i}` },
  plain('subjects', i => [`subject-${i}`])
]

/** Runs the clients together; each sends its writes in order and remembers its last acknowledged one. */
async function race (clients: Array<(i: number) => Promise<number>>, writes = WRITES): Promise<Array<{ last: number | null, statuses: Record<number, number> }>> {
  return await Promise.all(clients.map(async client => {
    let last: number | null = null
    const statuses: Record<number, number> = {}
    for (let i = 0; i < writes; i++) {
      const status = await client(i)
      statuses[status] = (statuses[status] ?? 0) + 1
      if (status === 204 || status === 200) last = i
    }
    return { last, statuses }
  }))
}

t.test('concurrent writes', async t => {
  const { app, tokenFor } = await build(t)
  const admin = await tokenFor('admin')
  await app.listen({ port: 0, host: '127.0.0.1' })
  const address = app.server.address()
  const base = `http://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : 0}`
  const http: Http = async (method, path, body, headers = {}) => {
    const res = await fetch(base + path, {
      method,
      headers: { accept: 'application/json', authorization: `Bearer ${admin}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {})
    })
    const text = await res.text()
    return { status: res.status, body: text === '' ? null : JSON.parse(text), etag: res.headers.get('etag') }
  }
  const newTalk = async (title: string, fields: Record<string, unknown> = {}): Promise<string> => {
    const res = await http('POST', '/talks', talkBody({ title, ...fields }))
    if (res.status !== 201) throw new Error(`create: ${res.status} ${JSON.stringify(res.body)}`)
    return new URL(res.body['@id']).pathname
  }
  const patch = (path: string, field: Field, round: number) => async (i: number): Promise<number> =>
    (await http('PATCH', path, { [field.name]: field.write(round * 1000 + i) })).status
  /** The fields whose final value is not their client's last acknowledged one. */
  const lostFields = (fields: Field[], body: any, results: Array<{ last: number | null }>, round: number): string[] =>
    fields.flatMap((field, c) => {
      const last = results[c].last
      const expected = last === null ? undefined : field.written(round * 1000 + last)
      return JSON.stringify(field.shown(body)) === JSON.stringify(expected) ? [] : [`${field.name}: ${JSON.stringify(field.shown(body))} instead of ${JSON.stringify(expected)}`]
    })

  t.test('six clients PATCH six different fields of one talk, 40 times each', async t => {
    for (let round = 1; round <= ROUNDS; round++) {
      const path = await newTalk(`Six fields ${round}`)
      const results = await race(TALK_FIELDS.map(field => patch(path, field, round)))
      t.same(results.map(r => r.statuses), TALK_FIELDS.map(() => ({ 204: WRITES })), `round ${round}: every PATCH acknowledged`)
      const lost = lostFields(TALK_FIELDS, (await http('GET', path)).body, results, round)
      t.same(lost, [], `round ${round}: each field keeps its last acknowledged value (${lost.length} of ${TALK_FIELDS.length} lost)`)
    }
  })

  t.test('six clients PATCH the same field: the final value is the last acknowledged write of one of them', async t => {
    for (let round = 1; round <= ROUNDS; round++) {
      const path = await newTalk(`One field ${round}`)
      const clients = [0, 1, 2, 3, 4, 5]
      const results = await race(clients.map(c => async i => (await http('PATCH', path, { description: `Client ${c} write ${round * 1000 + i}` })).status))
      t.same(results.map(r => r.statuses), clients.map(() => ({ 204: WRITES })), `round ${round}: every PATCH acknowledged`)
      const final = (await http('GET', path)).body.description
      t.ok(clients.some(c => final === `Client ${c} write ${round * 1000 + results[c].last!}`), `round ${round}: ${final} is one client's last acknowledged write`)
    }
  })

  t.test('If-Match: a stale ETag never gets 204', async t => {
    const path = await newTalk('Optimistic locking')
    const read = await http('GET', path)
    t.ok(read.etag, 'GET gives an ETag')
    t.equal((await http('PATCH', path, { description: 'Changed by someone else' })).status, 204)
    const stale = await http('PATCH', path, { description: 'Written over a stale read' }, { 'if-match': read.etag! })
    t.equal(stale.status, 409, 'a stale If-Match → 409 (docs/api.md)')
    t.equal(stale.body?.type, 'Conflict')
    t.equal((await http('GET', path)).body.description, 'Changed by someone else', 'and nothing written')

    // Six clients increment a counter read with its ETag: every acknowledged increment
    // counts, and no two PATCHes with the same If-Match are both acknowledged.
    for (let round = 1; round <= ROUNDS; round++) {
      const counter = await newTalk(`Counter ${round}`, { description: '0' })
      const acknowledged: string[] = []
      const results = await race([0, 1, 2, 3, 4, 5].map(() => async () => {
        const current = await http('GET', counter)
        const res = await http('PATCH', counter, { description: String(Number(current.body.description) + 1) }, { 'if-match': current.etag! })
        if (res.status === 204) acknowledged.push(current.etag!)
        return res.status
      }), 15)
      t.same(results.flatMap(r => Object.keys(r.statuses)).filter(s => s !== '204' && s !== '409'), [], `round ${round}: only 204 or 409`)
      t.equal(new Set(acknowledged).size, acknowledged.length, `round ${round}: no ETag acknowledged twice`)
      t.equal((await http('GET', counter)).body.description, String(acknowledged.length), `round ${round}: the counter equals the ${acknowledged.length} acknowledged increments`)
    }
  })

  t.test('30 concurrent creates with one title: all 201, ids and positions unique', async t => {
    // A folder of their own, so that the positions start at 0.
    const made = await http('POST', '/talks', { '@type': 'folder', title: 'Same title folder' })
    t.equal(made.status, 201)
    const folder = new URL(made.body['@id']).pathname
    const created = await Promise.all(Array.from({ length: 30 }, async () => await http('POST', folder, talkBody({ title: 'Same title' }))))
    t.same([...new Set(created.map(c => c.status))], [201], 'all 201')
    const ids = created.map(c => c.body.id)
    t.equal(new Set(ids).size, 30, `ids unique: ${ids.filter((id, i) => ids.indexOf(id) !== i).join(' ') || 'no duplicate'}`)
    t.equal((await http('GET', `${folder}?b_size=100`)).body.items_total, 30, 'all 30 in the folder')
    const positions: number[] = []
    for (let position = 0; position < 60 && positions.length < 30; position++) {
      const found = (await http('GET', `/@search?path.query=${folder}&path.depth=1&getObjPositionInParent=${position}`)).body
      for (let n = 0; n < found.items_total; n++) positions.push(position)
    }
    t.equal(positions.length, 30, 'every talk found by its position')
    t.equal(new Set(positions).size, positions.length, `positions unique: ${positions.join(' ')}`)
  })

  t.test('POSTs anybody can send, refused, spend none of a folder\'s positions', async t => {
    const made = await http('POST', '/talks', { '@type': 'folder', title: 'Anonymous attempts' })
    t.equal(made.status, 201)
    const folder = new URL(made.body['@id']).pathname
    const first = await http('POST', folder, talkBody({ title: 'Before' }))
    const refused = await Promise.all(Array.from({ length: 20 }, async () => await http('POST', folder, talkBody({ title: 'Anonymous' }), { authorization: '' })))
    t.same([...new Set(refused.map(r => r.status))], [401], 'every anonymous POST refused')
    const second = await http('POST', folder, talkBody({ title: 'After' }))
    for (const [position, created] of [first, second].entries()) {
      const found = (await http('GET', `/@search?path.query=${folder}&path.depth=1&getObjPositionInParent=${position}`)).body
      t.same(found.items.map((item: { '@id': string }) => item['@id']), [created.body['@id']], `position ${position}: ${String(created.body.title)}`)
    }
  })

  t.test('workflow transitions race PATCHes of other fields', async t => {
    const fields = TALK_FIELDS.slice(0, 4)
    const CYCLE: Record<string, [string, string]> = { private: ['submit', 'pending'], pending: ['publish', 'published'], published: ['retract', 'private'] }
    for (let round = 1; round <= ROUNDS; round++) {
      const path = await newTalk(`Racing the workflow ${round}`)
      let state = 'private'
      let lastAcknowledged = 'private'
      const transitions = async (): Promise<number> => {
        const [transition, to] = CYCLE[state]
        const res = await http('POST', `${path}/@workflow/${transition}`, {})
        if (res.status === 200) { state = to; lastAcknowledged = to } else state = (await http('GET', path)).body.review_state
        return res.status
      }
      const results = await race([transitions, ...fields.map(field => patch(path, field, round))], 20)
      t.same(results.map(r => r.statuses), [{ 200: 20 }, ...fields.map(() => ({ 204: 20 }))], `round ${round}: every transition and PATCH acknowledged`)
      const body = (await http('GET', path)).body
      t.equal(body.review_state, lastAcknowledged, `round ${round}: the state of the last acknowledged transition`)
      const lost = lostFields(fields, body, results.slice(1), round)
      t.same(lost, [], `round ${round}: every PATCHed field keeps its last acknowledged value (${lost.length} of ${fields.length} lost)`)
    }
  })

  t.test('control panel: six settings PATCHed concurrently', async t => {
    const settings: Field[] = ['slow_query_threshold', 'highlight_fragsize', 'max_results', 'index_timeout', 'search_timeout', 'highlight_formatter_pre']
      .map(name => plain(name, i => name === 'highlight_formatter_pre' ? `<b${i}>` : 1 + i))
    for (let round = 1; round <= ROUNDS; round++) {
      const results = await race(settings.map(setting => async i => (await http('PATCH', PANEL, { [setting.name]: setting.write(round * 1000 + i) })).status))
      t.same(results.map(r => r.statuses), settings.map(() => ({ 204: WRITES })), `round ${round}: every PATCH acknowledged`)
      const lost = lostFields(settings, (await http('GET', PANEL)).body.data, results, round)
      t.same(lost, [], `round ${round}: every setting keeps its last acknowledged value (${lost.length} of ${settings.length} lost)`)
    }
  })

  t.test('image replacement races a title PATCH', async t => {
    // Each upload is a different file, so that the bytes served tell which upload they are.
    const image: Field = {
      name: 'image',
      write: i => upload(png(1, 1, { comment: `photo ${i}` }), `photo-${i}.png`),
      shown: body => body.image?.filename,
      written: i => `photo-${i}.png`
    }
    const fields = [image, TALK_FIELDS[0]]
    for (let round = 1; round <= ROUNDS; round++) {
      const path = await newTalk(`Image race ${round}`)
      const results = await race(fields.map(field => patch(path, field, round)), 20)
      t.same(results.map(r => r.statuses), fields.map(() => ({ 204: 20 })), `round ${round}: every PATCH acknowledged`)
      const body = (await http('GET', path)).body
      const lost = lostFields(fields, body, results, round)
      t.same(lost, [], `round ${round}: the image and the title of the last acknowledged PATCHes (${lost.length} of 2 lost)`)
      const download = await fetch(`${base}${path}/@@download/image`, { headers: { authorization: `Bearer ${admin}` } })
      const served = Buffer.from(await download.arrayBuffer())
      const last = round * 1000 + results[0].last!
      t.equal(download.status, 200, `round ${round}: the image is served`)
      t.ok(served.equals(png(1, 1, { comment: `photo ${last}` })), `round ${round}: its bytes are those of the last acknowledged upload (photo-${last}.png)`)
    }
  })
})
