import t from 'tap'
import { build, talkBody } from '../helper.js'

/**
 * The room rule (docs/api.md): changing `room` needs "Review portal content"
 * (Reviewer, Site Administrator, Manager). Anyone else who sends a value
 * other than the stored one gets 403 and nothing is written; sending the
 * stored value back is fine. The value must come from the rooms vocabulary.
 */
t.test('room', async t => {
  const { app, call, tokenFor } = await build(t)
  const admin = await tokenFor('admin')
  const jane = await tokenFor('jane')
  const editor = await tokenFor('eddie', ['Editor'])
  const reviewer = await tokenFor('rita', ['Reviewer'])
  const siteAdmin = await tokenFor('sam', ['Site Administrator'])

  /** A talk by Jane with its room set by the admin. */
  const talkInRoom = async (room: string): Promise<string> => {
    const created = await call('POST', '/talks', talkBody(), jane)
    const path = new URL(created.headers.location as string).pathname
    t.equal((await call('PATCH', path, { room }, admin)).statusCode, 204)
    return path
  }
  const stored = async (path: string, field: string): Promise<unknown> => (await call('GET', path, undefined, admin)).json()[field]

  t.test('the owner and an Editor may not change it, but may send it back', async t => {
    const path = await talkInRoom('101')
    for (const [who, token] of [['owner', jane], ['Editor', editor]]) {
      const title = await stored(path, 'title')
      const changed = await call('PATCH', path, { room: '201', title: `Changed by ${who}` }, token)
      t.equal(changed.statusCode, 403, `${who}: ${changed.body}`)
      t.equal(changed.json().type, 'Forbidden')
      t.match(changed.json().message, /room/)
      t.equal(await stored(path, 'room'), '101', `${who}: the room is unchanged`)
      t.equal(await stored(path, 'title'), title, `${who}: nothing else of the refused write is stored`)
      const cleared = await call('PATCH', path, { room: null }, token)
      t.equal(cleared.statusCode, 403, `${who} may not clear the room either`)
      const sentBack = await call('PATCH', path, { room: '101', title: `Edited by ${who}` }, token)
      t.equal(sentBack.statusCode, 204, `${who} sends the stored room back: ${sentBack.body}`)
      t.equal(await stored(path, 'title'), `Edited by ${who}`)
    }
  })

  t.test('a Reviewer, a Site Administrator and a Manager change it', async t => {
    const path = await talkInRoom('101')
    // Reviewers modify pending content (simple publication workflow).
    t.equal((await call('POST', `${path}/@workflow/submit`, {}, jane)).statusCode, 200)
    for (const [room, token] of [['201', reviewer], ['Auditorium', siteAdmin], ['101', admin]]) {
      const res = await call('PATCH', path, { room }, token)
      t.equal(res.statusCode, 204, res.body)
      t.equal(await stored(path, 'room'), room)
    }
  })

  t.test('on create: a member may not choose a room', async t => {
    const talks = async (): Promise<number> => (await app.db.query<{ n: number }>("SELECT count(*) AS n FROM content WHERE portal_type = 'talk'")).rows[0].n
    const before = await talks()
    const withRoom = await call('POST', '/talks', talkBody({ room: '101' }), jane)
    t.equal(withRoom.statusCode, 403, withRoom.body)
    t.match(withRoom.json().message, /room/)
    t.equal(await talks(), before, 'nothing was created')
    const withNull = await call('POST', '/talks', talkBody({ room: null }), jane)
    t.equal(withNull.statusCode, 201, withNull.body)
    t.equal(withNull.json().room, null)
    const byReviewer = await call('POST', '/talks', talkBody({ room: 'Auditorium' }), reviewer)
    t.equal(byReviewer.statusCode, 201, byReviewer.body)
    t.equal(byReviewer.json().room, 'Auditorium')
  })

  t.test('the value comes from the rooms vocabulary, which Managers edit', async t => {
    const path = await talkInRoom('101')
    const unknown = await call('PATCH', path, { room: 'Room 42' }, admin)
    t.equal(unknown.statusCode, 400)
    t.equal(unknown.json().errors[0].field, 'room')
    const edited = await call('PATCH', '/@vocabularies/rooms', { items: [{ token: 'Room 42', title: 'Room forty-two' }, { token: '201' }] }, admin)
    t.equal(edited.statusCode, 204, edited.body)
    const asRead = (await call('GET', path, undefined, jane)).json()
    const sentBack = await call('PATCH', path, asRead, jane)
    t.equal(sentBack.statusCode, 204, `a room taken out of the vocabulary may be sent back where it is stored: ${sentBack.body}`)
    t.equal(await stored(path, 'room'), '101')
    t.equal((await call('PATCH', path, { room: 'Room 42' }, admin)).statusCode, 204)
    t.equal(await stored(path, 'room'), 'Room 42')
    const removed = await call('PATCH', path, { room: '101' }, admin)
    t.equal(removed.statusCode, 400, 'but it cannot be chosen again')
    t.equal(await stored(path, 'room'), 'Room 42')
    t.equal((await call('POST', '/talks', talkBody({ room: 'Auditorium' }), reviewer)).statusCode, 400)
  })
})
