import t from 'tap'
import { build } from '../helper.js'
import { terminator } from './pg-helper.js'

t.test('@health?verbose tells what happened to the database connections; @health alone keeps its body', async t => {
  const { call, databaseUrl } = await build(t)
  const before = await call('GET', '/@health?verbose')
  t.equal(before.statusCode, 200)
  t.match(before.json(), { status: 'ok', postgres: 'ok', database: { since: String, connections_lost: 0, operations_failed: 0, last_failure: null } })

  const terminated = await (await terminator(t, databaseUrl)).terminateAll()
  t.ok(terminated > 0, `the pool's ${terminated} idle connections terminated`)
  // The pool may hand out an idle connection before it has read that it ended: the check then runs again on another one.
  t.equal((await call('GET', '/@health')).statusCode, 200, 'the next check is answered')
  const after = await call('GET', '/@health?verbose')
  t.match(after.json(), { status: 'ok', postgres: 'ok', database: { connections_lost: terminated, last_failure: { at: String, reason: '57P01 admin_shutdown' } } })

  t.same((await call('GET', '/@health')).json(), { status: 'ok', postgres: 'ok', solr: 'off', redis: 'off' })
  t.same((await call('GET', '/@health?verbose=false')).json(), { status: 'ok', postgres: 'ok', solr: 'off', redis: 'off' })
})

t.test('the embedded database has no connections to lose', async t => {
  const { call } = await build(t, { embedded: true })
  t.match((await call('GET', '/@health?verbose')).json(), { postgres: 'ok', database: { connections_lost: 0, operations_failed: 0, last_failure: null } })
})
