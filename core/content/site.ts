import { randomUUID } from 'node:crypto'
import { ADMIN_USER } from '../security/users.js'
import type { ContentTypeRegistry } from './registry.js'
import { CONTENT_COLUMNS, type ContentRow } from './rows.js'
import { HOME_PAGE_BLOCKS } from './site-root.js'
import type { ContentStore } from './store.js'

/**
 * The site's structure, from the content types' declarations: the site root
 * (with its home page's blocks) and the folder each type declares as its `container` (the talk's `talks`),
 * created where missing — at first start, and for a type added later, at the
 * next. Owned by `admin`; containers are published at once.
 */
export async function ensureSite (store: ContentStore, types: ContentTypeRegistry): Promise<void> {
  await store.write(async ({ tx, reindex }) => {
    await tx.query('SELECT pg_advisory_xact_lock(7340003)')
    const now = new Date()
    await tx.query(`INSERT INTO content (uid, parent_uid, id, path, portal_type, review_state, owner, creators, created, modified, data)
      VALUES ($1, NULL, '', '/', $2, NULL, $3, ARRAY[$3], $4, $4, $5) ON CONFLICT (path) DO NOTHING`,
    [randomUUID(), types.siteRoot.name, ADMIN_USER, now, JSON.stringify({ title: 'Site', ...HOME_PAGE_BLOCKS })])
    await tx.query("UPDATE content SET data = data || $1::jsonb WHERE path = '/' AND NOT data ? 'blocks'", [JSON.stringify(HOME_PAGE_BLOCKS)])
    const root = (await store.locate('/', tx)).found!
    for (const type of types.types.values()) {
      const container = type.declaration.container
      if (container === undefined) continue
      const folderType = types.get(container.type)
      if (folderType === undefined || !folderType.folderish) throw new Error(`Content type '${type.name}': its container's type '${container.type}' is not a folderish type`)
      const { rows: [folder] } = await tx.query<ContentRow>(`INSERT INTO content (uid, parent_uid, id, path, portal_type, review_state, owner, creators, local_roles, created, modified, data)
        VALUES ($1, $2, $3, $4, $5, 'published', $6, ARRAY[$6], $7, $8, $8, $9) ON CONFLICT (path) DO NOTHING RETURNING ${CONTENT_COLUMNS}`,
      [randomUUID(), root.obj.uid, container.id, `/${container.id}`, folderType.name, ADMIN_USER, JSON.stringify(container.localRoles ?? {}), now,
        JSON.stringify({ title: container.title, effective: now.toISOString() })])
      if (folder === undefined) continue // it exists already
      await tx.query('INSERT INTO workflow_history (uid, seq, action, actor, review_state, time) VALUES ($1, 0, NULL, $2, \'published\', $3)', [folder.uid, ADMIN_USER, now])
      await reindex(folder, [...root.lineage, folder])
    }
  }, true) // at first start, before the indexer is connected: Solr gets the site whenever it is switched on
}
