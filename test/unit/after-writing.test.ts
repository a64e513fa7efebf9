import t from 'tap'
import { afterWriting, DatabaseUnavailable } from '../../core/db/faults.js'

/** What follows a committed write never reports "nothing was changed" (the 503's advice depends on it). */
t.test('afterWriting: a database failure after the commit may have saved the change', async t => {
  const lost = new DatabaseUnavailable('57P01 admin_shutdown', false, new Error('terminated'))
  const raised = await afterWriting(async () => { throw lost }).catch((err: unknown) => err)
  t.ok(raised instanceof DatabaseUnavailable, 'still a database failure (503)')
  t.same([(raised as DatabaseUnavailable).mayHaveCommitted, (raised as DatabaseUnavailable).reason], [true, '57P01 admin_shutdown'], 'now "may have been saved", with its reason')
  const uncertain = new DatabaseUnavailable('connection closed', true, null)
  t.equal(await afterWriting(async () => { throw uncertain }).catch((err: unknown) => err), uncertain, 'an uncertain failure stays as it is')
  const other = new Error('a bug')
  t.equal(await afterWriting(async () => { throw other }).catch((err: unknown) => err), other, 'any other error passes through')
  t.equal(await afterWriting(async () => 42), 42, 'and a result is returned')
})
