import type { IndexableObject } from '../catalog/indexes.js'
import type { Db, Queryable } from '../db/db.js'
import { readImage } from './blobs.js'
import { indexableOf } from './indexable.js'
import type { KeptObjects } from './kept-objects.js'
import { LIVE_LOCK_JOIN, splitLiveLock, type LiveLockColumns, type LockRow } from './locks.js'
import { pathParents } from './paths.js'
import type { ContentType, ContentTypeRegistry } from './registry.js'
import { CONTENT_COLUMNS as COLUMNS, type ContentRow, type Located, type Traversal } from './rows.js'

/** Traversal: a few texts that run on every request (core/db/queryable.ts). */
const PREPARED = { prepared: true }

/**
 * The reads of the content tree: an object at a path with its ancestors
 * (traversal), objects by UID, their indexable forms and image bytes; what a
 * GET shows read from what this process keeps since the last write when it
 * keeps it (`kept`, set by ContentStore.keepReads). The writes are ContentStore's.
 */
export class ContentReads {
  protected kept: KeptObjects | null = null

  constructor (protected readonly db: Db, protected readonly types: ContentTypeRegistry) {}

  /**
   * The indexable form of these objects as they are now (with their
   * lineages read in one query); objects that no longer exist are absent.
   */
  async indexables (uids: string[], q: Queryable = this.db): Promise<Map<string, { type: ContentType, indexable: IndexableObject }>> {
    const result = new Map<string, { type: ContentType, indexable: IndexableObject }>()
    for (const [uid, located] of await this.locateMany(uids, q)) {
      if (located.obj.path !== '/') result.set(uid, { type: located.type, indexable: indexableOf(located) })
    }
    return result
  }

  /** These objects with their ancestors (two queries, whatever their number); objects that no longer exist are absent. */
  async locateMany (uids: string[], q: Queryable = this.db): Promise<Map<string, Located>> {
    const { rows } = await q.query<ContentRow>(`SELECT ${COLUMNS} FROM content WHERE uid = ANY($1::uuid[])`, [uids], PREPARED)
    const paths = [...new Set(rows.flatMap(r => pathParents(r.path)))]
    const { rows: ancestors } = await q.query<ContentRow>(`SELECT ${COLUMNS} FROM content WHERE path = ANY($1)`, [paths], PREPARED)
    const byPath = new Map(ancestors.map(r => [r.path, r]))
    const result = new Map<string, Located>()
    for (const obj of rows) {
      const lineage = pathParents(obj.path).map(p => byPath.get(p)).filter((r): r is ContentRow => r !== undefined)
      result.set(obj.uid, { obj, lineage, type: this.typeOf(obj) })
    }
    return result
  }

  typeOf (obj: Pick<ContentRow, 'portal_type' | 'path'>): ContentType {
    const type = this.types.get(obj.portal_type)
    if (type === undefined) throw new Error(`Object ${obj.path} has the unknown type '${obj.portal_type}'`)
    return type
  }

  /** The object at `path` with its ancestors; when it does not exist, the nearest existing ancestor's lineage. */
  async locate (path: string, q: Queryable = this.db): Promise<Traversal<Located>> {
    return this.traversalOf(path, await this.lineageRows(path, q))
  }

  private async lineageRows (path: string, q: Queryable): Promise<Array<{ row: ContentRow, lock: LockRow | null }>> {
    const { rows } = await q.query<ContentRow & LiveLockColumns>(`SELECT ${COLUMNS}, live_lock.* FROM content ${LIVE_LOCK_JOIN}
      WHERE path = ANY($1) ORDER BY length(path)`, [pathParents(path)], PREPARED)
    return rows.map(splitLiveLock)
  }

  /**
   * `locate` for a request that only shows what it finds (GET, HEAD): the
   * object as kept since the last write, when it is (`keepReads`); else, when
   * its parent is kept, the object's row alone below it.
   */
  async locateForReading (path: string): Promise<Traversal<Located>> {
    if (this.kept === null) return await this.locate(path)
    return await this.kept.read(path, {
      whole: async parentPath => {
        const read = await this.lineageRows(path, this.db)
        return { traversal: this.traversalOf(path, read), parent: this.traversalOf(parentPath, read) }
      },
      below: async parent => await this.locateBelow(path, parent)
    })
  }

  /**
   * The object at `path` read alone, below its parent as located before (a
   * statement of one row where `locate` reads the whole lineage); null when
   * the row found is not that parent's child (the parent was replaced meanwhile).
   */
  private async locateBelow (path: string, parent: Located): Promise<Traversal<Located> | null> {
    const { rows } = await this.db.query<ContentRow & LiveLockColumns>(`SELECT ${COLUMNS}, live_lock.* FROM content ${LIVE_LOCK_JOIN}
      WHERE path = $1`, [path], PREPARED)
    if (rows.length === 0) return { found: null, nearest: parent.lineage }
    const { row: obj, lock } = splitLiveLock(rows[0])
    if (obj.parent_uid !== parent.obj.uid) return null
    const lineage = [...parent.lineage, obj]
    return { found: { obj, lineage, type: this.typeOf(obj), lock }, nearest: lineage }
  }

  /** The lineage of `path` from the rows read of it and its ancestors (a gap in the chain means a missing ancestor). */
  private traversalOf (path: string, read: Array<{ row: ContentRow, lock: LockRow | null }>): Traversal<Located> {
    const lineage: ContentRow[] = []
    let lock: LockRow | null = null
    for (const expected of pathParents(path)) {
      const found = read.find(r => r.row.path === expected)
      if (found === undefined) break
      lineage.push(found.row)
      lock = found.lock
    }
    const obj = lineage[lineage.length - 1]
    if (obj === undefined || obj.path !== path) return { found: null, nearest: lineage }
    return { found: { obj, lineage, type: this.typeOf(obj), lock }, nearest: lineage }
  }

  async image (uid: string, field: string): Promise<Buffer | null> {
    return await readImage(this.db, uid, field)
  }
}
