import t from 'tap'
import { setTimeout as sleep } from 'node:timers/promises'
import { build, talkBody } from '../helper.js'

/**
 * The seed's client (the training's talk list) over real HTTP on a port:
 * log in, list /talks, read each talk, submit a lightning talk, rename it,
 * search, and be told to log in again when the token has expired.
 */
t.test('the training client flow over HTTP', async t => {
  const { app, tokenFor, call } = await build(t, { env: { JWT_TTL: '3' } })
  const admin = await tokenFor('admin')
  for (const title of ['Keynote: the state of Plone', 'Solr in depth', 'Volto theming']) {
    const created = await call('POST', '/talks', talkBody({ title, type_of_talk: title.startsWith('Keynote') ? 'Keynote' : 'Talk', start: '2026-10-0' + (title.length % 9 + 1) + 'T10:00:00Z' }), admin)
    t.equal(created.statusCode, 201)
    const published = await call('POST', `/talks/${created.json().id}/@workflow/publish`, {}, admin)
    t.equal(published.statusCode, 200)
  }
  await app.listen({ port: 0, host: '127.0.0.1' })
  const address = app.server.address()
  if (address === null || typeof address === 'string') throw new Error('no port')
  const base = `http://127.0.0.1:${address.port}`
  const json = { accept: 'application/json', 'content-type': 'application/json' }

  const login = await fetch(`${base}/@login`, { method: 'POST', headers: json, body: JSON.stringify({ login: 'admin', password: 'admin-secret' }) })
  t.equal(login.status, 200, 'log in')
  const { token } = await login.json() as { token: string }
  const auth = { ...json, authorization: `Bearer ${token}` }

  const list = await fetch(`${base}/talks`, { headers: { accept: 'application/json' } })
  t.equal(list.status, 200, 'list /talks')
  const folder = await list.json() as { items: Array<{ '@id': string }>, items_total: number }
  t.equal(folder.items_total, 3)
  for (const item of folder.items) {
    const talk = await fetch(item['@id'], { headers: { accept: 'application/json' } })
    t.equal(talk.status, 200, `GET ${item['@id']}`)
    const body = await talk.json() as Record<string, unknown>
    t.equal(body['@id'], item['@id'])
    t.ok(typeof body.type_of_talk === 'string' && Array.isArray(body.creators) && 'speaker' in body && 'details' in body && 'start' in body && Array.isArray(body.subjects),
      'the fields the client reads are there')
  }

  const submitted = await fetch(`${base}/talks`, {
    method: 'POST',
    headers: auth,
    body: JSON.stringify({ '@type': 'talk', type_of_talk: 'Lightning Talk', audience: ['Beginner', 'Advanced', 'Professionals'], title: 'Five minutes of Fastify', description: 'A short one' })
  })
  t.equal(submitted.status, 201, 'create a lightning talk')
  const location = submitted.headers.get('location')
  t.equal(location, `${base}/talks/five-minutes-of-fastify`)

  const renamed = await fetch(location!, { method: 'PATCH', headers: auth, body: JSON.stringify({ '@id': location, title: 'Five minutes of Fastify, revised' }) })
  t.equal(renamed.status, 204, 'PATCH with @id in the body')
  t.equal(await renamed.text(), '')

  const search = await fetch(`${base}/@search?portal_type=talk&sort_on=Date`, { headers: auth })
  t.equal(search.status, 200)
  const found = await search.json() as { items: Array<{ title: string }>, items_total: number }
  t.equal(found.items_total, 4)
  t.ok(found.items.some(i => i.title === 'Five minutes of Fastify, revised'), 'the renamed talk is found')

  await sleep(3500)
  const expired = await fetch(`${base}/talks`, { method: 'POST', headers: auth, body: JSON.stringify(talkBody()) })
  t.equal(expired.status, 400, 'an expired token')
  t.same(await expired.json(), { type: 'ExpiredSignatureError', message: 'Signature has expired. Log in again to get a new token.' })
})
