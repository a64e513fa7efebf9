import type { LightMyRequestResponse } from 'fastify'
import t from 'tap'
import { build, talkBody } from '../helper.js'

/**
 * The talk's rules (docs/api.md), each limit from both sides: one app for the
 * file, every talk created by a Member in /talks.
 */

interface FieldError { field?: string, message: string, error: string }
type Assert = Pick<typeof t, 'equal' | 'same'>

const repeat = (n: number): string => 'x'.repeat(n)

t.test('talk rules', async t => {
  const { call, tokenFor } = await build(t)
  const jane = await tokenFor('jane')
  const create = async (overrides: Record<string, unknown>): Promise<LightMyRequestResponse> =>
    await call('POST', '/talks', talkBody(overrides), jane)
  const read = async (url: string): Promise<Record<string, any>> => (await call('GET', new URL(url).pathname, undefined, jane)).json()

  /** Asserts a 400 validation failure whose errors name exactly `fields`. */
  function rejected (t: Assert, res: LightMyRequestResponse, fields: string[]): void {
    t.equal(res.statusCode, 400, res.body)
    const body = res.json() as { type: string, message: string, errors: FieldError[] }
    t.equal(body.type, 'BadRequest')
    t.same(body.errors.map(e => e.field).sort(), [...fields].sort(), body.message)
    for (const e of body.errors) t.equal(e.error, 'ValidationError')
  }
  function accepted (t: Assert, res: LightMyRequestResponse): void {
    t.equal(res.statusCode, 201, res.body)
  }

  t.test('title: required, 1 to 1024 characters (an emoji is one)', async t => {
    rejected(t, await create({ title: undefined }), ['title'])
    rejected(t, await create({ title: '' }), ['title'])
    rejected(t, await create({ title: '   ' }), ['title'])
    accepted(t, await create({ title: 'x' }))
    accepted(t, await create({ title: repeat(1024) }))
    rejected(t, await create({ title: repeat(1025) }), ['title'])
    accepted(t, await create({ title: '🎤'.repeat(1024) }))
  })

  t.test('description: at most 10000 characters', async t => {
    accepted(t, await create({ description: repeat(10000) }))
    rejected(t, await create({ description: repeat(10001) }), ['description'])
  })

  t.test('type_of_talk: required, one of the four kinds', async t => {
    rejected(t, await create({ type_of_talk: undefined }), ['type_of_talk'])
    for (const kind of ['Talk', 'Training', 'Keynote', 'Lightning Talk']) {
      const res = await create({ type_of_talk: kind })
      accepted(t, res)
      t.equal(res.json().type_of_talk, kind)
    }
    rejected(t, await create({ type_of_talk: 'Workshop' }), ['type_of_talk'])
    rejected(t, await create({ type_of_talk: 'talk' }), ['type_of_talk'])
  })

  t.test('details: at most 2000 characters of text, markup not counted, an emoji is one', async t => {
    const plain = await create({ details: repeat(2000) })
    accepted(t, plain)
    t.same(plain.json().details, { data: repeat(2000), 'content-type': 'text/html', encoding: 'utf-8' })
    accepted(t, await create({ details: `<p><strong>${repeat(1000)}</strong> <em>${repeat(999)}</em></p>` }))
    accepted(t, await create({ details: { data: `<h2>${repeat(2000)}</h2>`, 'content-type': 'text/html', encoding: 'utf-8' } }))
    const tooLong = await create({ details: `<p>${repeat(2001)}</p>` })
    rejected(t, tooLong, ['details'])
    rejected(t, await create({ details: { data: repeat(2001), 'content-type': 'text/html', encoding: 'utf-8' } }), ['details'])
    rejected(t, await create({ details: { data: '<p>x</p>', 'content-type': 'text/x-html-safe' } }), ['details'])
    rejected(t, await create({ details: 42 }), ['details'])
    accepted(t, await create({ details: `<p>${'🎤'.repeat(2000)}</p>` }))
    rejected(t, await create({ details: `<p>${'🎤'.repeat(2001)}</p>` }), ['details'])
  })

  t.test('details: sanitised HTML out, plain text escaped', async t => {
    const res = await create({ details: '<p onclick="steal()">Hello <a href="javascript:alert(1)">there</a></p><script>alert(1)</script>' })
    accepted(t, res)
    const stored = (await read(res.headers.location as string)).details
    t.equal(stored['content-type'], 'text/html')
    t.equal(stored.encoding, 'utf-8')
    t.match(stored.data, /Hello/)
    t.notMatch(stored.data, /script|onclick|javascript/)
    const text = await create({ details: { data: 'a <b> & c\n\nsecond', 'content-type': 'text/plain' } })
    t.equal(text.json().details.data, '<p>a &lt;b&gt; &amp; c</p><p>second</p>')
    t.equal(text.json().details['content-type'], 'text/html', 'the data is HTML, so sending it back keeps it')
  })

  t.test('speaker_biography: at most 1000 characters of text', async t => {
    accepted(t, await create({ speaker_biography: `<p>${repeat(1000)}</p>` }))
    rejected(t, await create({ speaker_biography: `<p>${repeat(1001)}</p>` }), ['speaker_biography'])
  })

  t.test('audience: required non-empty set of the three values', async t => {
    rejected(t, await create({ audience: undefined }), ['audience'])
    rejected(t, await create({ audience: [] }), ['audience'])
    rejected(t, await create({ audience: ['Beginner', 'Experts'] }), ['audience'])
    rejected(t, await create({ audience: 'Beginner' }), ['audience'])
    const all = await create({ audience: ['Beginner', 'Advanced', 'Professionals'] })
    accepted(t, all)
    t.same(all.json().audience, ['Beginner', 'Advanced', 'Professionals'])
    const duplicates = await create({ audience: ['Advanced', 'Advanced', 'Beginner', 'Advanced'] })
    accepted(t, duplicates)
    t.same(duplicates.json().audience, ['Advanced', 'Beginner'])
  })

  t.test('email: a valid address', async t => {
    accepted(t, await create({ email: 'jane@example.org' }))
    rejected(t, await create({ email: 'not-an-email' }), ['email'])
    rejected(t, await create({ email: 'jane@' }), ['email'])
  })

  t.test('speaker: a single line; null in responses when unset', async t => {
    const unset = await create({})
    t.equal(unset.json().speaker, null)
    const named = await create({ speaker: 'Jane Doe, John Roe' })
    t.equal(named.json().speaker, 'Jane Doe, John Roe')
    rejected(t, await create({ speaker: 'Jane\nDoe' }), ['speaker'])
    accepted(t, await create({ speaker: repeat(512) }))
    rejected(t, await create({ speaker: repeat(513) }), ['speaker'])
  })

  t.test('subjects: up to 100 single-line keywords of up to 256 characters', async t => {
    const tags = Array.from({ length: 100 }, (_, i) => `tag-${i}`)
    const res = await create({ subjects: tags })
    accepted(t, res)
    t.same(res.json().subjects, tags)
    rejected(t, await create({ subjects: [...tags, 'one-too-many'] }), ['subjects'])
    // Refused by its length alone, with the schema's words, whatever its items (none is read).
    for (const items of [[...tags, 'one-too-many'], Array(9_000).fill(7)]) {
      const res = await create({ subjects: items })
      rejected(t, res, ['subjects'])
      t.equal(res.json().errors[0].message, 'Must not have more than 100 items.')
    }
    accepted(t, await create({ subjects: [repeat(256)] }))
    rejected(t, await create({ subjects: [repeat(257)] }), ['subjects'])
    rejected(t, await create({ subjects: ['two\nlines'] }), ['subjects'])
    rejected(t, await create({ subjects: 'fastify' }), ['subjects'])
  })

  t.test('start and end: ISO date-times, end not before start', async t => {
    const res = await create({ start: '2025-10-01T10:00:00+02:00', end: '2025-10-01T11:00:00+02:00' })
    accepted(t, res)
    t.equal(res.json().start, '2025-10-01T10:00:00+02:00')
    accepted(t, await create({ start: '2025-10-01T10:00:00Z', end: '2025-10-01T10:00:00Z' }))
    rejected(t, await create({ start: 'tomorrow' }), ['start'])
    rejected(t, await create({ start: '2025-10-01' }), ['start'])
    rejected(t, await create({ start: '0000-01-01T00:00:00Z' }), ['start'])
    rejected(t, await create({ start: '2025-10-01T10:00:00Z', end: '2025-10-01T09:59:59Z' }), ['end'])
  })

  t.test('a lightning talk lasts at most five minutes', async t => {
    const lightning = { type_of_talk: 'Lightning Talk', start: '2025-10-01T10:00:00Z' }
    accepted(t, await create({ ...lightning, end: '2025-10-01T10:05:00Z' }))
    rejected(t, await create({ ...lightning, end: '2025-10-01T10:05:01Z' }), ['end'])
    accepted(t, await create({ ...lightning, end: undefined }))
    const regular = await create({ type_of_talk: 'Talk', start: '2025-10-01T10:00:00Z', end: '2025-10-01T11:00:00Z' })
    accepted(t, regular)
    const path = new URL(regular.headers.location as string).pathname
    rejected(t, await call('PATCH', path, { type_of_talk: 'Lightning Talk' }, jane), ['end'])
    t.equal((await read(regular.headers.location as string)).type_of_talk, 'Talk', 'the refused change is not stored')
  })

  t.test('null clears an optional field and is refused on a required one', async t => {
    const res = await create({ speaker: 'Jane', email: 'jane@example.org', details: '<p>Text</p>' })
    const path = new URL(res.headers.location as string).pathname
    t.equal((await call('PATCH', path, { speaker: null, email: null, details: null }, jane)).statusCode, 204)
    const cleared = await read(res.headers.location as string)
    t.same([cleared.speaker, cleared.email, cleared.details], [null, null, null])
    rejected(t, await call('PATCH', path, { title: null, type_of_talk: null, audience: null }, jane), ['title', 'type_of_talk', 'audience'])
    rejected(t, await create({ title: null }), ['title'])
  })

  t.test('unknown keys are refused and named; what a GET returned is ignored', async t => {
    const unknown = await create({ colour: 'red', duration: 5 })
    rejected(t, unknown, ['colour', 'duration'])
    t.match(unknown.json().message, /colour/)
    t.match(unknown.json().message, /duration/)

    const res = await create({ speaker: 'Jane', details: '<p>Some <em>details</em></p>', start: '2025-10-01T10:00:00Z', subjects: ['fastify'] })
    const path = new URL(res.headers.location as string).pathname
    const before = (await call('GET', path, undefined, jane)).json()
    t.equal((await call('PATCH', path, before, jane)).statusCode, 204, 'the GET body sent back is accepted')
    const after = (await call('GET', path, undefined, jane)).json()
    t.same({ ...after, modified: null }, { ...before, modified: null }, 'and changes nothing')
    t.equal((await call('PATCH', path, { '@id': 'http://elsewhere/x', UID: 'not-a-uid', review_state: 'published', title: 'Renamed' }, jane)).statusCode, 204)
    const retitled = (await call('GET', path, undefined, jane)).json()
    t.same([retitled.title, retitled.id, retitled.UID, retitled.review_state], ['Renamed', before.id, before.UID, 'private'])
    // An `id` other than the object's renames it, as Volto's folder contents does (plone.shortname; docs/api.md).
    t.equal((await call('PATCH', path, { id: 'other-id' }, jane)).statusCode, 204)
    const renamed = (await call('GET', path.replace(/[^/]+$/, 'other-id'), undefined, jane)).json()
    t.same([renamed.title, renamed.id, renamed.UID], ['Renamed', 'other-id', before.UID])
    t.equal((await call('GET', path, undefined, jane)).statusCode, 302, 'the old address redirects')
  })

  t.test('every problem is reported at once', async t => {
    const res = await create({ title: repeat(1025), type_of_talk: 'Workshop', email: 'nope' })
    rejected(t, res, ['title', 'type_of_talk', 'email'])
    t.equal(res.json().errors.length, 3)
    t.notMatch(res.json().message, /\[\{|'field'/, 'the message is a sentence, not a repr of a list')
    const withInvariant = await create({ title: repeat(1025), start: '2025-10-01T10:00:00Z', end: '2025-10-01T09:00:00Z' })
    rejected(t, withInvariant, ['title', 'end'])
  })
})
