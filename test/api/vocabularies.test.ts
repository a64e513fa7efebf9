import t from 'tap'
import { build } from '../helper.js'

const V = 'http://localhost:80/@vocabularies'
const terms = (...tokens: string[]): Array<{ token: string, title: string }> => tokens.map(token => ({ token, title: token }))

t.test('@vocabularies', async t => {
  const { call, tokenFor } = await build(t)
  const admin = await tokenFor('admin')

  t.test('lists the vocabularies the types declare, and the tags in use', async t => {
    const res = await call('GET', '/@vocabularies')
    t.equal(res.statusCode, 200)
    t.same(res.json(), ['types_of_talk', 'audiences', 'rooms', 'plone.app.vocabularies.Keywords'].map(name => ({ '@id': `${V}/${name}`, title: name })))
  })

  t.test('serves each vocabulary\'s terms', async t => {
    t.same((await call('GET', '/@vocabularies/types_of_talk')).json(), { '@id': `${V}/types_of_talk`, items: terms('Talk', 'Training', 'Keynote', 'Lightning Talk'), items_total: 4 })
    t.same((await call('GET', '/@vocabularies/audiences')).json().items, terms('Beginner', 'Advanced', 'Professionals'))
    t.same((await call('GET', '/@vocabularies/rooms')).json().items, terms('101', '201', 'Auditorium'))
    const unknown = await call('GET', '/@vocabularies/colours')
    t.equal(unknown.statusCode, 404)
    t.equal(unknown.json().type, 'NotFound')
  })

  t.test('filters by title, token and tokens', async t => {
    const items = async (query: string): Promise<unknown> => (await call('GET', `/@vocabularies/types_of_talk?${query}`)).json().items
    t.same(await items('title=TALK'), terms('Talk', 'Lightning Talk'), 'title: a substring, any case')
    t.same(await items('token=lightning%20talk'), terms('Lightning Talk'), 'token: the whole token, any case')
    t.same(await items('token=Lightning'), [])
    t.same(await items('tokens=Talk&tokens=Keynote'), terms('Talk', 'Keynote'))
    const both = await call('GET', '/@vocabularies/types_of_talk?title=a&token=Talk')
    t.equal(both.statusCode, 400)
    t.equal(both.json().type, 'BadRequest')
  })

  t.test('batches, unless b_size=-1', async t => {
    const page = (await call('GET', '/@vocabularies/types_of_talk?b_size=3')).json()
    t.same(page.items, terms('Talk', 'Training', 'Keynote'))
    t.equal(page.items_total, 4)
    t.same(page.batching, {
      '@id': `${V}/types_of_talk?b_size=3`,
      first: `${V}/types_of_talk?b_start=0&b_size=3`,
      last: `${V}/types_of_talk?b_start=3&b_size=3`,
      next: `${V}/types_of_talk?b_start=3&b_size=3`
    })
    t.same((await call('GET', '/@vocabularies/types_of_talk?b_size=3&b_start=3')).json().items, terms('Lightning Talk'))
    t.same((await call('GET', '/@vocabularies/types_of_talk?b_size=4')).json(), { '@id': `${V}/types_of_talk`, items: terms('Talk', 'Training', 'Keynote', 'Lightning Talk'), items_total: 4 })
    t.same((await call('GET', '/@vocabularies/types_of_talk?b_size=-1')).json(), { '@id': `${V}/types_of_talk`, items: terms('Talk', 'Training', 'Keynote', 'Lightning Talk') })
    t.equal((await call('GET', '/@vocabularies/types_of_talk?b_size=x')).statusCode, 400)
  })

  t.test('Managers replace the rooms; nobody else may', async t => {
    const rooms = { items: [{ token: 'Hall A', title: 'Hall A (ground floor)' }, { token: '101' }] }
    const anonymous = await call('PATCH', '/@vocabularies/rooms', rooms)
    t.equal(anonymous.statusCode, 401)
    for (const role of ['Member', 'Reviewer', 'Site Administrator']) {
      const res = await call('PATCH', '/@vocabularies/rooms', rooms, await tokenFor(role.replace(' ', '-').toLowerCase(), [role]))
      t.equal(res.statusCode, 403, role)
      t.equal(res.json().type, 'Forbidden')
    }
    t.same((await call('GET', '/@vocabularies/rooms')).json().items, terms('101', '201', 'Auditorium'), 'unchanged so far')
    t.equal((await call('PATCH', '/@vocabularies/rooms', rooms, admin)).statusCode, 204)
    t.same((await call('GET', '/@vocabularies/rooms')).json().items, [{ token: 'Hall A', title: 'Hall A (ground floor)' }, { token: '101', title: '101' }])
  })

  t.test('fixed vocabularies and bad term lists are refused', async t => {
    const fixed = await call('PATCH', '/@vocabularies/types_of_talk', { items: [{ token: 'Talk' }] }, admin)
    t.equal(fixed.statusCode, 400)
    t.match(fixed.json().message, /fixed/)
    t.equal((await call('PATCH', '/@vocabularies/colours', { items: [{ token: 'red' }] }, admin)).statusCode, 404)
    for (const body of [{ items: [] }, { items: [{ token: 'A' }, { token: 'A' }] }, { items: [{ token: '' }] }, { items: [{ token: 'A', colour: 'red' }] }, { rooms: ['A'] }]) {
      const res = await call('PATCH', '/@vocabularies/rooms', body, admin)
      t.equal(res.statusCode, 400, JSON.stringify(body))
      t.equal(res.json().type, 'BadRequest')
    }
    t.same((await call('GET', '/@vocabularies/types_of_talk')).json().items.length, 4, 'the fixed vocabulary is intact')
  })
})
