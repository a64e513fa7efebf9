import t from 'tap'
import { build, talkBody } from '../helper.js'

/**
 * `@lock` as Volto's edit form uses it, against plone.restapi's examples
 * (lock, lock_get, lock_update, refresh_lock, unlock, unlock_force): the
 * object's `lock`, POST to lock, PATCH with `Lock-Token`, DELETE to unlock.
 */
const BASE = 'http://localhost:80'

t.test('locking', async t => {
  const { app, call, tokenFor } = await build(t)
  const owner = await tokenFor('olga')
  const editor = await tokenFor('eddie', ['Editor'])
  const member = await tokenFor('mia')
  const created = await call('POST', '/talks', talkBody({ title: 'Locked talk' }), owner)
  const talk = new URL(created.json()['@id']).pathname

  await t.test('an object nobody locked', async t => {
    t.same((await call('GET', talk, undefined, owner)).json().lock, { locked: false, stealable: true })
    t.same((await call('GET', `${talk}/@lock`, undefined, owner)).json(), { locked: false, stealable: true })
    t.same((await call('GET', `${talk}/@lockinfo`, undefined, owner)).json(), { locked: false, stealable: true })
  })

  let token = ''
  await t.test('POST @lock: the editor holds the lock; its token only for them', async t => {
    const res = await call('POST', `${talk}/@lock`, undefined, owner)
    t.equal(res.statusCode, 200, res.body)
    const lock = res.json()
    t.match(lock, { locked: true, stealable: true, creator: 'olga', creator_url: `${BASE}/author/olga`, timeout: 600, name: 'plone.locking.stealable' })
    t.match(lock.created, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00$/)
    t.type(lock.token, 'string')
    token = lock.token
    t.equal((await call('GET', talk, undefined, owner)).json().lock.token, token, 'the object shows its holder the lock')
    const again = (await call('POST', `${talk}/@lock`, {}, owner)).json()
    t.equal(again.token, token, 'locking again refreshes the same lock')
    const seen = (await call('GET', talk, undefined, editor)).json().lock
    t.match(seen, { locked: true, creator: 'olga', stealable: true })
    t.notOk('token' in seen, 'others do not get the token')
    const other = await call('POST', `${talk}/@lock`, {}, editor)
    t.equal(other.statusCode, 200)
    t.equal(other.json().creator, 'olga', 'another editor\'s POST leaves the lock as it is')
    t.notOk('token' in other.json())
  })

  await t.test('while locked, writes need the Lock-Token', async t => {
    const patch = await call('PATCH', talk, { title: 'Changed without the token' }, editor)
    t.equal(patch.statusCode, 409)
    t.equal(patch.json().type, 'Conflict')
    t.equal((await call('PATCH', talk, { title: 'Changed by the holder without the token' }, owner)).statusCode, 409, 'as in plone.restapi, even its holder')
    // One character changed (a token may itself begin with an x: then it would be the token).
    const wrongToken = (token.startsWith('x') ? 'y' : 'x') + token.slice(1)
    t.equal((await call('PATCH', talk, { title: 'Wrong token' }, owner, { 'lock-token': wrongToken })).statusCode, 409, 'a token one character off')
    t.equal((await call('DELETE', talk, undefined, editor)).statusCode, 409)
    t.equal((await call('PATCH', talk, { title: 'Changed with the token' }, owner, { 'lock-token': token })).statusCode, 204)
    t.equal((await call('GET', talk, undefined, owner)).json().title, 'Changed with the token')
    const refreshed = await call('PATCH', `${talk}/@lock`, undefined, owner)
    t.equal(refreshed.statusCode, 200)
    t.equal(refreshed.json().token, token)
  })

  await t.test('DELETE @lock: the holder unlocks; others only by force, and only a stealable lock', async t => {
    const kept = await call('DELETE', `${talk}/@lock`, {}, editor)
    t.equal(kept.statusCode, 200)
    t.equal(kept.json().locked, true, 'without force another editor\'s unlock changes nothing')
    t.equal((await call('DELETE', `${talk}/@lock`, undefined, member)).statusCode, 403, 'a member may not edit, nor unlock')
    const forced = await call('DELETE', `${talk}/@lock`, { force: true }, editor)
    t.same(forced.json(), { locked: false, stealable: true }, 'stolen')
    t.equal((await call('PATCH', talk, { title: 'After the steal' }, editor)).statusCode, 204)
    await call('POST', `${talk}/@lock`, { stealable: false, timeout: 3600 }, owner)
    const info = (await call('GET', `${talk}/@lock`, undefined, editor)).json()
    t.match(info, { locked: true, stealable: false, timeout: 3600, name: 'plone.locking.nonstealable' })
    const refused = await call('DELETE', `${talk}/@lock`, { force: true }, editor)
    t.equal(refused.statusCode, 403)
    t.equal(refused.json().type, 'Forbidden')
    t.same((await call('DELETE', `${talk}/@lock`, {}, owner)).json(), { locked: false, stealable: true })
  })

  await t.test('who may lock, and bad bodies', async t => {
    t.equal((await call('POST', `${talk}/@lock`)).statusCode, 401)
    t.equal((await call('POST', `${talk}/@lock`, {}, member)).statusCode, 403)
    for (const body of [{ timeout: 0 }, { timeout: 10 ** 9 }, { stealable: 'no' }, { other: 1 }]) {
      const res = await call('POST', `${talk}/@lock`, body, owner)
      t.equal(res.statusCode, 400, JSON.stringify(body))
      t.equal(res.json().type, 'BadRequest')
    }
  })

  await t.test('a lock past its timeout is no lock', async t => {
    const lock = (await call('POST', `${talk}/@lock`, { timeout: 60 }, owner)).json()
    t.equal(lock.locked, true)
    // Backdated rather than waited for: the timeout is compared with the database's clock.
    await app.db.query("UPDATE locks SET created = now() - interval '61 seconds'")
    t.same((await call('GET', `${talk}/@lock`, undefined, editor)).json(), { locked: false, stealable: true })
    t.equal((await call('PATCH', talk, { title: 'After the timeout' }, editor)).statusCode, 204)
    const taken = (await call('POST', `${talk}/@lock`, {}, editor)).json()
    t.match(taken, { locked: true, creator: 'eddie' })
    t.not(taken.token, lock.token, 'a new lock, a new token')
  })
})
