import { randomUUID } from 'node:crypto'
import type { Catalog } from './catalog.js'
import { escapeLike, type Db, type Queryable } from './db.js'
import { Conflict, WorkflowException } from './errors.js'
import { foldText, pathParents, type IndexableObject } from './indexes.js'
import type { ContentType, ContentTypeRegistry } from './registry.js'
import { allows, rolesOn, userPrincipal, type LocalRoles, type PermissionName, type Principal } from './security.js'
import type { CheckedWrite } from './validation.js'
import { Permission } from './security.js'
import { rolesFor, type Transition } from './workflow.js'

export interface ContentRow {
  uid: string
  parent_uid: string | null
  id: string
  path: string
  portal_type: string
  review_state: string | null
  owner: string | null
  creators: string[]
  local_roles: LocalRoles
  position: number
  created: Date
  modified: Date
  data: Record<string, unknown>
}

/** An object with its ancestors, root first: what permission checks need. */
export interface Located {
  obj: ContentRow
  lineage: ContentRow[]
  type: ContentType
}

export interface HistoryEntry { action: string | null, actor: string | null, comments: string, review_state: string, time: Date }

/** Plone's URL normaliser, for ids made from titles: ASCII, lower case, dashes. */
export function idFromTitle (title: string): string {
  const id = foldText(title).replace(/['"]/g, '').replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 200).replace(/-+$/, '')
  return id === '' ? 'item' : id
}

/**
 * Where index operations go (the Solr indexer, plugins/app/solr.ts). While it
 * records, every write adds its operations to `index_outbox` in its own
 * transaction; once that transaction committed, `deliver` sends them.
 */
export interface IndexOperations {
  recording: () => boolean
  /** Sends the pending operations of these objects; never throws (what fails stays in the outbox). */
  deliver: (uids: string[]) => Promise<void>
}

type IndexOp = 'index' | 'unindex'
/** Records index operations inside a write's transaction. */
type RecordOperation = (op: IndexOp, uids: string[]) => Promise<void>

const COLUMNS = 'uid, parent_uid, id, path, portal_type, review_state, owner, creators, local_roles, position, created, modified, data'

/**
 * The content tree in PostgreSQL: traversal, permissions, and every write,
 * each in one transaction together with its catalogue row and workflow
 * history, so that a failed write changes nothing.
 */
export class ContentStore {
  private indexOperations: IndexOperations | null = null

  constructor (private readonly db: Db, private readonly types: ContentTypeRegistry, private readonly catalog: Catalog) {}

  /** Connects the indexer: from now on writes record (and deliver) their index operations. */
  useIndexOperations (operations: IndexOperations): void {
    this.indexOperations = operations
  }

  /**
   * Runs a write in one transaction with what it must record in the outbox;
   * after the commit, the request delivers them (bounded by index_timeout,
   * and never failing the write).
   */
  private async writing<T> (fn: (tx: Queryable, record: RecordOperation) => Promise<T>, recordAlways = false): Promise<T> {
    const operations = this.indexOperations?.recording() === true ? this.indexOperations : null
    const touched: string[] = []
    const result = await this.db.transaction(async tx => await fn(tx, async (op, uids) => {
      if ((operations === null && !recordAlways) || uids.length === 0) return
      await tx.query('INSERT INTO index_outbox (uid, op) SELECT unnest($1::uuid[]), $2', [uids, op])
      touched.push(...uids)
    }))
    if (operations !== null && touched.length > 0) await operations.deliver([...new Set(touched)])
    return result
  }

  /**
   * The indexable form of these objects as they are now (with their
   * lineages read in one query); objects that no longer exist are absent.
   */
  async indexables (uids: string[], q: Queryable = this.db): Promise<Map<string, { type: ContentType, indexable: IndexableObject }>> {
    const { rows } = await q.query<ContentRow>(`SELECT ${COLUMNS} FROM content WHERE uid = ANY($1::uuid[]) AND path <> '/'`, [uids])
    const paths = [...new Set(rows.flatMap(r => pathParents(r.path)))]
    const { rows: ancestors } = await q.query<ContentRow>(`SELECT ${COLUMNS} FROM content WHERE path = ANY($1)`, [paths])
    const byPath = new Map(ancestors.map(r => [r.path, r]))
    const result = new Map<string, { type: ContentType, indexable: IndexableObject }>()
    for (const row of rows) {
      const lineage = pathParents(row.path).map(p => byPath.get(p)).filter((r): r is ContentRow => r !== undefined)
      result.set(row.uid, { type: this.typeOf(row), indexable: this.indexable(row, lineage) })
    }
    return result
  }

  typeOf (obj: ContentRow): ContentType {
    const type = this.types.get(obj.portal_type)
    if (type === undefined) throw new Error(`Object ${obj.path} has the unknown type '${obj.portal_type}'`)
    return type
  }

  /** The object at `path` with its ancestors; when it does not exist, the nearest existing ancestor's lineage. */
  async locate (path: string, q: Queryable = this.db): Promise<{ found: Located | null, nearest: ContentRow[] }> {
    const { rows } = await q.query<ContentRow>(`SELECT ${COLUMNS} FROM content WHERE path = ANY($1) ORDER BY length(path)`, [pathParents(path)])
    // A gap in the chain means a missing ancestor: only the unbroken prefix counts.
    const lineage: ContentRow[] = []
    for (const expected of pathParents(path)) {
      const row = rows.find(r => r.path === expected)
      if (row === undefined) break
      lineage.push(row)
    }
    const obj = lineage[lineage.length - 1]
    if (obj === undefined || obj.path !== path) return { found: null, nearest: lineage }
    return { found: { obj, lineage, type: this.typeOf(obj) }, nearest: lineage }
  }

  rolesOn (who: Principal, lineage: ContentRow[]): Set<string> {
    const obj = lineage[lineage.length - 1]
    return rolesOn(who, obj.owner, lineage.map(o => o.local_roles))
  }

  can (who: Principal, permission: PermissionName, located: Pick<Located, 'lineage' | 'type'>): boolean {
    const obj = located.lineage[located.lineage.length - 1]
    return allows(rolesFor(permission, located.type.workflow, obj.review_state), this.rolesOn(who, located.lineage))
  }

  /** Plone's allowedRolesAndUsers: the roles that may View, plus `user:<id>` of every local holder of one. */
  allowedRolesAndUsers (type: ContentType, obj: ContentRow, lineage: ContentRow[]): string[] {
    const viewers = rolesFor(Permission.View, type.workflow, obj.review_state)
    if (viewers.includes('Anonymous')) return ['Anonymous']
    const allowed = new Set<string>(viewers.filter(r => r !== 'Owner'))
    if (viewers.includes('Owner') && obj.owner !== null) allowed.add(userPrincipal(obj.owner))
    for (const holder of lineage) {
      for (const [principal, roles] of Object.entries(holder.local_roles)) {
        if (roles.some(r => viewers.includes(r))) allowed.add(principal)
      }
    }
    return [...allowed]
  }

  /** What the indexes (catalogue and Solr) see of an object; `lineage` is its ancestors and itself. */
  indexable (obj: ContentRow, lineage: ContentRow[]): IndexableObject {
    const type = this.typeOf(obj)
    return {
      uid: obj.uid,
      id: obj.id,
      path: obj.path,
      portal_type: obj.portal_type,
      type_title: type.title,
      folderish: type.folderish,
      review_state: obj.review_state,
      creators: obj.creators,
      created: obj.created,
      modified: obj.modified,
      position: obj.position,
      data: obj.data,
      allowedRolesAndUsers: this.allowedRolesAndUsers(type, obj, lineage)
    }
  }

  private async reindex (tx: Queryable, record: RecordOperation, obj: ContentRow, lineage: ContentRow[]): Promise<void> {
    if (obj.path === '/') return // the site root is not catalogued (as in Plone)
    await this.catalog.index(tx, this.typeOf(obj), this.indexable(obj, lineage))
    await record('index', [obj.uid])
  }

  private async saveImages (tx: Queryable, uid: string, write: CheckedWrite): Promise<void> {
    for (const [field, image] of write.images) {
      await tx.query(`INSERT INTO blobs (uid, field, bytes) VALUES ($1, $2, $3)
        ON CONFLICT (uid, field) DO UPDATE SET bytes = EXCLUDED.bytes`, [uid, field, image.bytes])
    }
    for (const [field, value] of Object.entries(write.values)) {
      if (value === null) await tx.query('DELETE FROM blobs WHERE uid = $1 AND field = $2', [uid, field])
    }
  }

  /** Creates an object in `parent`; its id comes from the title unless given (409 when a given id is taken). */
  async create (parent: Located, type: ContentType, write: CheckedWrite, who: Principal): Promise<Located> {
    const data = Object.fromEntries(Object.entries(write.values).filter(([, v]) => v !== null))
    const base = write.id ?? idFromTitle(String(data.title ?? type.name))
    return await this.writing(async (tx, record) => {
      // Creates in one folder take turns: the id and the position depend on the siblings.
      await tx.query('SELECT 1 FROM content WHERE uid = $1 FOR UPDATE', [parent.obj.uid])
      const { rows: taken } = await tx.query<{ id: string }>(
        "SELECT id FROM content WHERE parent_uid = $1 AND (id = $2 OR id LIKE $2 || '-%')", [parent.obj.uid, base])
      const used = new Set(taken.map(r => r.id))
      if (write.id !== undefined && used.has(write.id)) throw Conflict(`The id '${write.id}' is taken in ${parent.obj.path}.`)
      let id = base
      for (let n = 1; used.has(id); n++) id = `${base}-${n}`
      const now = new Date()
      const { rows: [obj] } = await tx.query<ContentRow>(`INSERT INTO content (uid, parent_uid, id, path, portal_type, review_state, owner, creators, position, created, modified, data)
        VALUES ($1, $2, $3, $4, $5, $6, $7, $8, (SELECT COALESCE(max(position) + 1, 0) FROM content WHERE parent_uid = $2), $9, $9, $10)
        RETURNING ${COLUMNS}`, [
        randomUUID(), parent.obj.uid, id, parent.obj.path === '/' ? `/${id}` : `${parent.obj.path}/${id}`, type.name,
        type.workflow?.initial ?? null, who.userId, who.userId !== null ? [who.userId] : [], now, JSON.stringify(data)
      ])
      if (type.workflow !== null) {
        await tx.query(`INSERT INTO workflow_history (uid, seq, action, actor, review_state, time) VALUES ($1, 0, NULL, $2, $3, $4)`,
          [obj.uid, who.userId, type.workflow.initial, now])
      }
      await this.saveImages(tx, obj.uid, write)
      const lineage = [...parent.lineage, obj]
      await this.reindex(tx, record, obj, lineage)
      return { obj, lineage, type }
    })
  }

  /** Applies checked changes; `expectedModified` makes it conditional (If-Match). */
  async update (located: Located, write: CheckedWrite, expectedModified?: Date): Promise<Located> {
    return await this.writing(async (tx, record) => {
      const data: Record<string, unknown> = { ...located.obj.data }
      for (const [key, value] of Object.entries(write.values)) {
        if (value === null) delete data[key]
        else data[key] = value
      }
      const { rows: [obj] } = await tx.query<ContentRow>(`UPDATE content SET data = $2, modified = greatest(date_trunc('milliseconds', now()), modified + interval '1 millisecond')
        WHERE uid = $1 AND ($3::timestamptz IS NULL OR modified = $3) RETURNING ${COLUMNS}`,
      [located.obj.uid, JSON.stringify(data), expectedModified ?? null])
      if (obj === undefined) throw Conflict('The object was changed by someone else since you read it (If-Match no longer matches).')
      await this.saveImages(tx, obj.uid, write)
      const lineage = [...located.lineage.slice(0, -1), obj]
      await this.reindex(tx, record, obj, lineage)
      return { obj, lineage, type: located.type }
    })
  }

  async remove (located: Located): Promise<void> {
    await this.writing(async (tx, record) => {
      // Children, catalogue rows, history and blobs go with it (ON DELETE CASCADE); each leaves Solr too.
      const { rows } = await tx.query<{ uid: string }>("SELECT uid FROM content WHERE path = $1 OR path LIKE $2 || '/%'",
        [located.obj.path, escapeLike(located.obj.path)])
      await record('unindex', rows.map(r => r.uid))
      await tx.query('DELETE FROM content WHERE uid = $1', [located.obj.uid])
    })
  }

  /** Transitions the caller may take on the object now. */
  availableTransitions (located: Located, who: Principal): Array<[string, Transition]> {
    const workflow = located.type.workflow
    if (workflow === null) return []
    return Object.entries(workflow.transitions).filter(([, t]) =>
      t.from.includes(located.obj.review_state ?? '') && this.can(who, t.guard, located))
  }

  async transition (located: Located, name: string, who: Principal, comments: string, dates: { effective?: string, expires?: string }): Promise<{ located: Located, entry: HistoryEntry }> {
    const available = this.availableTransitions(located, who).find(([id]) => id === name)
    if (available === undefined) throw WorkflowException(`The transition '${name}' is not available for ${located.obj.path} in the state '${located.obj.review_state ?? ''}'.`)
    const [, transition] = available
    return await this.writing(async (tx, record) => {
      const data: Record<string, unknown> = { ...located.obj.data }
      if (dates.effective !== undefined) data.effective = dates.effective
      if (dates.expires !== undefined) data.expires = dates.expires
      // As in Plone, the first transition without a publishing date sets it to now.
      if (data.effective === undefined && transition.to === 'published') data.effective = new Date().toISOString()
      const { rows: [obj] } = await tx.query<ContentRow>(`UPDATE content SET review_state = $2, data = $3, modified = greatest(date_trunc('milliseconds', now()), modified + interval '1 millisecond')
        WHERE uid = $1 AND review_state IS NOT DISTINCT FROM $4 RETURNING ${COLUMNS}`, [located.obj.uid, transition.to, JSON.stringify(data), located.obj.review_state])
      if (obj === undefined) throw Conflict('The object changed state while the transition ran; read it again.')
      const entry: HistoryEntry = { action: name, actor: who.userId, comments, review_state: transition.to, time: obj.modified }
      await tx.query(`INSERT INTO workflow_history (uid, seq, action, actor, comments, review_state, time)
        VALUES ($1, (SELECT COALESCE(max(seq) + 1, 0) FROM workflow_history WHERE uid = $1), $2, $3, $4, $5, $6)`,
      [obj.uid, entry.action, entry.actor, entry.comments, entry.review_state, entry.time])
      const lineage = [...located.lineage.slice(0, -1), obj]
      await this.reindex(tx, record, obj, lineage)
      return { located: { obj, lineage, type: located.type }, entry }
    })
  }

  async history (uid: string): Promise<HistoryEntry[]> {
    const { rows } = await this.db.query<HistoryEntry>('SELECT action, actor, comments, review_state, time FROM workflow_history WHERE uid = $1 ORDER BY seq', [uid])
    return rows
  }

  async image (uid: string, field: string): Promise<Buffer | null> {
    const { rows } = await this.db.query<{ bytes: Uint8Array }>('SELECT bytes FROM blobs WHERE uid = $1 AND field = $2', [uid, field])
    return rows[0] === undefined ? null : Buffer.from(rows[0].bytes)
  }

  /**
   * Creates the site root and the `talks` folder on first start. Logged-in
   * users are Contributors in `talks`: they may submit talks (the seed's
   * "authenticated clients can create talks").
   */
  async ensureSite (): Promise<void> {
    await this.writing(async (tx, record) => {
      await tx.query('SELECT pg_advisory_xact_lock(7340003)')
      const { rowCount } = await tx.query("SELECT 1 FROM content WHERE path = '/'")
      if (rowCount > 0) return
      const now = new Date()
      const rootUid = randomUUID()
      await tx.query(`INSERT INTO content (uid, parent_uid, id, path, portal_type, review_state, owner, creators, created, modified, data)
        VALUES ($1, NULL, '', '/', 'Plone Site', NULL, 'admin', '{admin}', $2, $2, $3)`, [rootUid, now, JSON.stringify({ title: 'Site' })])
      const root = (await this.locate('/', tx)).found!
      const { rows: [talks] } = await tx.query<ContentRow>(`INSERT INTO content (uid, parent_uid, id, path, portal_type, review_state, owner, creators, local_roles, created, modified, data)
        VALUES ($1, $2, 'talks', '/talks', 'folder', 'published', 'admin', '{admin}', $3, $4, $4, $5) RETURNING ${COLUMNS}`,
      [randomUUID(), rootUid, JSON.stringify({ Authenticated: ['Contributor'] }), now, JSON.stringify({ title: 'Talks', effective: now.toISOString() })])
      await tx.query(`INSERT INTO workflow_history (uid, seq, action, actor, review_state, time) VALUES ($1, 0, NULL, 'admin', 'published', $2)`, [talks.uid, now])
      await this.reindex(tx, record, talks, [...root.lineage, talks])
    }, true) // at first start, before the indexer is connected: Solr gets the site whenever it is switched on
  }
}
