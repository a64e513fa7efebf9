import { escapeLike } from '../db/db.js'
import type { Write } from '../content/store.js'
import type { ContentType } from '../content/registry.js'
import type { ContentRow } from '../content/rows.js'
import { pathParents } from '../content/paths.js'
import { allowedRolesAndUsers, type AccessRow } from './permissions.js'

/** The columns access is decided from, and where a row is (not its fields: a tenth of the read's time on 10,000 pages). */
type Read = AccessRow & Pick<ContentRow, 'uid' | 'parent_uid' | 'path' | 'portal_type'> & { allowed: string[] | null }
const COLUMNS = ['uid', 'parent_uid', 'path', 'portal_type', 'review_state', 'owner', 'local_roles', 'local_roles_block']

/**
 * Recomputes `allowedRolesAndUsers` of an object and everything inside it
 * after what decides it changed above or in them (a local role granted, an
 * inheritance blocked, a subtree moved), set-based: one statement reads the
 * subtree with its ancestors and present catalogue values, one UPDATE writes
 * the values that changed, one INSERT records their index operations (and the
 * write's notification names them: more than 150 is a change of all). A
 * sharing change on a folder of 10,000 objects is these few statements.
 *
 * Inside `write` (ContentStore.write), after the rows that decide access
 * were written; `typeOf`: the content type of a row. Answers the uids whose
 * value changed. The resident catalogue follows the catalogue table by itself.
 */
export async function reindexSubtreeAccess (write: Pick<Write, 'tx' | 'reindexed'>, rootPath: string, typeOf: (row: Pick<ContentRow, 'portal_type' | 'path'>) => ContentType): Promise<string[]> {
  // The folders above, held until the commit (as a write's guard holds them, core/content/access-guard.ts): a sharing
  // change of one of them under way is waited for, and the read below (a statement of its own) sees its roles; one that
  // comes later waits for this transaction, and then sees its rows.
  await write.tx.query('SELECT 1 FROM content WHERE path = ANY($1) AND path <> $2 ORDER BY path FOR SHARE', [pathParents(rootPath), rootPath])
  const { rows } = await write.tx.query<Read>(`SELECT ${COLUMNS.map(c => `content.${c}`).join(', ')}, catalog."allowedRolesAndUsers" AS allowed
    FROM content LEFT JOIN catalog ON catalog.uid = content.uid
    WHERE content.path = ANY($1) OR content.path LIKE $2 || '/%'
    ORDER BY content.path`, [pathParents(rootPath), rootPath === '/' ? '' : escapeLike(rootPath)])
  const lineages = new Map<string, Read[]>()
  const changed: Array<{ uid: string, allowed: string[] }> = []
  // Path order: a row's parent comes before it, so its lineage is its parent's and itself.
  for (const row of rows) {
    const parent = row.parent_uid === null ? undefined : lineages.get(row.parent_uid)
    const lineage = [...(parent ?? []), row]
    lineages.set(row.uid, lineage)
    if (row.allowed === null || !(row.path === rootPath || row.path.startsWith(rootPath === '/' ? '/' : `${rootPath}/`))) continue
    const allowed = allowedRolesAndUsers(typeOf(row), row, lineage)
    if (!sameSet(allowed, row.allowed)) changed.push({ uid: row.uid, allowed })
  }
  if (changed.length > 0) {
    // Lists travel as JSON: an array of arrays would not unnest by row.
    await write.tx.query(`UPDATE catalog SET "allowedRolesAndUsers" = ARRAY(SELECT jsonb_array_elements_text(r.allowed))
      FROM unnest($1::uuid[], $2::jsonb[]) AS r(uid, allowed) WHERE catalog.uid = r.uid`,
    [changed.map(c => c.uid), changed.map(c => JSON.stringify(c.allowed))])
  }
  const root = rows.find(row => row.path === rootPath)
  await write.reindexed(changed.map(c => c.uid), root === undefined ? [] : [root.uid])
  return changed.map(c => c.uid)
}

const sameSet = (a: readonly string[], b: readonly string[]): boolean => {
  const set = new Set(b)
  return a.length === set.size && a.every(v => set.has(v))
}
