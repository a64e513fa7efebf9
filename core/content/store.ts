import { randomUUID } from 'node:crypto'
import type { Catalog } from '../catalog/catalog.js'
import { CATALOG_CHANGED } from '../catalog/kept-results.js'
import { notification } from '../db/notifications.js'
import type { IndexableObject } from '../catalog/indexes.js'
import { escapeLike, type Db, type Queryable } from '../db/db.js'
import { Conflict, NotFound } from '../errors.js'
import type { IndexOp, Outbox } from '../indexing/outbox.js'
import type { Principal } from '../security/roles.js'
import { OneAtATime } from '../one-at-a-time.js'
import { Pacer, runsOf } from '../pacing.js'
import { readImage } from './blobs.js'
import { indexableOf } from './indexable.js'
import type { KeptObjects } from './kept-objects.js'
import type { ContentType, ContentTypeRegistry } from './registry.js'
import { LIVE_LOCK_JOIN, splitLiveLock, type LiveLockColumns, type LockRow } from './locks.js'
import { CONTENT_COLUMNS as COLUMNS, idFromTitle, withChanges, type ContentRow, type HistoryEntry, type Located, type Traversal } from './rows.js'
import { pathParents } from './paths.js'
import { Statement } from './statement.js'
import type { CheckedWrite } from './validation.js'

/** A change of an existing object: its new state computed from the current one (ContentStore.changeOptimistically). */
type ObjectChange = (current: Located) => Promise<{ changes: Partial<Pick<ContentRow, 'data' | 'review_state'>>, write?: CheckedWrite, history?: HistoryEntry }>

/** Creates with one title racing in one folder: each lost race means a rival won, so this bounds the rivals one create waits out. */
const MAX_ID_ATTEMPTS = 100
/** Imports whose ids cross another's: how often one that PostgreSQL ended as a deadlock starts over. */
const MAX_DEADLOCK_ATTEMPTS = 5
/** The first key of the per-folder advisory lock under which an import looks for free ids. */
const IMPORT_LOCK_CLASS = 7340020
/** Traversal and the write of an object: a few texts that run on every request (core/db/queryable.ts). */
const PREPARED = { prepared: true }

/** The SQL types of CONTENT_COLUMNS, in their order. */
const CONTENT_COLUMN_TYPES = ['uuid', 'uuid', 'text', 'text', 'text', 'text', 'text', 'text[]', 'jsonb', 'integer', 'timestamptz', 'timestamptz', 'jsonb']
const CREATORS = 7
const DATA = 12

/** A row's values in the order of CONTENT_COLUMNS, as parameters (JSON columns as text). */
const contentValues = (obj: ContentRow): unknown[] => [obj.uid, obj.parent_uid, obj.id, obj.path, obj.portal_type, obj.review_state, obj.owner,
  obj.creators, JSON.stringify(obj.local_roles), obj.position, obj.created, obj.modified, JSON.stringify(obj.data)]

/** Whether a write failed because the object's id (or path) is taken in its folder. */
const idTaken = (err: unknown): boolean => {
  const { code, constraint } = err as { code?: string, constraint?: string }
  return code === '23505' && (constraint === 'content_parent_id' || constraint === 'content_path_key')
}

/**
 * A new object of `type` in `parent` as a create makes it, not written yet:
 * its fields from the checked write, its id (the explicit one, else from its
 * title), the caller as owner and creator, the workflow's initial state.
 */
export function newObject (parent: Located, type: ContentType, write: CheckedWrite, who: Principal, position: number, now: Date): Located {
  const data = Object.fromEntries(Object.entries(write.values).filter(([, v]) => v !== null))
  const obj: ContentRow = {
    uid: randomUUID(),
    parent_uid: parent.obj.uid,
    id: '',
    path: '',
    portal_type: type.name,
    review_state: type.workflow?.initial ?? null,
    owner: who.userId,
    creators: who.userId !== null ? [who.userId] : [],
    local_roles: {},
    position,
    created: now,
    modified: now,
    data
  }
  // Nobody can have locked an object that did not exist.
  return renamed({ obj, lineage: [...parent.lineage, obj], type, lock: null }, parent, write.id ?? idFromTitle(String(data.title ?? type.name)))
}

/** The object under another id in `parent`. */
function renamed (located: Located, parent: Located, id: string): Located {
  return withChanges(located, { id, path: parent.obj.path === '/' ? `/${id}` : `${parent.obj.path}/${id}` })
}

/** The history entry of an object's creation (none without a workflow). */
export function creationEntry ({ obj, type }: Located, who: Principal): HistoryEntry | undefined {
  return type.workflow !== null ? { action: null, actor: who.userId, comments: '', review_state: type.workflow.initial, time: obj.created } : undefined
}

/** 404 for a create whose folder went while the request ran. */
const folderGone = (parent: Located): Error => NotFound(parent.obj.path, `${parent.obj.path} was deleted while the request ran.`)

/**
 * The statement that hands out the next `count` positions (an SQL integer
 * expression) of the folder `folder` names (a condition on `content folder`),
 * from its counter, and returns the first of them: a short write of an
 * unlogged row (migration 009), so that creates in a folder run side by
 * side. A missing counter starts again from the folder's highest position
 * (after a crash: the table is unlogged). No row when there is no such folder.
 */
const reservePosition = (folder: string, count: string): string => `INSERT INTO folder_positions (parent_uid, next)
  SELECT uid, (SELECT COALESCE(max(position), -1) + 1 + ${count} FROM content child WHERE child.parent_uid = folder.uid) FROM content folder WHERE ${folder}
  ON CONFLICT (parent_uid) DO UPDATE SET next = folder_positions.next + ${count} RETURNING next - ${count} AS position`

/**
 * Where index operations go once recorded (the Solr indexer, or the queue
 * with asynchronous indexing). While it records, every write adds its
 * operations to the outbox in its own transaction; once that transaction
 * committed, `deliver` sends them.
 */
export interface IndexOperations {
  recording: () => boolean
  /** Sends the pending operations of these objects; never throws (what fails stays in the outbox). */
  deliver: (uids: string[]) => Promise<void>
}

/** A folder as a create in it reads it: with the position its new object takes (one create per read; an import's first of its consecutive ones). */
export type Folder = Located & { nextPosition: number }

/** One object of a bulk import (`createMany`): built by `newObject`, with its history from creation on, oldest first. */
export interface NewObject { located: Located, write: CheckedWrite, history: HistoryEntry[] }

/** What a write may do inside its transaction besides its own SQL. */
export interface Write {
  tx: Queryable
  /** Writes the object's catalogue row and records its index operation. */
  reindex: (obj: ContentRow, lineage: ContentRow[]) => Promise<void>
  /** `reindex` of many objects: their catalogue rows and index operations in a few statements. */
  reindexMany: (objects: Located[]) => Promise<void>
  /** Records that these objects leave the indexes. */
  unindex: (uids: string[]) => Promise<void>
}

/**
 * The content tree in PostgreSQL: traversal and every write, each in one
 * transaction together with its catalogue row, its index operations and
 * its image bytes, so that a failed write changes nothing. Permissions are
 * core/security/permissions.ts, workflow transitions core/content/transitions.ts.
 */
export class ContentStore {
  private indexOperations: IndexOperations | null = null
  private readonly catalogListeners: Array<(columns?: readonly string[]) => void> = []
  private kept: KeptObjects | null = null
  /**
   * The key of this process's catalogue notifications: its own writes are
   * applied by its listeners when they commit, so what it keeps need not be
   * dropped again when their echo arrives a moment later.
   */
  readonly writerId = randomUUID()
  /** This process's changes of one object, by uid: one at a time (`changeOptimistically`). */
  private readonly changing = new OneAtATime()

  constructor (private readonly db: Db, private readonly types: ContentTypeRegistry, private readonly catalog: Catalog, private readonly outbox: Outbox) {}

  /**
   * Called after every committed write that changed the catalogue, before the
   * request answers (what this process keeps of the catalogue is stale then;
   * other processes hear of it through a notification sent in the write), with
   * the catalogue columns it changed when it knows them (an update of one object).
   */
  onCatalogChange (listener: (columns?: readonly string[]) => void): void {
    this.catalogListeners.push(listener)
  }

  /** Keeps what `locateForReading` finds (core/content/kept-objects.ts), stale from this process's next write on. */
  keepReads (kept: KeptObjects): void {
    this.kept = kept
    this.onCatalogChange(() => { kept.changed() })
  }

  /** Connects the indexer: from now on writes record (and deliver) their index operations. */
  useIndexOperations (operations: IndexOperations): void {
    this.indexOperations = operations
  }

  /**
   * Runs a write in one transaction with what it must record in the outbox;
   * after the commit, the request delivers them (bounded by index_timeout,
   * and never failing the write). `recordAlways`: record even before an
   * indexer is connected (the site's first objects, for whenever Solr is switched on).
   */
  async write<T> (fn: (write: Write) => Promise<T>, recordAlways = false): Promise<T> {
    const operations = this.indexOperations?.recording() === true ? this.indexOperations : null
    const touched: string[] = []
    let catalogChanged = false
    const result = await this.db.transaction(async tx => {
      const record = async (op: IndexOp, uids: string[]): Promise<void> => {
        if (uids.length > 0 && !catalogChanged) {
          catalogChanged = true
          await this.db.notifications.notify(tx, CATALOG_CHANGED, this.writerId)
        }
        if (operations === null && !recordAlways) return
        await this.outbox.record(tx, op, uids)
        touched.push(...uids)
      }
      const reindexMany = async (objects: Located[]): Promise<void> => {
        // The site root is not catalogued (as in Plone).
        const catalogued = objects.filter(({ obj }) => obj.path !== '/')
        if (catalogued.length === 0) return
        if (catalogued.length === 1) {
          const [located] = catalogued
          await this.catalog.index(tx, located.type, indexableOf(located))
        } else {
          await this.catalog.indexMany(tx, catalogued.map(located => ({ type: located.type, obj: indexableOf(located) })))
        }
        await record('index', catalogued.map(({ obj }) => obj.uid))
      }
      return await fn({
        tx,
        reindex: async (obj, lineage) => { await reindexMany([{ obj, lineage, type: this.typeOf(obj) }]) },
        reindexMany,
        unindex: async uids => { await record('unindex', uids) }
      })
    })
    if (catalogChanged) for (const listener of this.catalogListeners) listener()
    if (operations !== null && touched.length > 0) await operations.deliver([...new Set(touched)])
    return result
  }

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

  typeOf (obj: ContentRow): ContentType {
    const type = this.types.get(obj.portal_type)
    if (type === undefined) throw new Error(`Object ${obj.path} has the unknown type '${obj.portal_type}'`)
    return type
  }

  /** The object at `path` with its ancestors; when it does not exist, the nearest existing ancestor's lineage. */
  async locate (path: string, q: Queryable = this.db): Promise<Traversal<Located>> {
    const { rows } = await q.query<ContentRow & LiveLockColumns>(`SELECT ${COLUMNS}, live_lock.* FROM content ${LIVE_LOCK_JOIN}
      WHERE path = ANY($1) ORDER BY length(path)`, [pathParents(path)], PREPARED)
    return this.traversalOf(path, rows.map(splitLiveLock))
  }

  /**
   * `locate` for a request that only shows what it finds (GET, HEAD): the
   * object as kept since the last write, when it is (`keepReads`).
   */
  async locateForReading (path: string): Promise<Traversal<Located>> {
    return this.kept === null ? await this.locate(path) : await this.kept.read(path, async () => await this.locate(path))
  }

  /**
   * `locate` for a create in the folder at `path`: the same statement hands out
   * the folder's next position (`reservePosition`, committed with the read), so
   * that a create is two round trips, this and its write. A POST refused after
   * it (not a folder, no permission, invalid) leaves its position unused:
   * positions in a folder are unique and ordered, not dense, as after a delete.
   * `count`: how many consecutive positions to hand out (a bulk import's);
   * `nextPosition` is the first.
   */
  async locateFolder (path: string, count = 1): Promise<Traversal<Folder>> {
    const { rows } = await this.db.query<ContentRow & LiveLockColumns & { reserved_position: number | null }>(`WITH reserved AS (${reservePosition('path = $2', '$3::integer')})
      SELECT ${COLUMNS}, live_lock.*, (SELECT position FROM reserved) AS reserved_position FROM content ${LIVE_LOCK_JOIN}
      WHERE path = ANY($1) ORDER BY length(path)`, [pathParents(path), path, count], { ...PREPARED, changesNothingShown: true })
    const nextPosition = rows[0]?.reserved_position ?? null
    const { found, nearest } = this.traversalOf(path, rows.map(({ reserved_position: _, ...row }) => splitLiveLock(row)))
    return { found: found === null || nextPosition === null ? null : { ...found, nextPosition }, nearest }
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

  /**
   * Creates an object in `parent` at the position its read with
   * `locateFolder` handed out (else it takes the folder's next); its id comes
   * from the title unless given (409 when a given id is taken). Creates in one
   * folder run side by side: the id is tried and, when another create took it
   * meanwhile, the next free one.
   */
  async create (parent: Located | Folder, type: ContentType, write: CheckedWrite, who: Principal): Promise<Located> {
    const position = 'nextPosition' in parent ? parent.nextPosition : await this.nextPosition(parent)
    let created = newObject(parent, type, write, who, position, new Date())
    const base = created.obj.id
    for (let attempt = 0; ; attempt++) {
      const { obj } = created
      try {
        await this.writeOne(created, p => `INSERT INTO content (${COLUMNS})
          VALUES (${contentValues(obj).map(p).join(', ')}) RETURNING uid`, { history: creationEntry(created, who), write })
        return created
      } catch (err) {
        // The folder went while the request ran.
        if ((err as { code?: string }).code === '23503') throw folderGone(parent)
        if (!idTaken(err)) throw err
        if (write.id !== undefined) throw Conflict(`The id '${write.id}' is taken in ${parent.obj.path}.`)
        if (attempt >= MAX_ID_ATTEMPTS) throw Conflict(`No free id for '${base}' in ${parent.obj.path}; try again.`)
        const now = new Date()
        created = renamed({ ...created, obj: { ...obj, created: now, modified: now } }, parent, await this.freeId(this.db, parent, base))
      }
    }
  }

  /**
   * Creates the objects of a bulk import in `parent`, all or nothing, in one
   * transaction of a few statements whatever their number: their rows (in
   * their final state, with the positions `newObject` gave them), histories,
   * images, catalogue rows and index operations. An object whose id another
   * took (in the folder, or earlier in the batch) gets the next free one, as
   * `create` does; a taken explicit id is 409 and nothing is written.
   * Returns the objects as written, in their order.
   */
  async createMany (parent: Located, objects: NewObject[]): Promise<Located[]> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.writeMany(parent, objects)
      } catch (err) {
        const { code } = err as { code?: string }
        // The folder went while the request ran.
        if (code === '23503') throw folderGone(parent)
        // Two imports that wait for each other's ids: PostgreSQL ended one; it starts over and then sees the other's.
        if (code === '40P01' && attempt < MAX_DEADLOCK_ATTEMPTS) continue
        throw err
      }
    }
  }

  /** One attempt of `createMany`. */
  private async writeMany (parent: Located, objects: NewObject[]): Promise<Located[]> {
    return await this.write(async ({ tx, reindexMany }) => {
      // In the order of their paths, as every import inserts them: two imports of the same ids wait in one order, not crosswise.
      const byPath = (a: NewObject, b: NewObject): number => a.located.obj.path < b.located.obj.path ? -1 : a.located.obj.path > b.located.obj.path ? 1 : 0
      const inserted = await this.insertContent(tx, [...objects].sort(byPath).map(o => o.located.obj))
      const written = objects.map(o => o.located)
      const lost = [...objects.entries()].filter(([, { located }]) => !inserted.has(located.obj.uid))
      for (const [i, { write }] of lost) {
        if (write.id !== undefined) throw Conflict(`items/${i}: the id '${write.id}' is taken in ${parent.obj.path}.`)
      }
      // The next free ids are found by one import of the folder at a time: two that looked for them
      // side by side would each take ids the other holds uncommitted, and wait for each other.
      if (lost.length > 0) await tx.query(`SELECT pg_advisory_xact_lock(${IMPORT_LOCK_CLASS}, hashtext($1))`, [parent.obj.uid])
      for (const [i, { located }] of lost) {
        const base = located.obj.id
        for (let attempt = 0; ; attempt++) {
          // Inside the transaction: the ids of this batch count as taken.
          written[i] = renamed(written[i], parent, await this.freeId(tx, parent, base))
          if ((await this.insertContent(tx, [written[i].obj])).size === 1) break
          if (attempt >= MAX_ID_ATTEMPTS) throw Conflict(`No free id for '${base}' in ${parent.obj.path}; try again.`)
        }
      }
      const history = objects.flatMap(({ history }, i) => history.map((entry, seq) => ({ uid: written[i].obj.uid, seq, ...entry })))
      if (history.length > 0) {
        await tx.query(`INSERT INTO workflow_history (uid, seq, action, actor, comments, review_state, time)
          SELECT * FROM unnest($1::uuid[], $2::integer[], $3::text[], $4::text[], $5::text[], $6::text[], $7::timestamptz[])`,
        ['uid', 'seq', 'action', 'actor', 'comments', 'review_state', 'time'].map(key => history.map(h => h[key as keyof typeof h])))
      }
      // An image a statement: its bytes travel as they are (a list of them would be hex-encoded text, twice their size, in one go).
      const pacer = new Pacer()
      for (const [i, { write }] of objects.entries()) {
        for (const [field, image] of write.images) {
          await pacer.pace()
          await tx.query('INSERT INTO blobs (uid, field, bytes) VALUES ($1, $2, $3)', [written[i].obj.uid, field, image.bytes])
        }
      }
      await reindexMany(written)
      return written
    })
  }

  /**
   * Inserts content rows, in their order, in a statement per run of about a
   * megabyte of data (core/pacing.ts); a row whose id or path is taken is
   * skipped. Returns the uids inserted.
   */
  private async insertContent (tx: Queryable, rows: ContentRow[]): Promise<Set<string>> {
    const inserted = new Set<string>()
    const pacer = new Pacer()
    // Each row's data as JSON text, a row at a time: an import's are 16 MB of text.
    const values: unknown[][] = []
    for (const row of rows) {
      await pacer.pace()
      values.push(contentValues(row))
    }
    for (const run of runsOf(values, row => (row[DATA] as string).length)) {
      await pacer.pace()
      // One array a column, zipped by unnest; creators (a text[] a row) travel as JSON.
      const columns = CONTENT_COLUMN_TYPES.map((_, c) => run.map(row => c === CREATORS ? JSON.stringify(row[c]) : row[c]))
      const { rows: uids } = await tx.query<{ uid: string }>(`INSERT INTO content (${COLUMNS})
        SELECT ${COLUMNS.replace('creators', 'ARRAY(SELECT jsonb_array_elements_text(creators))')}
        FROM unnest(${CONTENT_COLUMN_TYPES.map((type, c) => `$${c + 1}::${c === CREATORS ? 'jsonb' : type}[]`).join(', ')}) AS r(${COLUMNS})
        ON CONFLICT DO NOTHING RETURNING uid`, columns, PREPARED)
      for (const { uid } of uids) inserted.add(uid)
    }
    return inserted
  }

  /** The folder's next position (the first of `count`), for a create whose read did not hand one out. */
  async nextPosition (parent: Located, count = 1): Promise<number> {
    const { rows } = await this.db.query<{ position: number }>(reservePosition('uid = $1', '$2::integer'), [parent.obj.uid, count], PREPARED)
    if (rows.length === 0) throw folderGone(parent)
    return rows[0].position
  }

  /**
   * The first free id of `base`, `base-1`, `base-2` … as the folder is now
   * (the contract's order, without gaps). Of creates with one title that race,
   * each round one wins: a create retries at most once per rival.
   */
  private async freeId (q: Queryable, parent: Located, base: string): Promise<string> {
    const { rows } = await q.query<{ id: string }>("SELECT id FROM content WHERE parent_uid = $1 AND (id = $2 OR id LIKE $2 || '-%')", [parent.obj.uid, base])
    const used = new Set(rows.map(r => r.id))
    let n = 0
    while (used.has(n === 0 ? base : `${base}-${n}`)) n++
    return n === 0 ? base : `${base}-${n}`
  }

  /**
   * Changes an object: `prepare` checks the request against the object as it
   * is now (permissions, If-Match, validation) and returns the write, which is
   * merged into that state and written only if nobody changed the object
   * meanwhile; otherwise the object is read again and `prepare` runs again on
   * the newer state. No change is merged into a state that another replaced.
   */
  async update (located: Located, prepare: (current: Located, q: Queryable) => Promise<CheckedWrite>): Promise<Located> {
    return await this.changeOptimistically(located, async current => {
      const write = await prepare(current, this.db)
      const data: Record<string, unknown> = { ...current.obj.data }
      for (const [key, value] of Object.entries(write.values)) {
        if (value === null) delete data[key]
        else data[key] = value
      }
      return { changes: { data }, write }
    })
  }

  /**
   * The read-check-write cycle of every change of an existing object:
   * `change` computes the new state from the current one; the write happens
   * only if the object's `modified` is still the one read (a version check),
   * else the object is read again and `change` runs again.
   *
   * This process's changes of one object wait for each other: a crowd of
   * writers of one object in one process would otherwise keep making each
   * other start over, and one that keeps losing ends as a 409 after 50 tries.
   * The version check decides between processes.
   */
  async changeOptimistically (located: Located, change: ObjectChange): Promise<Located> {
    // One that waited for another starts from the state that one left.
    return await this.changing.run(located.obj.uid, async waited => await this.changeUntilWritten(waited ? await this.reread(located) : located, change))
  }

  private async changeUntilWritten (located: Located, change: ObjectChange): Promise<Located> {
    let current = located
    for (let attempt = 0; ; attempt++) {
      const { changes, write, history } = await change(current)
      // Strictly later than the last change, so that ETags (and Solr's sync check) see every change.
      const modified = new Date(Math.max(Date.now(), current.obj.modified.getTime() + 1))
      const obj: ContentRow = { ...current.obj, ...changes, modified }
      const next: Located = { obj, lineage: [...current.lineage.slice(0, -1), obj], type: current.type }
      const written = await this.writeOne(next, p => `UPDATE content SET data = ${p(JSON.stringify(obj.data))}, review_state = ${p(obj.review_state)}, modified = ${p(modified)}
        WHERE uid = ${p(obj.uid)} AND date_trunc('milliseconds', modified) = ${p(current.obj.modified)} RETURNING uid`,
      // The history entry's time is the change's: the history and `modified` agree.
      { write, history: history !== undefined ? { ...history, time: modified } : undefined, before: current })
      if (written) return next
      if (attempt >= 50) throw Conflict(`${located.obj.path} changes too often to be changed now; try again.`)
      current = await this.reread(located)
    }
  }

  /** The object as it is now: 404 when it was deleted (or replaced) since it was read. */
  private async reread (located: Located): Promise<Located> {
    const { found } = await this.locate(located.obj.path)
    if (found === null || found.obj.uid !== located.obj.uid) throw NotFound(located.obj.path, `${located.obj.path} was deleted while the request ran.`)
    return found
  }

  /**
   * One write of one object as one statement: the row's change (`changed`,
   * returning its uid when it changed something), its history entry, its
   * images, its catalogue row, its index operation and the notification that
   * the catalogue changed — all or nothing, one round trip. After it, as
   * every write: this process's listeners, and the delivery of the operation.
   * `before`: the object an update started from; the notification then names
   * the catalogue columns the update changed (a create changes them all).
   */
  private async writeOne (result: Located, changed: (p: (value: unknown) => string) => string, extras: { write?: CheckedWrite, history?: HistoryEntry, before?: Located }): Promise<boolean> {
    const operations = this.indexOperations?.recording() === true ? this.indexOperations : null
    const statement = new Statement()
    const { p } = statement
    statement.with('changed', changed(p))
    const { history, write, before } = extras
    if (history !== undefined) {
      statement.with('history', `INSERT INTO workflow_history (uid, seq, action, actor, comments, review_state, time)
        SELECT uid, (SELECT COALESCE(max(seq) + 1, 0) FROM workflow_history WHERE workflow_history.uid = changed.uid),
          ${p(history.action)}, ${p(history.actor)}, ${p(history.comments)}, ${p(history.review_state)}, ${p(history.time)} FROM changed`)
    }
    for (const [i, [field, image]] of [...write?.images ?? []].entries()) {
      statement.with(`image${i}`, `INSERT INTO blobs (uid, field, bytes) SELECT uid, ${p(field)}, ${p(image.bytes)} FROM changed
        ON CONFLICT (uid, field) DO UPDATE SET bytes = EXCLUDED.bytes`)
    }
    const cleared = Object.entries(write?.values ?? {}).filter(([, value]) => value === null).map(([field]) => field)
    if (cleared.length > 0) statement.with('cleared', `DELETE FROM blobs WHERE uid IN (SELECT uid FROM changed) AND field = ANY(${p(cleared)}::text[])`)
    // The site root has no catalogue row: an update of it changes no column.
    let columns: readonly string[] | undefined = before !== undefined ? [] : undefined
    if (result.obj.path !== '/') {
      const indexable = indexableOf(result)
      statement.with('catalogued', this.catalog.upsertFrom('changed', p, result.type, indexable))
      if (before !== undefined) columns = this.catalog.changedColumns(result.type, indexableOf(before), indexable)
    }
    if (operations !== null) statement.with('recorded', this.outbox.recordFrom('changed', 'index'))
    // A write's text depends on its shape only (which parts it has), never on its values.
    const { rows } = await this.db.query(statement.sql(`SELECT uid, ${notification(p, CATALOG_CHANGED, this.writerId, columns)} FROM changed`), statement.params, PREPARED)
    if (rows.length === 0) return false
    for (const listener of this.catalogListeners) listener(columns)
    if (operations !== null) await operations.deliver([result.obj.uid])
    return true
  }

  async remove (located: Located): Promise<void> {
    await this.write(async ({ tx, unindex }) => {
      // Children, catalogue rows, history and blobs go with it (ON DELETE CASCADE); each leaves Solr too.
      const { rows } = await tx.query<{ uid: string }>("SELECT uid FROM content WHERE path = $1 OR path LIKE $2 || '/%'",
        [located.obj.path, escapeLike(located.obj.path)])
      await unindex(rows.map(r => r.uid))
      await tx.query('DELETE FROM content WHERE uid = $1', [located.obj.uid])
    })
  }

  async image (uid: string, field: string): Promise<Buffer | null> {
    return await readImage(this.db, uid, field)
  }
}
