import t from 'tap'
import { build, talkBody } from '../helper.js'

t.test('a member creates a talk and finds it by full text', async t => {
  const { call, tokenFor } = await build(t)
  const token = await tokenFor('jane')
  const created = await call('POST', '/talks', talkBody({ title: 'Ünïcode and Solr' }), token)
  t.equal(created.statusCode, 201, created.body)
  t.equal(created.headers.location, 'http://localhost:80/talks/unicode-and-solr')
  const found = await call('GET', '/@search?SearchableText=unicode', undefined, token)
  t.equal(found.statusCode, 200)
  t.same(found.json().items.map((i: { title: string }) => i.title), ['Ünïcode and Solr'])
  const anonymous = await call('GET', '/@search?SearchableText=unicode')
  t.equal(anonymous.json().items_total, 0, 'a private talk is not found by anonymous')
})
