import pg from 'pg'
import t from 'tap'
import { build, talkBody } from '../helper.js'
import { terminator } from './pg-helper.js'

const { app, call, tokenFor, databaseUrl } = await build(t)
const admin = await tokenFor('admin')
const postgres = await terminator(t, databaseUrl)
// A gate that a creation passes at its COMMIT (a deferred trigger): held shut, it keeps the COMMIT in flight.
await app.db.exec(`
  CREATE TABLE commit_gate ();
  CREATE FUNCTION pass_commit_gate() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN LOCK TABLE commit_gate IN ACCESS SHARE MODE; RETURN NULL; END $$;
  CREATE CONSTRAINT TRIGGER pass_commit_gate AFTER INSERT ON content DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW EXECUTE FUNCTION pass_commit_gate();`)

t.test('a write whose connection ends during its COMMIT: 503 that says the outcome is unknown', async t => {
  let answer: ReturnType<typeof call> | undefined
  await postgres.terminateWhileWaiting('commit_gate', undefined, () => { answer = call('POST', '/talks', talkBody({ title: 'Cut at commit' }), admin) })
  const res = await answer!
  t.equal(res.statusCode, 503)
  t.same(res.json(), {
    type: 'ServiceUnavailable',
    message: 'The database connection failed (57P01 admin_shutdown); the change may or may not have been saved. Read the current state before trying again.'
  })
  t.equal(res.headers['retry-after'], '2')
})

t.test('a write whose connection ends before its COMMIT: 503 that says nothing was changed, and nothing was', async t => {
  let answer: ReturnType<typeof call> | undefined
  // An import waits for the history table inside its transaction (its folder's traversal, a read, does not touch it).
  await postgres.terminateWhileWaiting('workflow_history', undefined, () => { answer = call('POST', '/talks/@import', { items: [talkBody({ title: 'Cut before commit' })] }, admin) })
  const res = await answer!
  t.equal(res.statusCode, 503)
  t.same(res.json(), { type: 'ServiceUnavailable', message: 'The database connection failed (57P01 admin_shutdown); nothing was changed. Try again.' })
  // Read on a connection of its own: the termination ended the pool's idle connections too, and the pool may not have noticed yet.
  const reader = new pg.Client({ connectionString: databaseUrl })
  await reader.connect()
  t.teardown(async () => { await reader.end() })
  t.equal((await reader.query("SELECT 1 FROM content WHERE data->>'title' = 'Cut before commit'")).rowCount, 0)
  t.equal((await call('POST', '/talks/@import', { items: [talkBody({ title: 'Cut before commit' })] }, admin)).statusCode, 201, 'sent again, it succeeds')
})
