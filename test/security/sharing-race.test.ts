import t from 'tap'
import pg from 'pg'
import { build } from '../helper.js'

/**
 * A write that races a sharing change above its object (issue 25): the write computes its
 * catalogue access from the local roles it read; the sharing change re-indexes the subtree as
 * its transaction sees it, without the write's uncommitted row. Here the sharing change is held
 * open in a transaction of the test — its UPDATE of the folder's roles and of the access of the
 * objects it sees, as core/security/sharing.ts writes them — while a create and an edit inside the
 * folder are sent; it then commits. Both writes must end with the access of the roles as they are
 * after it: rita, whose Reader role on the folder was taken away, finds neither by search. A bulk
 * import sent meanwhile waits, then starts over from the roles as they are now.
 */
t.test('creates and edits that race a sharing change take the new roles', async t => {
  const { call, tokenFor, databaseUrl } = await build(t)
  const admin = await tokenFor('admin')
  const rita = await tokenFor('rita', ['Member'])
  t.equal((await call('POST', '/', { '@type': 'folder', id: 'team', title: 'Team' }, admin)).statusCode, 201)
  t.equal((await call('POST', '/team', { '@type': 'Document', id: 'minutes', title: 'Minutes' }, admin)).statusCode, 201)
  t.equal((await call('POST', '/team/@sharing', { entries: [{ id: 'rita', type: 'user', roles: { Reader: true } }] }, admin)).statusCode, 204)
  const found = async (): Promise<string[]> => (await call('GET', '/@search?portal_type=Document', undefined, rita)).json().items.map((i: { title: string }) => i.title).sort()
  t.same(await found(), ['Minutes'], 'rita reads the folder\'s page while she is its Reader')

  for (const round of [1, 2, 3]) {
    const sharing = new pg.Client({ connectionString: databaseUrl })
    await sharing.connect()
    await sharing.query('BEGIN')
    await sharing.query("SELECT uid FROM content WHERE path = '/team' FOR UPDATE")
    const roles = round % 2 === 1 ? '{}' : '{"user:rita": ["Reader"]}'
    await sharing.query("UPDATE content SET local_roles = $1 WHERE path = '/team'", [roles])
    await sharing.query(round % 2 === 1
      ? 'UPDATE catalog SET "allowedRolesAndUsers" = array_remove("allowedRolesAndUsers", \'user:rita\') WHERE uid IN (SELECT uid FROM content WHERE path LIKE \'/team/%\')'
      : 'UPDATE catalog SET "allowedRolesAndUsers" = array_append("allowedRolesAndUsers", \'user:rita\') WHERE uid IN (SELECT uid FROM content WHERE path LIKE \'/team/%\')')
    // Sent while the change is under way: each reads the roles before it.
    const create = call('POST', '/team', { '@type': 'Document', id: `notes-${round}`, title: `Notes ${round}` }, admin)
    const edit = call('PATCH', '/team/minutes', { title: `Minutes ${round}` }, admin)
    // A bulk import holds the folder's lineage until it commits: it waits, finds the roles changed and starts over from them.
    const imported = call('POST', '/team/@import', { items: [{ '@type': 'Document', id: `imported-${round}`, title: `Imported ${round}` }] }, admin)
    await new Promise(resolve => setTimeout(resolve, 300))
    await sharing.query('COMMIT')
    await sharing.end()
    t.equal((await create).statusCode, 201, `round ${round}: the create is written`)
    t.equal((await edit).statusCode, 204, `round ${round}: the edit is written`)
    t.equal((await imported).statusCode, 201, `round ${round}: the import is written`)
    const expected = round % 2 === 1 ? [] : ['Imported 1', 'Imported 2', 'Minutes 2', 'Notes 1', 'Notes 2'].sort()
    t.same(await found(), expected, round % 2 === 1 ? `round ${round}: rita, no longer a Reader, finds nothing` : `round ${round}: rita, a Reader again, finds all`)
    const check = new pg.Client({ connectionString: databaseUrl })
    await check.connect()
    const { rows } = await check.query<{ path: string, rita: boolean }>(`SELECT c.path, 'user:rita' = ANY(k."allowedRolesAndUsers") AS rita
      FROM content c JOIN catalog k USING (uid) WHERE c.path LIKE '/team/%' ORDER BY c.path`)
    await check.end()
    for (const row of rows) t.equal(row.rita, round % 2 === 0, `round ${round}: the catalogue's access of ${row.path}`)
  }
})

/**
 * A move of a folder holds it (FOR UPDATE) and then wants every folder inside it
 * (core/content/move.ts). A sharing change of a folder inside must not hold that inner folder
 * while it waits for the outer one, or the two wait for each other until PostgreSQL ends one (a
 * 500): it locks top down. Here the move's locks are taken by the test's own transaction, in the
 * move's order, around a sharing change sent between them: the inner folder's lock is granted,
 * the sharing change then ends, and the catalogue grants what it says.
 */
t.test('a sharing change inside a folder being moved waits for the move, never crosswise', async t => {
  const { call, tokenFor, databaseUrl } = await build(t)
  const admin = await tokenFor('admin')
  await tokenFor('rita', ['Member'])
  for (const [path, body] of [['/', { '@type': 'folder', id: 'moved', title: 'Moved' }], ['/moved', { '@type': 'folder', id: 'team', title: 'Team' }],
    ['/moved/team', { '@type': 'Document', id: 'doc', title: 'Doc' }]] as const) {
    t.equal((await call('POST', path, body, admin)).statusCode, 201)
  }
  const move = new pg.Client({ connectionString: databaseUrl })
  await move.connect()
  await move.query('BEGIN')
  await move.query("SET LOCAL lock_timeout = '5s'")
  await move.query("SELECT 1 FROM content WHERE path = '/moved' FOR UPDATE")
  const shared = call('POST', '/moved/team/@sharing', { entries: [{ id: 'rita', type: 'user', roles: { Reader: true } }] }, admin)
  await new Promise(resolve => setTimeout(resolve, 300))
  // The move's next lock: granted only if the sharing change is not holding the inner folder.
  const inner = await move.query("SELECT 1 FROM content WHERE path = '/moved/team' FOR UPDATE").then(() => 'granted', (err: Error) => err.message)
  await move.query('COMMIT')
  await move.end()
  t.equal(inner, 'granted', 'the move takes the inner folder while the sharing change waits above it')
  t.equal((await shared).statusCode, 204, 'the sharing change then ends')
  const found = await call('GET', '/@search?portal_type=Document', undefined, await tokenFor('rita', ['Member']))
  t.same(found.json().items.map((i: { title: string }) => i.title), ['Doc'], 'rita, now Reader of the folder, finds its page')
})
