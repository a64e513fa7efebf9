import t, { type Test } from 'tap'
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { LightMyRequestResponse } from 'fastify'
import { contentTypesDir } from '../../core/config/paths.js'
import { build, talkBody } from '../helper.js'
import { png } from '../image-samples.js'

/**
 * The error table of docs/api.md, row by row: one body shape everywhere,
 * `{type, message, errors?, context?}`. The rows about credentials
 * (400 ExpiredSignatureError, 401 for bad tokens, 429) are in auth.test.ts;
 * negotiation (406, `++api++`) in negotiation.test.ts.
 */
const BASE = 'http://localhost:80'
const BODY_LIMIT = 2048
const IMAGE_MAX_BYTES = 300

/** A folder type that only takes folders, to have a type that is not addable somewhere. */
async function restrictedFolderType (): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'content-types-'))
  t.teardown(async () => { await rm(dir, { recursive: true, force: true }) })
  await writeFile(join(dir, 'package.json'), '{"type": "module"}')
  await mkdir(join(dir, 'box'))
  await writeFile(join(dir, 'box', 'index.js'), `export default {
    name: 'box', title: 'Box', folderish: true, allowedTypes: ['folder'], behaviors: [],
    schema: { type: 'object', properties: { title: { type: 'string' } }, required: [] }
  }\n`)
  return dir
}

const service = await build(t, {
  env: { BODY_LIMIT: String(BODY_LIMIT), IMAGE_MAX_BYTES: String(IMAGE_MAX_BYTES) },
  app: { contentTypeDirs: [contentTypesDir, await restrictedFolderType()] }
})
const { app, call, inject, tokenFor } = service
const admin = await tokenFor('admin')
const ann = await tokenFor('ann')

/** The one error shape, with this status and type. */
function isError (t: Test, res: LightMyRequestResponse, status: number, type: string): Record<string, unknown> {
  t.equal(res.statusCode, status, res.body)
  t.match(res.headers['content-type'], /^application\/json/)
  const body = res.json()
  t.equal(body.type, type)
  t.ok(typeof body.message === 'string' && body.message.length > 0, 'a message')
  t.same(Object.keys(body).filter(k => !['type', 'message', 'errors', 'context'].includes(k)), [], 'no other members')
  return body
}

async function createTalk (token: string, overrides: Record<string, unknown> = {}): Promise<string> {
  const res = await call('POST', '/talks', talkBody(overrides), token)
  if (res.statusCode !== 201) throw new Error(`talk not created: ${res.body}`)
  return `/talks/${res.json().id as string}`
}

// ann's talk, published: everyone may view it, only ann (and editors) change it.
const published = await createTalk(ann, { title: 'A published talk' })
await call('POST', `${published}/@workflow/publish`, {}, admin)

t.test('400 BadRequest', async t => {
  t.test('a validation failure lists every field error in `errors` and sums them up in `message`', async t => {
    const res = await call('POST', '/talks', talkBody({ title: undefined, type_of_talk: 'Panel', audience: [], colour: 'red' }), ann)
    const body = isError(t, res, 400, 'BadRequest')
    const errors = body.errors as Array<{ field: string, message: string, error: string }>
    t.same(errors.map(e => e.field).sort(), ['audience', 'colour', 'title', 'type_of_talk'])
    t.ok(errors.every(e => e.error === 'ValidationError' && e.message.length > 0))
    const message = body.message as string
    t.match(message, /^Invalid input\. /)
    for (const e of errors) t.ok(message.includes(`${e.field}: ${e.message}`), `the message names ${e.field}`)
    t.notMatch(message, /\[\{|\{'|u'/, 'plain words, not a Python repr of the list')
  })

  t.test('a body that is not JSON', async t => {
    const res = await inject({ method: 'POST', url: '/talks', headers: { authorization: `Bearer ${ann}`, 'content-type': 'application/json' }, payload: '{"title": ' })
    t.equal(isError(t, res, 400, 'BadRequest').message, 'The request body is not valid JSON.')
  })

  t.test('a query parameter of the wrong type', async t => {
    for (const url of ['/talks?b_size=ten', '/talks?b_size=2.5', '/@search?b_size=ten', '/talks?b_start=x']) {
      isError(t, await call('GET', url), 400, 'BadRequest')
    }
    t.equal((await call('GET', '/talks?b_size=10&b_start=0')).statusCode, 200, 'integers are fine')
  })

  t.test('a body that does not match its Content-Length', async t => {
    const res = await inject({
      method: 'POST',
      url: '/talks',
      payload: JSON.stringify(talkBody()),
      headers: { authorization: `Bearer ${ann}`, 'content-type': 'application/json', 'content-length': '5' }
    })
    isError(t, res, 400, 'BadRequest')
  })
})

t.test('401 Unauthorized: anonymous writes', async t => {
  for (const [method, url, body] of [['POST', '/talks', talkBody()], ['PATCH', published, { title: 'Mine now' }], ['DELETE', published]] as const) {
    const res = await call(method, url, body)
    isError(t, res, 401, 'Unauthorized')
    t.equal(res.headers['www-authenticate'], 'Bearer realm="api"', `${method} ${url} challenges for a token`)
  }
  t.equal((await call('GET', published)).json().title, 'A published talk', 'nothing changed')
})

t.test('403 Forbidden', async t => {
  t.test('an authenticated user lacking the permission', async t => {
    const mia = await tokenFor('mia')
    isError(t, await call('PATCH', published, { title: 'Mine now' }, mia), 403, 'Forbidden')
    isError(t, await call('DELETE', published, undefined, mia), 403, 'Forbidden')
    t.equal((await call('PATCH', published, { title: 'Still mine' }, ann)).statusCode, 204, 'the owner may')
  })

  t.test('an unknown @type on create', async t => {
    const res = await call('POST', '/talks', { '@type': 'spaceship', title: 'Enterprise' }, ann)
    t.equal(isError(t, res, 403, 'Forbidden').message, "Invalid '@type' parameter. No content type with the name 'spaceship' found.")
  })

  t.test('a type that is not addable here', async t => {
    t.equal((await call('POST', '/', { '@type': 'box', id: 'box', title: 'A box for folders' }, admin)).statusCode, 201)
    const res = await call('POST', '/box', talkBody(), admin)
    t.equal(isError(t, res, 403, 'Forbidden').message, 'Disallowed subobject type: talk.')
    t.equal((await call('POST', '/box', { '@type': 'folder', title: 'A folder' }, admin)).statusCode, 201, 'the types it allows are')
  })
})

t.test('404 NotFound: `Resource not found: <url>` with the nearest viewable ancestor as `context`', async t => {
  const missing = await call('GET', '/talks/no-such-talk')
  t.same(isError(t, missing, 404, 'NotFound'), { type: 'NotFound', message: `Resource not found: ${BASE}/talks/no-such-talk`, context: `${BASE}/talks` })
  const deep = await call('GET', '/talks/no/such/talk')
  t.same(deep.json(), { type: 'NotFound', message: `Resource not found: ${BASE}/talks/no/such/talk`, context: `${BASE}/talks` })
  const service = await call('GET', `${published}/@no-such-service`)
  t.equal(isError(t, service, 404, 'NotFound').message, `Resource not found: ${BASE}${published}/@no-such-service`, 'an unknown service is not the object it was called on')
})

t.test('405 MethodNotAllowed: POST to an item that is not a folder', async t => {
  isError(t, await call('POST', published, talkBody(), admin), 405, 'MethodNotAllowed')
})

t.test('409 Conflict', async t => {
  t.test('an explicit id that is taken in the folder', async t => {
    t.equal((await call('POST', '/talks', talkBody({ id: 'keynote' }), ann)).statusCode, 201)
    isError(t, await call('POST', '/talks', talkBody({ id: 'keynote' }), ann), 409, 'Conflict')
  })

  t.test('a stale If-Match', async t => {
    const talk = await createTalk(ann)
    const read = (await call('GET', talk, undefined, ann)).headers.etag as string
    t.equal((await call('PATCH', talk, { title: 'First edit' }, ann, { 'if-match': read })).statusCode, 204, 'a current ETag')
    isError(t, await call('PATCH', talk, { title: 'Lost update' }, ann, { 'if-match': read }), 409, 'Conflict')
    t.equal((await call('GET', talk, undefined, ann)).json().title, 'First edit')
  })
})

/** A real PNG (1×1) padded with a text comment to exactly `size` bytes. */
function pngOf (size: number): Buffer {
  return png(1, 1, { comment: 'x'.repeat(size - png(1, 1, { comment: '' }).length) })
}

t.test('413 PayloadTooLarge', async t => {
  t.test('a body over BODY_LIMIT', async t => {
    const bodyOf = (size: number): string => {
      const body = JSON.stringify(talkBody({ description: '' }))
      return JSON.stringify(talkBody({ description: 'x'.repeat(size - body.length) }))
    }
    t.equal(bodyOf(BODY_LIMIT).length, BODY_LIMIT)
    const send = async (payload: string): Promise<LightMyRequestResponse> => await inject({
      method: 'POST', url: '/talks', payload, headers: { authorization: `Bearer ${ann}`, 'content-type': 'application/json' }
    })
    t.equal((await send(bodyOf(BODY_LIMIT))).statusCode, 201, 'a body of exactly BODY_LIMIT bytes')
    isError(t, await send(bodyOf(BODY_LIMIT + 1)), 413, 'PayloadTooLarge')
  })

  t.test('an image over IMAGE_MAX_BYTES', async t => {
    const withImage = (size: number): Record<string, unknown> => talkBody({
      image: { data: pngOf(size).toString('base64'), encoding: 'base64', filename: 'dot.png', 'content-type': 'image/png' }
    })
    const fits = await call('POST', '/talks', withImage(IMAGE_MAX_BYTES), ann)
    t.equal(fits.statusCode, 201, 'an image of exactly IMAGE_MAX_BYTES')
    t.match(fits.json().image, { size: IMAGE_MAX_BYTES, width: 1, height: 1, 'content-type': 'image/png' })
    isError(t, await call('POST', '/talks', withImage(IMAGE_MAX_BYTES + 1), ann), 413, 'PayloadTooLarge')
  })
})

t.test('415 UnsupportedMediaType: a write whose body is not JSON', async t => {
  const send = async (method: 'POST' | 'PATCH', url: string, contentType: string, payload: string): Promise<LightMyRequestResponse> =>
    await inject({ method, url, payload, headers: { authorization: `Bearer ${ann}`, 'content-type': contentType } })
  isError(t, await send('POST', '/talks', 'text/plain', JSON.stringify(talkBody())), 415, 'UnsupportedMediaType')
  isError(t, await send('PATCH', published, 'text/plain', '{"title": "Plain"}'), 415, 'UnsupportedMediaType')
  isError(t, await send('POST', '/talks', 'application/x-www-form-urlencoded', 'title=Form&type_of_talk=Talk'), 415, 'UnsupportedMediaType')
  t.equal((await send('POST', '/talks', 'application/json; charset=utf-8', JSON.stringify(talkBody()))).statusCode, 201, 'JSON with a charset is JSON')
})

t.test('406 NotAcceptable: a client that accepts only HTML', async t => {
  isError(t, await call('GET', '/talks', undefined, undefined, { accept: 'text/html' }), 406, 'NotAcceptable')
})

t.test('500 InternalServerError: no internals, the request id to quote instead', async t => {
  // Break the real database under the running service: the catalogue table goes away.
  await app.db.query('ALTER TABLE catalog RENAME TO catalog_gone')
  let res: LightMyRequestResponse
  try {
    res = await call('GET', '/talks')
  } finally {
    await app.db.query('ALTER TABLE catalog_gone RENAME TO catalog')
  }
  const body = isError(t, res, 500, 'InternalServerError')
  const requestId = res.headers['x-request-id'] as string
  t.ok(requestId, 'every answer names its request id')
  t.same(body, { type: 'InternalServerError', message: `An internal error occurred. Quote request id ${requestId} when reporting it.` })
  t.notMatch(res.body, /catalog|relation|select|\bat \S+:\d+|\.ts\b|\.js\b/i, 'neither SQL nor a stack trace')
  t.equal((await call('GET', '/talks')).statusCode, 200, 'the service goes on once the table is back')
})
