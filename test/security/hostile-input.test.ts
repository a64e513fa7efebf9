import type { LightMyRequestResponse } from 'fastify'
import t from 'tap'
import { build, talkBody } from '../helper.js'
import { takesBytes } from './parameter-space.js'

/**
 * Hostile input on every route the OpenAPI document lists, as an outside
 * probe sends it: keys that reach a prototype (plain, dotted, with Zope's
 * `:list`), text PostgreSQL cannot store (NUL, lone surrogates), records
 * where values belong, wrong types and absurd nesting. Every answer is a 4xx
 * in the contract's shape, nothing is written, and afterwards a fresh
 * anonymous client still sees nothing private (which is how pollution shows).
 */
const { app, call, inject, tokenFor } = await build(t)
const manager = await tokenFor('admin')
const member = await tokenFor('mallory', ['Member'])

const created = await call('POST', '/talks', talkBody({ title: 'Private plans', details: '<p>private-marker</p>' }), manager)
const privatePath = new URL(created.json()['@id']).pathname
const published = await call('POST', '/talks', talkBody({ title: 'Public talk' }), manager)
const publicPath = new URL(published.json()['@id']).pathname
await call('POST', `${publicPath}/@workflow/publish`, {}, manager)

/** The routes to probe, from the OpenAPI document, with a real value for each path parameter. */
const PARAMETERS: Record<string, string> = {
  '{*}': privatePath.slice(1), '{field}': 'image', '{name}': 'solr-controlpanel', '{id}': 'mallory', '{transition}': 'no-such-transition', '{op}': 'status'
}
const paths = Object.entries((await app.openapi() as { paths: Record<string, Record<string, unknown>> }).paths)
const routes = paths.flatMap(([path, operations]) => Object.keys(operations).map(method => ({
  method: method.toUpperCase() as 'GET' | 'HEAD' | 'OPTIONS' | 'POST' | 'PATCH' | 'DELETE',
  url: path.replace(/\{[^}]+\}/g, p => PARAMETERS[p] ?? p),
  takesBytes: takesBytes(app, method.toUpperCase(), path)
})))
// Services are called on content too (`<path>/@workflow`): probe them on a talk as well.
const routesOnContent = routes.filter(r => r.url.startsWith('/@')).map(r => ({ ...r, url: `${privatePath}${r.url}` }))
// Probes must not end the session they run with, nor delete what they probe.
const probed = [...routes, ...routesOnContent].filter(r => !/@logout|@login-renew/.test(r.url) && r.method !== 'DELETE')

const HOSTILE_QUERIES = [
  '__proto__=1', 'constructor=1', 'prototype=1', '__proto__.Anonymous:list=Manager', '__proto__:list=Manager',
  'constructor.prototype.Anonymous:list=Manager', 'x.__proto__=1', 'x.constructor=1', 'path.__proto__.depth=1',
  'sort_on:constructor=1', 'b_size:__proto__=1', 'a:toString=1', 'b_size.x=1', 'b_start.x=1', 'sort_on.x=1', 'sort_order.x=1',
  'metadata_fields.x=1', 'facet.field.x=1', 'use_solr.x=1', 'show_inactive.x=1', 'sort_limit.x=1', 'title.x=1', 'token.x=1',
  'q=%00', 'SearchableText=a%00b', 'x%00=1', 'query=%00', 'b_size=%00'
]

/** Writes whose request has no body (plone.restapi's lock.req): locking and refreshing a lock, which changes no content. */
const BODILESS_WRITES = /\/@lock$/

const nested = (depth: number): unknown => { let value: unknown = 'deep'; for (let i = 0; i < depth; i++) value = [value]; return value }
/** Raw JSON texts (so that `__proto__` is a key of the document, not an assignment in this file). */
const HOSTILE_BODIES = [
  '{"__proto__": {"Anonymous": ["Manager"]}}',
  '{"constructor": {"prototype": {"Anonymous": ["Manager"]}}}',
  '{"prototype": 1}',
  '{"title": "x", "subjects": [{"__proto__": 1}]}',
  '{"boost_rules": {"__proto__": 2}}',
  '{"items": [{"token": "a", "__proto__": {"x": 1}}]}',
  '{"title": "nul \\u0000 inside"}',
  '{"title": "lone \\ud800 high"}',
  '{"description": "lone \\udfff low"}',
  '{"login": "a\\u0000", "password": "b\\u0000"}',
  '{"a\\u0000b": 1}',
  '{"\\ud800": 1}',
  JSON.stringify({ title: nested(40) }),
  '['.repeat(100_000) + ']'.repeat(100_000)
]

const isContractError = (res: LightMyRequestResponse): boolean => {
  try {
    const body = res.json()
    return typeof body.type === 'string' && typeof body.message === 'string'
  } catch {
    return false
  }
}

/** Everything the service stores, as one fingerprint. */
async function fingerprint (): Promise<string> {
  const tables = ['content', 'catalog', 'users', 'settings', 'workflow_history', 'blobs', 'index_outbox', 'revoked_sessions', 'retired_user_ids', 'files', 'uploads']
  const parts = []
  for (const table of tables) {
    const { rows } = await app.db.query<{ h: string | null }>(`SELECT md5(string_agg(t::text, '|' ORDER BY t::text)) AS h FROM ${table} t`)
    parts.push(`${table}:${rows[0].h ?? ''}`)
  }
  return parts.join(' ')
}

const prototypeKeys = (): string[] => Object.getOwnPropertyNames(Object.prototype).sort()
const cleanPrototype = prototypeKeys()
const before = await fingerprint()

t.test('hostile query strings on every route: a 4xx in the contract\'s shape', async t => {
  const wrong: string[] = []
  for (const route of probed) {
    for (const query of HOSTILE_QUERIES) {
      for (const token of [undefined, member, manager]) {
        // Writes without a body: whatever the query, they must not succeed (and so write nothing).
        const res = await call(route.method, `${route.url}?${query}`, undefined, token)
        const prototypeKey = /(^|[.:])(__proto__|constructor|prototype)([.:=]|$)/.test(query.split('=')[0])
        // A prototype key is refused by every route; other oddities by the routes that read them (a GET that ignores its query answers as usual).
        const acceptable = res.statusCode >= 400 && res.statusCode < 500
          ? isContractError(res)
          : !prototypeKey && ((res.statusCode === 200 && (route.method === 'GET' || BODILESS_WRITES.test(route.url))) ||
              // OPTIONS (TUS's discovery) reads no query: it answers its headers.
              (res.statusCode === 204 && route.method === 'OPTIONS'))
        if (!acceptable) wrong.push(`${route.method} ${route.url}?${query} → ${res.statusCode} ${res.body.slice(0, 120)}`)
        // A lock taken by a probe would refuse the writes the later tests probe: released at once.
        if (res.statusCode === 200 && BODILESS_WRITES.test(route.url)) await call('DELETE', route.url, { force: true }, manager)
      }
    }
  }
  t.same(wrong, [], `${probed.length * HOSTILE_QUERIES.length * 3} probes`)
})

t.test('prototype keys in a query string are refused before anything reads them', async t => {
  for (const query of HOSTILE_QUERIES.filter(q => /(^|[.:])(__proto__|constructor|prototype)([.:=]|$)/.test(q.split('=')[0]))) {
    for (const url of ['/@search', `${privatePath}/@search`, '/talks', '/@vocabularies/rooms']) {
      const res = await call('GET', `${url}?${query}`)
      t.equal(res.statusCode, 400, `${url}?${query}`)
      t.ok(isContractError(res))
    }
  }
})

t.test('hostile JSON bodies on every route that takes a body: 400, naming the field', async t => {
  const wrong: string[] = []
  for (const route of probed.filter(r => r.method !== 'GET')) {
    for (const body of HOSTILE_BODIES) {
      for (const token of [undefined, manager]) {
        const res = await inject({
          method: route.method,
          url: route.url,
          headers: { accept: 'application/json', 'content-type': 'application/json', ...(token !== undefined ? { authorization: `Bearer ${token}` } : {}) },
          payload: body
        })
        // A body over its route's limit (plugins/app/bodies.ts: 64 KiB unless the route takes objects) is refused before it is read.
        // An upload's PATCH reads no JSON at all: any JSON is 415 before a byte of it is read.
        const refusals = route.takesBytes ? [415] : body.length > 64 * 1024 ? [400, 413] : [400]
        if (!refusals.includes(res.statusCode) || !isContractError(res)) wrong.push(`${route.method} ${route.url} ${body.slice(0, 60)} → ${res.statusCode} ${res.body.slice(0, 120)}`)
      }
    }
  }
  t.same(wrong, [], 'the body is checked before authentication decides anything else')
  const named = await call('POST', '/talks', JSON.parse('{"@type": "talk", "title": "ok", "speaker": "x\\u0000y"}'), manager)
  t.equal(named.statusCode, 400)
  t.match(named.json().errors, [{ field: 'speaker', message: /NUL/ }], 'the error names the field')
})

t.test('every field of the talk with wrong types, NUL and lone surrogates: 400 naming it, on create and update', async t => {
  const fields = ['title', 'description', 'details', 'speaker', 'speaker_biography', 'subjects', 'email', 'type_of_talk', 'audience', 'room', 'start', 'end', 'effective', 'expires', 'image']
  const values: unknown[] = [42, true, { a: 1 }, [1, 2], 'nul\u0000', 'lone\ud800', 'lone\udfff', ['list\u0000'], { data: 'x\u0000', 'content-type': 'text/html' }]
  const wrong: string[] = []
  for (const field of fields) {
    for (const value of values) {
      // Some values are valid for some fields (a list of strings for subjects): only the hostile ones must fail.
      const hostile = JSON.stringify(value).includes('\\u0000') || JSON.stringify(value).includes('\\ud') || typeof value !== 'string'
      if (!hostile) continue
      for (const [method, url] of [['POST', '/talks'], ['PATCH', privatePath]] as const) {
        const body = method === 'POST' ? talkBody({ [field]: value }) : { [field]: value }
        const res = await call(method, url, body, manager)
        const namesField = res.statusCode === 400 && isContractError(res) && (res.json().errors ?? []).some((e: { field?: string }) => e.field === field)
        if (!namesField && !(res.statusCode === 413)) wrong.push(`${method} ${field}=${JSON.stringify(value).slice(0, 40)} → ${res.statusCode} ${res.body.slice(0, 100)}`)
      }
    }
  }
  t.same(wrong, [], `${fields.length} fields × hostile values`)
})

t.test('a path with NUL or malformed percent-encoding names nothing: 404 in the contract\'s shape', async t => {
  for (const [url, status] of [['/talks/x%00', 404], ['/talks/x%00/@workflow', 404], ['/@users/x%00', 404], ['/talks/x%ff', 404], ['/talks/%E0%A4%A', 404], ['/@types/%C0%AF', 404]] as const) {
    const res = await call('GET', url, undefined, manager)
    t.equal(res.statusCode, status, url)
    t.ok(isContractError(res), `${url}: ${res.body}`)
  }
})

t.test('odd but valid text is stored and read back unchanged', async t => {
  const texts = ['right-to-left \u202eevil\u202c override', 'astral 😀 𝔘𝔫𝔦𝔠𝔬𝔡𝔢', 'zero\u200bwidth', 'combining é', 'tab\tand\nnewline']
  for (const text of texts) {
    const res = await call('POST', '/talks', talkBody({ title: text.replace(/[\t\n]/g, ' '), description: text }), manager)
    t.equal(res.statusCode, 201, JSON.stringify(text))
    const read = await call('GET', new URL(res.json()['@id']).pathname, undefined, manager)
    t.equal(read.json().description, text.trim())
    t.equal((await call('DELETE', new URL(res.json()['@id']).pathname, undefined, manager)).statusCode, 204)
  }
  const huge = await call('POST', '/talks', talkBody({ title: 'x'.repeat(2_000_000) }), manager)
  t.ok(huge.statusCode === 400 || huge.statusCode === 413, `a two-megabyte title: ${huge.statusCode}`)
  t.ok(isContractError(huge))
})

t.test('after the run: nothing was written, no prototype was touched, anonymous sees nothing private', async t => {
  t.same(prototypeKeys(), cleanPrototype, 'Object.prototype has no new keys')
  t.equal(({} as Record<string, unknown>).Anonymous, undefined)
  t.equal(await fingerprint(), before, 'the database is as it was before the hostile requests')
  t.equal((await call('GET', privatePath)).statusCode, 401, 'a fresh anonymous client may not read the private talk')
  t.equal((await call('PATCH', privatePath, { title: 'defaced' })).statusCode, 401, 'nor change it')
  const listing = await call('GET', '/talks')
  t.same(listing.json().items.map((i: { '@id': string }) => new URL(i['@id']).pathname), [publicPath], 'the listing shows the published talk only')
  const search = await call('GET', '/@search?SearchableText=private&fullobjects=1')
  t.equal(search.json().items_total, 0)
  t.notMatch(search.body, /private-marker/)
})
