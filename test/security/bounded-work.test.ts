import t, { type Test } from 'tap'
import { setTimeout as sleep } from 'node:timers/promises'
import { deflateSync } from 'node:zlib'
import { bodyBounds } from '../../core/security/body-bounds.js'
import type { BodyRoute } from '../../plugins/app/bodies.js'
import { build, talkBody } from '../helper.js'
import { gif, jpeg, pngChunk, pngHeader, pngOf, pngScanlines, PNG_SIGNATURE, webp, webpChunks, webpOf } from '../image-samples.js'
import { HELD_LOOP_LIMIT_MS, RETAINED_HEAP_LIMIT_BYTES, costOf } from './work-watch.js'

/**
 * Bounded work per request (docs/api.md), the class of issue 22's findings
 * 2 and 7: no request body, of any size the service accepts, makes the
 * process hold its event loop for long or keep what it was sent. Every route
 * that may be sent a body is taken from Fastify's route table as registered
 * (`bodyRoutes`, with each route's bounds), and sent the extremes of its
 * bounds: a byte over its limit, a body at its limit, JSON nested as deep as
 * the bytes allow, as many values as it may hold and one more, as many
 * fields, a string filling the body in every field it names (every field of
 * a talk for the routes that take objects), a number as long as JSON allows.
 * Then the extremes of what the content routes read: rich text nested,
 * repeated and as long as accepted and far beyond, 70 different rich texts in
 * a row, the largest import, images whose structure is a million tiny parts,
 * and the reads that fill what a process keeps.
 * Each burst is answered with a 2xx, or a 4xx in the contract's shape, never
 * a 5xx; the event loop is never held HELD_LOOP_LIMIT_MS, and less than
 * RETAINED_HEAP_LIMIT_BYTES stays on the heap after it (test/security/work-watch.ts).
 * Query parameters' extremes (numbers, every route and parameter) are another suite's.
 */
// Kept objects at the budget they had when these limits were set (the default is 128 MiB): core/heap-size.ts counts a
// text of one-byte characters twice, so what they hold here is half their budget, and 64 MiB would be
// RETAINED_HEAP_LIMIT_BYTES itself.
const { app, call, inject, tokenFor } = await build(t, { env: { KEPT_OBJECTS_BYTES: String(32 * 2 ** 20) } })
const admin = await tokenFor('admin')
const member = await tokenFor('mallory', ['Member'])
const talkPath = new URL((await call('POST', '/talks', talkBody({ title: 'Mallory\'s talk' }), member)).json()['@id']).pathname
/**
 * What the probes may destroy, should a body reach a handler it should not (a regression, or the
 * code before the bounds): a talk, a user and a session of their own, never the ones the later
 * probes write with.
 */
const spare = {
  talk: new URL((await call('POST', '/talks', talkBody({ title: 'Spare talk' }), member)).json()['@id']).pathname,
  user: 'spare',
  session: await tokenFor('spare-session', ['Member'])
}
await tokenFor(spare.user, ['Member'])

interface Answer { request: string, status: number, contractError: boolean, body: string }

/**
 * A request to send, its body written as it is sent into one buffer that every request reuses
 * (they go one after the other): the client allocates nothing for it, so that neither its work
 * nor the collection of hundreds of megabytes of bodies is measured as the service's.
 */
interface Prepared { method: 'GET' | 'POST' | 'PATCH' | 'DELETE' | 'PUT', url: string, payload?: () => Buffer, token?: string, label: string }

/** A part of a body: text as it is, bytes as they are, or `[text, bytes]`: text repeated to that many bytes. */
type Part = string | Buffer | [string, number]
const scratch = Buffer.alloc(17 * 2 ** 20)
function compose (...parts: Part[]): Buffer {
  let at = 0
  for (const part of parts) {
    if (typeof part === 'string') at += scratch.write(part, at)
    else if (Buffer.isBuffer(part)) at += part.copy(scratch, at)
    else if (part[1] > 0) {
      scratch.fill(part[0], at, at + part[1])
      at += part[1]
    }
  }
  return scratch.subarray(0, at)
}

const prepare = (method: Prepared['method'], url: string, payload: string | object | (() => Buffer), token: string | undefined, label: string): Prepared =>
  ({ method, url, token, label, payload: typeof payload === 'function' ? payload as () => Buffer : () => compose(typeof payload === 'string' ? payload : JSON.stringify(payload)) })

/** The JSON of `value`, where the string FILL stands for a string of `length` x's. */
const FILL = '\u0001fill\u0001'
const filled = (value: unknown, length: number): (() => Buffer) => () => {
  const [before, after] = JSON.stringify(value).split(JSON.stringify(FILL))
  return compose(`${before}"`, ['x', length], `"${after}`)
}

async function send (request: Prepared): Promise<Answer> {
  const payload = request.payload?.()
  const res = await inject({
    method: request.method,
    url: request.url,
    ...(payload !== undefined ? { payload } : {}),
    headers: {
      accept: 'application/json',
      ...(payload !== undefined ? { 'content-type': 'application/json' } : {}),
      ...(request.token !== undefined ? { authorization: `Bearer ${request.token}` } : {})
    }
  })
  let contractError = false
  try {
    const body = res.json()
    contractError = typeof body.type === 'string' && typeof body.message === 'string'
  } catch {}
  // Only what the assertions need is kept, copied (a slice would keep the whole answer): a burst's answers must not count as what the process kept.
  return { request: `${request.method} ${request.url} ${request.label}`, status: res.statusCode, contractError, body: Buffer.from(res.body.slice(0, 200)).toString() }
}

/**
 * Sends the requests one after the other and measures what they cost the
 * process. The loop's delay is sampled every 10 ms: the burst starts and ends
 * a few samples apart from anything else, so that a hold at either end is seen.
 */
async function burst (t: Test, what: string, requests: Prepared[], accept: (answer: Answer) => boolean = () => true): Promise<Answer[]> {
  const answers: Answer[] = []
  const cost = await costOf(async () => {
    await sleep(30)
    // One request after the other, the event loop turning between them as it does between requests that
    // arrive on sockets: an answer found without I/O (a page whose rows are all kept) resolves inject's promise
    // in microtasks, and a loop of them awaited back to back would hold the loop for all of them together.
    for (const request of requests) {
      await new Promise(resolve => setImmediate(resolve))
      answers.push(await send(request))
    }
    await sleep(30)
  })
  const wrong = answers.filter(a => !(a.status < 300 || (a.status < 500 && a.contractError)) || !accept(a))
  t.same(wrong.map(a => `${a.request} → ${a.status} ${a.body}`), [], `${what}: ${requests.length} requests answered 2xx or 4xx in the contract's shape`)
  t.ok(cost.heldLoopMs < HELD_LOOP_LIMIT_MS, `${what}: the event loop was held ${cost.heldLoopMs.toFixed(0)} ms at most`)
  t.ok(cost.retainedHeapBytes < RETAINED_HEAP_LIMIT_BYTES, `${what}: ${(cost.retainedHeapBytes / 2 ** 20).toFixed(1)} MiB stayed on the heap`)
  return answers
}

const refusedAs = (...statuses: number[]) => (answer: Answer): boolean => statuses.includes(answer.status)

/** A concrete address for a route of the table: content writes on the member's talk or in /talks, services where they act. */
function addressOf (route: BodyRoute): string {
  if (route.url === '/*') return route.method === 'POST' ? '/talks' : route.method === 'DELETE' ? spare.talk : talkPath
  const parameters: Record<string, string> = {
    id: route.method === 'DELETE' ? spare.user : 'mallory', transition: 'submit', op: 'status', field: 'image', name: route.url.startsWith('/@vocabularies') ? 'rooms' : 'solr-controlpanel'
  }
  const url = route.url.replace(/:(\w+)/g, (_, name: string) => parameters[name] ?? name)
  if (url.startsWith('/@import')) return `/talks${url}`
  if (/^\/@(workflow|lock)/.test(url)) return `${talkPath}${url}`
  return url
}

/** A route whose body is bytes streamed into an upload (their bounds: tus.test.ts). */
const takesBytes = (route: BodyRoute): boolean => route.kind === 'bytes'
/** Routes whose handler must not run during the probes: it would end the session, or delete what the probes use; or it reads no JSON. */
const handlerSpared = (route: BodyRoute): boolean => route.method === 'DELETE' || /@logout|@login-renew/.test(route.url) || takesBytes(route)

/** The fields a body of this route may carry: its schema's, or a talk's (and an import's items) for the routes that take objects. */
function fieldsOf (route: BodyRoute): string[] {
  if (route.kind !== 'small') return [...app.contentTypes.get('talk')!.fields.keys(), 'id', '@type']
  return route.fields.length > 0 ? route.fields : ['title', 'value', 'query']
}

/** A JSON text of exactly `bytes` bytes: `{"x": "xxx…"}`. */
const padded = (bytes: number): (() => Buffer) => filled({ x: FILL }, bytes - 8)

/** JSON text: `open`, `middle` and `close`, each of the first and last repeated `times`. */
const nested = (open: string, middle: string, close: string, times: number): (() => Buffer) => () =>
  compose([open, times * open.length], middle, [close, times * close.length])

/** The extremes of a route's bounds, every one refused before a handler could run. */
function refusedBeforeParsing (route: BodyRoute, url: string, token: string): Prepared[] {
  const depth = Math.floor((route.bytes - 16) / 2)
  const method = route.method as Prepared['method']
  return [
    prepare(method, url, padded(route.bytes + 1), token, 'a byte over the limit'),
    prepare(method, url, nested('[', '', ']', depth), token, `arrays nested ${depth} deep`),
    prepare(method, url, nested('{"a":', '1', '}', Math.floor(depth / 3)), token, 'objects nested'),
    prepare(method, url, () => compose('{"subjects": [', ['0,', 2 * route.values], '0]}'), token, `${route.values + 2} values`),
    prepare(method, url, () => compose('{"value": ', ['9', Math.min(route.bytes - 16, 1_000_000)], '}'), token, 'a number as long as the body allows')
  ]
}

/** Extremes within the bounds: the handler reads them. */
function withinBounds (route: BodyRoute, url: string, token: string): Prepared[] {
  const method = route.method as Prepared['method']
  const room = route.bytes - 256
  const base = route.kind === 'small' ? {} : route.kind === 'import' ? {} : talkBody()
  const inBody = (fields: Record<string, unknown>): Record<string, unknown> => route.kind === 'import' ? { items: [{ ...talkBody(), ...fields }] } : { ...base, ...fields }
  const fields = Math.min(route.values / 2 - 1, Math.floor(room / 14))
  const tags = Math.min(route.values - 20, Math.floor(room / 4))
  const requests = [
    prepare(method, url, padded(route.bytes), token, 'a body at the limit'),
    prepare(method, url, () => compose(`{${Array.from({ length: fields }, (_, i) => `"k${i}":0`).join(',')}}`), token, `${fields} fields`),
    prepare(method, url, () => compose(JSON.stringify(inBody({ subjects: Array(tags).fill('t') }))), token, `${tags} tags`)
  ]
  for (const field of fieldsOf(route)) {
    requests.push(prepare(method, url, filled(inBody({ [field]: FILL }), room), token, `a string filling the body in ${field}`))
    requests.push(prepare(method, url, filled(inBody({ [field]: { data: FILL, 'content-type': 'text/html' } }), room), token, `an object filling the body in ${field}`))
  }
  return requests
}

t.test('every route that takes a body, at and beyond its bounds', async t => {
  const routes = app.bodyRoutes.filter(r => !/@lock/.test(r.url))
  t.ok(routes.some(r => r.kind === 'content') && routes.some(r => r.kind === 'import') && routes.some(r => r.kind === 'small') && routes.some(takesBytes), 'the table has every kind of body')
  for (const route of [...routes, ...app.bodyRoutes.filter(r => /@lock/.test(r.url))]) {
    const url = addressOf(route)
    const token = /@logout|@login-renew/.test(route.url) ? spare.session : route.kind === 'small' && !/@workflow/.test(route.url) ? admin : member
    await t.test(`${route.method} ${route.url} (${route.kind}: ${route.bytes} bytes, ${route.values} values)`, async t => {
      // An upload's PATCH takes bytes, not JSON: JSON of any size is 415 before a byte of it is read (sent JSON as large as a small body's).
      const probed = takesBytes(route) ? { ...route, ...bodyBounds('small', app.config) } : route
      await burst(t, 'refused before it is parsed', refusedBeforeParsing(probed, url, token), takesBytes(route) ? refusedAs(415) : refusedAs(400, 413))
      if (!handlerSpared(route)) await burst(t, 'read by the handler', withinBounds(route, url, token))
    })
  }
  // A lock taken by a probe would refuse later writes.
  await call('DELETE', `${talkPath}/@lock`, { force: true }, admin)
})

/** Markup of `chars` characters: `unit` repeated. */
const markup = (unit: string, chars: number): string => unit.repeat(Math.floor(chars / unit.length))

t.test('rich text: nested, repeated and long, as accepted and far beyond', async t => {
  const post = (details: string, label: string): Prepared => prepare('POST', '/talks', talkBody({ details }), member, label)
  await burst(t, 'the issue\'s examples', [
    post('<div>'.repeat(75_000), '75 000 nested <div>s (820 kB)'),
    post('<div>'.repeat(100_000), '100 000 levels (1.1 MB)'),
    post(markup('<em></em>', 11 * 2 ** 20), '11 MiB of empty <em> tags')
  ], refusedAs(400, 413))
  // 63 levels, and the 64th inside them: the deepest accepted (MAX_MARKUP_DEPTH). Every unit holds at most
  // one character of text in 16 of markup: the most markup a text within its limit may come with.
  const deepest = '<div>'.repeat(63)
  await burst(t, 'the largest and deepest accepted', [
    post(deepest + markup('<em></em>', 32_000 - deepest.length), 'the deepest nesting, then empty tags to the markup limit'),
    post(markup('<p><strong>x</strong></p>', 32_000), 'the markup limit in short paragraphs'),
    post(deepest + markup('</p>', 32_000 - deepest.length), 'stray end tags under the deepest nesting'),
    post(markup('<a href="https://example.org/a" title="t">x</a>', 32_000), 'links with attributes'),
    prepare('POST', '/talks', talkBody({ details: markup('<p class="lead"><em>x</em></p>', 32_000), speaker_biography: markup('<li class="i">x</li>', 16_000) }), member, 'both rich texts at their limits')
  ], answer => answer.status === 201)
})

t.test('70 different rich texts in a row: what was written is not kept', async t => {
  const patch = (details: () => string, label: string): Prepared => prepare('PATCH', talkPath, () => compose(JSON.stringify({ details: details() })), member, label)
  await burst(t, 'the largest accepted', Array.from({ length: 70 }, (_, i) =>
    patch(() => `<p>${i}</p>` + markup(`<span class="c${i}">x</span>`, 31_900), `rich text ${i}`)), answer => answer.status === 204)
  await burst(t, 'four megabytes each', Array.from({ length: 70 }, (_, i) =>
    patch(() => `<p>${i}</p>` + markup('<em></em>', 4 * 2 ** 20), `rich text ${i}`)), refusedAs(400, 413))
})

t.test('the largest import, as a Member', async t => {
  const max = app.config.IMPORT_MAX_ITEMS
  // Each item's rich text as large as fits: the import fills BODY_LIMIT.
  const room = Math.floor(app.config.BODY_LIMIT / max) - 400
  const items = Array.from({ length: max }, (_, i) => ({ ...talkBody({ title: `Imported ${i}`, details: `<p>${i}</p>` + markup('<em>x</em>', Math.min(room, 32_000) - 10) }), transitions: ['submit'] }))
  const body = JSON.stringify({ items })
  t.ok(body.length <= app.config.BODY_LIMIT && body.length > app.config.BODY_LIMIT * 0.9, `${body.length} bytes, within ${app.config.BODY_LIMIT}`)
  await burst(t, `${max} markup-heavy talks`, [prepare('POST', '/talks/@import', body, member, `${max} items`)], answer => answer.status === 201)
})

/** An extended WebP (VP8X, ALPH, VP8) followed by as many empty unknown chunks as fit in `size` bytes (built in place: a million arguments would not fit on the stack). */
function webpWithEmptyChunks (size: number): Buffer {
  const image = webpOf(...webpChunks(webp.alpha))
  const chunks = Buffer.alloc(Math.floor((size - image.length) / 8) * 8, Buffer.from('junk\0\0\0\0', 'latin1'))
  const file = Buffer.concat([image, chunks])
  file.writeUInt32LE(file.length - 8, 4)
  return file
}

t.test('images whose structure is a million tiny parts, at the largest size accepted', async t => {
  const size = app.config.IMAGE_MAX_BYTES
  const fill = (part: Buffer, room: number): Buffer => Buffer.concat(Array(Math.floor(room / part.length)).fill(part))
  const header = pngChunk('IHDR', pngHeader(1, 1, 8, 2))
  const pixels = pngChunk('IDAT', deflateSync(pngScanlines(1, 1, 8, 2, false)))
  const end = pngChunk('IEND', Buffer.alloc(0))
  // 50 megapixels of one bit: 6 MB of scanlines, deflated to a few kilobytes, inflated by the check.
  const [width, height] = [5000, 10_000]
  const smallJpeg = jpeg(8, 8)
  const eoi = smallJpeg.length - 2
  const images: Record<string, Buffer> = {
    'a PNG of empty ancillary chunks': Buffer.concat([PNG_SIGNATURE, header, fill(pngChunk('tEXt', Buffer.alloc(0)), size - 100), pixels, end]),
    'a JPEG of empty comment segments': Buffer.concat([smallJpeg.subarray(0, 2), fill(Buffer.from([0xff, 0xfe, 0x00, 0x02]), size - smallJpeg.length), smallJpeg.subarray(2)]),
    'a JPEG scan of stuffed bytes': Buffer.concat([smallJpeg.subarray(0, eoi), Buffer.alloc(size - smallJpeg.length, Buffer.from([0xff, 0x00])), smallJpeg.subarray(eoi)]),
    'JPEGs one after the other': fill(smallJpeg, size),
    'a GIF of frames': gif(1, 1, { frames: Math.floor((size - 100) / 23) }),
    'a WebP of empty chunks': webpWithEmptyChunks(size),
    'a PNG as large in pixels as accepted': pngOf(['IHDR', pngHeader(width, height, 1, 0)], ['IDAT', deflateSync(Buffer.alloc(height * (1 + width / 8)))], ['IEND', Buffer.alloc(0)])
  }
  const requests = Object.entries(images).map(([name, bytes]) => {
    t.ok(bytes.length <= size, `${name}: ${bytes.length} bytes`)
    // Its base64 made before the burst, as bytes: the client builds no string of megabytes while it is measured.
    const [before, after] = JSON.stringify(talkBody({ image: { data: FILL, encoding: 'base64', filename: 'x' } })).split(JSON.stringify(FILL))
    const data = Buffer.from(bytes.toString('base64'))
    return prepare('POST', '/talks', () => compose(`${before}"`, data, `"${after}`), member, name)
  })
  await burst(t, 'hostile structures', requests)
})

t.test('JSON at the bounds of a body that takes objects', async t => {
  const route = app.bodyRoutes.find(r => r.method === 'POST' && r.url === '/*')!
  await burst(t, 'dense and escaped', [
    prepare('POST', '/talks', () => compose('[', ['0,', route.bytes - 4], '0]'), member, 'a list of zeros filling the body'),
    prepare('POST', '/talks', () => compose(`{${Array.from({ length: 100_000 }, (_, i) => `"k${i}":0`).join(',')}}`), member, 'keys, ten times the values allowed'),
    prepare('POST', '/talks', () => compose('{"@type": "talk", "description": "', ['\\n', route.bytes - 40], '"}'), member, 'a string of escapes filling the body'),
    prepare('POST', '/talks', () => compose(`{"subjects": [${Array(route.values - 10).fill('"a"').join(',')}], "description": "`, ['x', route.bytes - 6 * route.values], '"}'), member, 'the most values, and a long string'),
    prepare('POST', '/talks', () => compose([' ', route.bytes - 2], '{}'), member, 'whitespace filling the body')
  ])
})

t.test('what a process keeps of large reads stays within its bytes', async t => {
  // 900 talks with every text at its limit (85 kB of data each), as imports bring them: what 2 000 kept objects,
  // or 10 000 kept rows of results with their descriptions, would hold is far more than RETAINED_HEAP_LIMIT_BYTES.
  const text = (i: number, n: number): string => `${i} ${'word '.repeat(n / 5)}`.slice(0, n)
  for (let batch = 0; batch < 5; batch++) {
    const items = Array.from({ length: 180 }, (_, i) => talkBody({
      title: text(batch * 180 + i, 1000),
      description: text(i, 10_000),
      speaker: text(i, 500),
      subjects: Array.from({ length: 100 }, (_, tag) => text(tag, 250)),
      details: `<p class="${'c'.repeat(30_000)}">${text(i, 1900)}</p>`,
      speaker_biography: `<p class="${'b'.repeat(15_000)}">${text(i, 900)}</p>`
    }))
    t.equal((await call('POST', '/talks/@import', { items }, admin)).statusCode, 201, `import ${batch}`)
  }
  const read = (url: string, label: string): Prepared => ({ method: 'GET', url, token: admin, label })
  // Windows of 50 rows (as the catalogue keeps them), 216 different ones: 10 800 rows, 10 to 35 kB each.
  const pages: Prepared[] = []
  for (const metadata of ['Description', 'Description&metadata_fields=Title', 'Description&metadata_fields=Subject']) {
    for (const order of ['sort_on=sortable_title', 'sort_on=sortable_title&sort_order=descending', 'sort_on=created', 'sort_on=created&sort_order=descending']) {
      for (let start = 0; start < 900; start += 50) pages.push(read(`/@search?portal_type=talk&b_size=50&b_start=${start}&metadata_fields=${metadata}&${order}`, 'a page'))
    }
  }
  await burst(t, 'pages of results', pages, answer => answer.status === 200)
  const paths = (await app.db.query<{ path: string }>("SELECT path FROM content WHERE portal_type = 'talk'")).rows.map(r => r.path)
  await burst(t, 'objects', paths.map(path => read(path, 'an object')), answer => answer.status === 200)
})
