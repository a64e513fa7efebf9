import t from 'tap'
import { build, talkBody } from '../helper.js'
import { MAX_CHANGE_NOTE } from '../../core/content/versions.js'

/**
 * `@history` with versions (plone.restapi's history.md, history_get*,
 * history_revert*): versions and workflow entries newest first, a version
 * as it was, a revert as a new version; who may; hostile version ids.
 */
t.test('@history with versions', async t => {
  const { app, call, inject, tokenFor } = await build(t)
  const admin = await tokenFor('admin')
  const owner = await tokenFor('olga')
  const member = await tokenFor('mia')
  const editor = await tokenFor('edith', ['Member', 'Editor'])
  const reviewer = await tokenFor('rita', ['Member', 'Reviewer'])
  const newTalk = async (title: string, token = owner): Promise<string> => {
    const res = await call('POST', '/talks', talkBody({ title }), token)
    if (res.statusCode !== 201) throw new Error(res.body)
    return new URL(res.json()['@id']).pathname
  }
  const versionRows = async (path: string): Promise<number> => {
    const { rows } = await app.db.query<{ n: number }>('SELECT count(*)::int AS n FROM versions v JOIN content c USING (uid) WHERE c.path = $1', [path])
    return rows[0].n
  }

  await t.test('the documented example: a page lists version 0 and its creation, newest first', async t => {
    const created = await call('POST', '/', { '@type': 'Document', title: 'Welcome to Plone' }, admin)
    t.equal(created.statusCode, 201, created.body)
    const page = new URL(created.json()['@id']).pathname
    t.match(created.json(), { versioning_enabled: true, changeNote: '', version: 'current' })
    const res = await call('GET', `${page}/@history`, undefined, admin)
    t.equal(res.statusCode, 200, res.body)
    const [first, second, ...rest] = res.json()
    t.same(rest, [])
    // plone.restapi's example lists version 0 before Create: its clock is frozen an hour apart; here they share a moment.
    const version = [first, second].find(e => e.type === 'versioning')
    const creation = [first, second].find(e => e.type === 'workflow')
    t.same(Object.keys(version).sort(), ['@id', 'action', 'actor', 'comments', 'may_revert', 'time', 'transition_title', 'type', 'version'])
    t.match(version, {
      '@id': `http://localhost:80${page}/@history/0`,
      action: 'Edited',
      // plone.restapi gives the user's full name ("Administrator"); here the id, a fact anyone who reads the history may know (docs/api.md).
      actor: { '@id': 'http://localhost:80/@users/admin', fullname: 'admin', id: 'admin', username: null },
      comments: 'Initial version',
      may_revert: true,
      time: /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00$/,
      transition_title: 'Edited',
      version: 0
    })
    t.same(Object.keys(creation).sort(), ['action', 'actor', 'comments', 'review_state', 'state_title', 'time', 'transition_title', 'type'])
    t.match(creation, { action: 'Create', comments: '', review_state: 'private', state_title: 'Private', transition_title: 'Create' })

    const edited = await call('PATCH', page, { title: 'Welcome, again', changeNote: 'Retitled' }, admin)
    t.equal(edited.statusCode, 204, edited.body)
    const after = (await call('GET', `${page}/@history`, undefined, admin)).json()
    t.match(after[0], { type: 'versioning', version: 1, comments: 'Retitled' }, 'the newest first')
    t.equal((await call('GET', page, undefined, admin)).json().changeNote, '', 'the change note is the version\'s, not the object\'s')

    // Volto's Diff asks two versions.
    const [v0, v1] = await Promise.all([0, 1].map(async n => await call('GET', `${page}/@history/${n}`, undefined, admin)))
    t.equal(v0.statusCode, 200, v0.body)
    t.match(v0.json(), { '@id': `http://localhost:80${page}`, '@type': 'Document', title: 'Welcome to Plone', version: '0' })
    t.match(v1.json(), { title: 'Welcome, again', version: '1' })

    const reverted = await call('PATCH', `${page}/@history`, { version: 0 }, admin)
    t.equal(reverted.statusCode, 200, reverted.body)
    t.same(reverted.json(), { message: 'Welcome to Plone has been reverted to revision 0.' })
    t.equal((await call('GET', page, undefined, admin)).json().title, 'Welcome to Plone')
    const history = (await call('GET', `${page}/@history`, undefined, admin)).json()
    t.match(history[0], { type: 'versioning', version: 2, comments: 'Reverted to revision 0' }, 'a revert is itself a new version')
    t.equal((await call('GET', `${page}/@history/2`, undefined, admin)).json().title, 'Welcome to Plone')
  })

  await t.test('a transition is no version; a versionless type lists its workflow only', async t => {
    const talk = await newTalk('Transitions only')
    await call('POST', `${talk}/@workflow/submit`, { comment: 'please' }, owner)
    const entries = (await call('GET', `${talk}/@history`, undefined, owner)).json()
    t.same(entries.map((e: { type: string }) => e.type), ['workflow', 'workflow', 'versioning'])
    t.match(entries[0], { action: 'submit', comments: 'please', review_state: 'pending' })
    const folder = new URL((await call('POST', '/', { '@type': 'folder', title: 'Plain folder' }, admin)).json()['@id']).pathname
    await call('PATCH', folder, { title: 'Plain folder, edited' }, admin)
    const folderHistory = (await call('GET', `${folder}/@history`, undefined, admin)).json()
    t.same(folderHistory.map((e: { type: string }) => e.type), ['workflow'])
    t.equal((await call('GET', folder, undefined, admin)).json().versioning_enabled, undefined)
    t.equal((await call('GET', `${folder}/@history/0`, undefined, admin)).statusCode, 404)
    t.equal((await call('PATCH', `${folder}/@history`, { version: 0 }, admin)).statusCode, 404)
  })

  await t.test('who may list, read and revert', async t => {
    const talk = await newTalk('Private thoughts')
    t.equal((await call('PATCH', talk, { title: 'Private thoughts, edited' }, owner)).statusCode, 204)
    for (const [who, token, list, revert] of [['owner', owner, 200, 200], ['editor', editor, 200, 200], ['reviewer', reviewer, 403, 403], ['member', member, 403, 403], ['anonymous', undefined, 401, 401]] as const) {
      const listed = await call('GET', `${talk}/@history`, undefined, token)
      t.equal(listed.statusCode, list, `${who} lists: ${listed.body}`)
      const read = await call('GET', `${talk}/@history/0`, undefined, token)
      t.equal(read.statusCode, list, `${who} reads a version`)
      if (list !== 200) {
        t.notMatch(read.body, 'Private thoughts', `${who} is shown nothing of the private object`)
        t.same(Object.keys(read.json()).sort(), ['message', 'type'])
      } else {
        const versions = listed.json().filter((e: { type: string }) => e.type === 'versioning')
        t.ok(versions.length >= 2 && versions.every((v: { may_revert: boolean }) => v.may_revert === (revert === 200)), `${who}: may_revert`)
      }
      const before = await versionRows(talk)
      const reverted = await call('PATCH', `${talk}/@history`, { version: 0 }, token)
      t.equal(reverted.statusCode, revert, `${who} reverts: ${reverted.body}`)
      t.equal(await versionRows(talk), before + (revert === 200 ? 1 : 0))
    }
    await call('POST', `${talk}/@workflow/publish`, {}, admin)
    t.equal((await call('GET', talk)).statusCode, 200, 'published: anyone views it')
    t.equal((await call('GET', `${talk}/@history/0`)).statusCode, 401, 'but not its versions')
    t.equal((await call('GET', `${talk}/@history/0`, undefined, member)).statusCode, 403)
  })

  await t.test('hostile version ids and change notes: 4xx in the error shape, nothing written', async t => {
    const talk = await newTalk('Hostile')
    const before = await versionRows(talk)
    for (const segment of ['-1', '1e309', 'abc', '99999999999', '2147483648', '1.5', '%00', '5']) {
      const res = await call('GET', `${talk}/@history/${segment}`, undefined, owner)
      t.equal(res.statusCode, 404, `GET @history/${segment}`)
      t.same(Object.keys(res.json()).sort(), ['message', 'type'])
    }
    for (const payload of ['{"version":-1}', '{"version":1e309}', '{"version":"1"}', '{"version":1.5}', '{"version":null}', '{}',
      '{"version":0,"other":1}', '{"__proto__":{"version":0}}', '{"version":{"__proto__":0}}', '[0]', '0']) {
      const res = await inject({ method: 'PATCH', url: `${talk}/@history`, headers: { authorization: `Bearer ${owner}`, 'content-type': 'application/json' }, payload })
      t.equal(res.statusCode, 400, `PATCH ${payload}: ${res.body}`)
      t.ok(typeof res.json().type === 'string' && typeof res.json().message === 'string')
    }
    t.equal((await call('PATCH', `${talk}/@history`, { version: 7 }, owner)).statusCode, 404, 'a version never kept')
    for (const changeNote of ['x'.repeat(MAX_CHANGE_NOTE + 1), 42, ['a'], { note: 'a' }]) {
      const res = await call('PATCH', talk, { title: 'Changed', changeNote }, owner)
      t.equal(res.statusCode, 400, `changeNote ${JSON.stringify(changeNote).slice(0, 20)}`)
      t.match(res.json(), { type: 'BadRequest', errors: [{ field: 'changeNote' }] })
    }
    t.equal(await versionRows(talk), before, 'no version was written')
    t.equal((await call('GET', talk, undefined, owner)).json().title, 'Hostile', 'nor the object changed')
    t.equal((await call('PATCH', talk, { changeNote: 'x'.repeat(MAX_CHANGE_NOTE) }, owner)).statusCode, 204, 'the longest note is kept')
    t.equal((await call('GET', `${talk}/@history`, undefined, owner)).json()[0].comments.length, MAX_CHANGE_NOTE)
  })

  await t.test('every versionable type reverts to what its version holds', async t => {
    const slate = (text: string): Record<string, unknown> => ({ '@type': 'slate', value: [{ type: 'p', children: [{ text }] }], plaintext: text })
    const bodies: Array<[Record<string, unknown>, Record<string, unknown>]> = [
      [{ '@type': 'Document', title: 'Page', blocks: { a: slate('First') }, blocks_layout: { items: ['a'] } }, { blocks: { b: slate('Second') }, blocks_layout: { items: ['b'] } }],
      [{ '@type': 'News Item', title: 'News', description: 'Before', blocks: { a: slate('Ribbon') }, blocks_layout: { items: ['a'] } }, { description: 'After', blocks: {}, blocks_layout: { items: [] } }],
      [{ '@type': 'Event', title: 'Sprint', start: '2026-10-12T09:00:00Z', end: '2026-10-12T17:00:00Z', recurrence: 'RRULE:FREQ=WEEKLY;COUNT=3', attendees: ['Ada'] },
        { start: '2026-11-12T09:00:00Z', end: '2026-11-12T17:00:00Z', recurrence: null, attendees: ['Grace'] }],
      [{ '@type': 'Link', title: 'Out', remoteUrl: 'https://plone.org' }, { remoteUrl: 'https://example.org' }],
      [talkBody({ title: 'A talk', details: '<p>Before</p>', speaker: 'Ada' }), { details: '<p>After</p>', speaker: null, audience: ['Advanced'] }]
    ]
    for (const [body, change] of bodies) {
      const created = await call('POST', body['@type'] === 'talk' ? '/talks' : '/', body, admin)
      t.equal(created.statusCode, 201, created.body)
      const path = new URL(created.json()['@id']).pathname
      const original = (await call('GET', `${path}/@history/0`, undefined, admin)).json()
      t.equal((await call('PATCH', path, change, admin)).statusCode, 204)
      const reverted = await call('PATCH', `${path}/@history`, { version: 0 }, admin)
      t.equal(reverted.statusCode, 200, `${String(body['@type'])}: ${reverted.body}`)
      const now = (await call('GET', `${path}/@history/2`, undefined, admin)).json()
      for (const key of Object.keys(original).filter(k => !['modified', 'version', 'lock'].includes(k))) {
        t.same(now[key], original[key], `${String(body['@type'])}: ${key} as version 0 had it`)
      }
    }
    const talk = await newTalk('Without a speaker')
    await call('PATCH', talk, { speaker: 'Ada' }, owner)
    t.equal((await call('PATCH', `${talk}/@history`, { version: 0 }, owner)).statusCode, 200)
    t.equal((await call('GET', talk, undefined, owner)).json().speaker, null, 'what the version did not have is cleared')
  })

  await t.test('a revert keeps the workflow state, and is checked as an edit', async t => {
    const talk = await newTalk('To be locked')
    await call('PATCH', talk, { title: 'Locked later' }, owner)
    const lock = await call('POST', `${talk}/@lock`, {}, admin)
    t.equal(lock.statusCode, 200, lock.body)
    t.equal((await call('PATCH', `${talk}/@history`, { version: 0 }, owner)).statusCode, 409, 'a lock held by another refuses it (as a PATCH)')
    await call('DELETE', `${talk}/@lock`, {}, admin)
    await call('POST', `${talk}/@workflow/submit`, {}, owner)
    t.equal((await call('PATCH', `${talk}/@history`, { version: 0 }, owner)).statusCode, 403, 'pending: the owner may no longer change it')
    const listed = await call('GET', `${talk}/@history`, undefined, reviewer)
    t.equal(listed.statusCode, 200, 'pending: the reviewer reads its history')
    t.ok(listed.json().filter((e: { type: string }) => e.type === 'versioning').every((v: { may_revert: boolean }) => v.may_revert))
    t.equal((await call('PATCH', `${talk}/@history`, { version: 0 }, reviewer)).statusCode, 200, 'the reviewer may')
    t.match((await call('GET', talk, undefined, admin)).json(), { title: 'To be locked', review_state: 'pending' })
  })
})

t.test('VERSIONS_KEPT=0 turns versioning off: edits keep no version, the workflow history stays', async t => {
  const { app, call, tokenFor } = await build(t, { env: { VERSIONS_KEPT: '0' } })
  const admin = await tokenFor('admin')
  const created = await call('POST', '/', { '@type': 'Document', title: 'Unversioned' }, admin)
  t.equal(created.statusCode, 201, created.body)
  const page = new URL(created.json()['@id']).pathname
  t.equal(created.json().versioning_enabled, false, 'Volto is told that this type keeps no versions')
  t.equal((await call('PATCH', page, { title: 'Edited', changeNote: 'no version of this' }, admin)).statusCode, 204)
  const history = (await call('GET', `${page}/@history`, undefined, admin)).json()
  t.same(history.map((e: { type: string }) => e.type), ['workflow'], 'the creation only')
  const { rows } = await app.db.query<{ n: number }>('SELECT count(*)::int AS n FROM versions')
  t.equal(rows[0].n, 0, 'no version row written')
  t.equal((await call('GET', `${page}/@history/0`, undefined, admin)).statusCode, 404)
})
