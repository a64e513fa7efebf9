import t from 'tap'
import { build, talkBody } from '../helper.js'

/**
 * The workflow body as Volto and `@plone/client` send it (plone.restapi's
 * transition service): `include_children`, dates without a UTC offset,
 * and empty bodies of any content type.
 */
t.test('workflow bodies from Plone clients', async t => {
  const { call, inject, tokenFor } = await build(t)
  const admin = await tokenFor('admin')
  const owner = await tokenFor('olga')
  const newTalk = async (title: string, token = owner): Promise<string> => {
    const res = await call('POST', '/talks', talkBody({ title }), token)
    if (res.statusCode !== 201) throw new Error(res.body)
    return new URL(res.json()['@id']).pathname
  }

  await t.test('Volto posts include_children: false and dates without an offset (UTC)', async t => {
    const talk = await newTalk('Dated by Volto')
    const res = await call('POST', `${talk}/@workflow/publish`, { comment: 'ok', include_children: false, effective: '2030-01-02T10:30', expires: '2031-05-06T08:00:00' }, admin)
    t.equal(res.statusCode, 200, res.body)
    t.match(res.json(), { action: 'publish', comments: 'ok', review_state: 'published' })
    const read = (await call('GET', talk, undefined, admin)).json()
    t.equal(read.effective, '2030-01-02T10:30:00+00:00')
    t.equal(read.expires, '2031-05-06T08:00:00+00:00')
    const withOffset = await newTalk('Dated with an offset')
    t.equal((await call('POST', `${withOffset}/@workflow/publish`, { effective: '2030-01-02T10:30:00+02:00', expires: null }, admin)).statusCode, 200)
    t.equal((await call('GET', withOffset, undefined, admin)).json().effective, '2030-01-02T08:30:00+00:00')
    for (const effective of ['tomorrow', '2030-13-01T00:00', '2030-01-02T10:30+2']) {
      const bad = await call('POST', `${await newTalk('Bad date ' + effective)}/@workflow/publish`, { effective }, admin)
      t.equal(bad.statusCode, 400, `${effective} is refused`)
      t.equal(bad.json().type, 'BadRequest')
    }
    t.equal((await call('POST', `${talk}/@workflow/retract`, { include_children: 'yes' }, admin)).statusCode, 400, 'include_children is a boolean')
    t.equal((await call('POST', `${talk}/@workflow/retract`, { unknown: 1 }, admin)).statusCode, 400, 'other keys are still refused')
  })

  await t.test('include_children: true takes the transition inside the folder too', async t => {
    const folder = await call('POST', '/', { '@type': 'folder', title: 'Programme' }, admin)
    const path = new URL(folder.json()['@id']).pathname
    const inner = await call('POST', path, { '@type': 'folder', title: 'Day one' }, admin)
    const innerPath = new URL(inner.json()['@id']).pathname
    const done = await call('POST', `${path}/@workflow/publish`, { include_children: true }, admin)
    t.equal(done.statusCode, 200, done.body)
    t.equal((await call('GET', innerPath)).json().review_state, 'published', 'the child is published (anonymous sees it)')
    const again = await call('POST', `${path}/@workflow/retract`, { include_children: true }, admin)
    t.equal(again.statusCode, 200, 'children already in the target state are left as they are')
    const other = await call('POST', '/', { '@type': 'folder', title: 'Without children' }, admin)
    const otherPath = new URL(other.json()['@id']).pathname
    await call('POST', otherPath, { '@type': 'folder', title: 'Child' }, admin)
    t.equal((await call('POST', `${otherPath}/@workflow/publish`, { include_children: false }, admin)).statusCode, 200)
    t.equal((await call('GET', `${otherPath}/child`, undefined, admin)).json().review_state, 'private', 'without include_children the child stays')
  })

  await t.test('@history: the workflow entries with the versions, newest first, as plone.restapi (test/api/plone-history.test.ts)', async t => {
    const talk = await newTalk('With a history')
    await call('POST', `${talk}/@workflow/submit`, { comment: 'please' }, owner)
    const res = await call('GET', `${talk}/@history`, undefined, owner)
    t.equal(res.statusCode, 200, res.body)
    t.match(res.json(), [
      { action: 'submit', transition_title: 'Submit for publication', comments: 'please', review_state: 'pending', state_title: 'Pending review', type: 'workflow' },
      { action: 'Create', transition_title: 'Create', review_state: 'private', state_title: 'Private', type: 'workflow', actor: { '@id': 'http://localhost:80/@users/olga', id: 'olga' } },
      { action: 'Edited', type: 'versioning', version: 0 }
    ])
    t.equal((await call('GET', `${talk}/@history`, undefined, await tokenFor('mia'))).statusCode, 403, 'others may not even view it')
    t.same((await call('GET', '/@history', undefined, admin)).json(), [], 'the site root has no workflow')
  })

  await t.test('an empty body is no body, whatever its Content-Type; a non-JSON body is still 415', async t => {
    for (const type of ['application/x-www-form-urlencoded', 'text/plain', 'multipart/form-data; boundary=x', 'application/json']) {
      const talk = await newTalk(`Empty ${type}`)
      const res = await inject({ method: 'POST', url: `${talk}/@workflow/submit`, headers: { authorization: `Bearer ${owner}`, 'content-type': type }, payload: '' })
      t.equal(res.statusCode, 200, `${type}: ${res.body}`)
    }
    const talk = await newTalk('Form body')
    const form = await inject({ method: 'POST', url: `${talk}/@workflow/submit`, headers: { authorization: `Bearer ${owner}`, 'content-type': 'application/x-www-form-urlencoded' }, payload: 'comment=x' })
    t.equal(form.statusCode, 415)
    t.same(Object.keys(form.json()).sort(), ['message', 'type'])
    t.equal(form.json().type, 'UnsupportedMediaType')
  })
})
