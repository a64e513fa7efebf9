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
