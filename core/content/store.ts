import { randomUUID } from 'node:crypto'
import type { Catalog } from '../catalog/catalog.js'
import { CATALOG_CHANGED } from '../catalog/kept-results.js'
import { MAX_ITEMS, notification } from '../db/notifications.js'
import type { Db, Queryable } from '../db/db.js'
import { Conflict, NotFound } from '../errors.js'
import type { IndexOp, Outbox } from '../indexing/outbox.js'
import type { Principal } from '../security/roles.js'
import { OneAtATime } from '../one-at-a-time.js'
import { indexableOf } from './indexable.js'
import type { KeptObjects } from './kept-objects.js'
import type { ContentType, ContentTypeRegistry } from './registry.js'
import { writeBatch } from './batch-write.js'
import { freeId, MAX_ID_ATTEMPTS } from './free-ids.js'
import { POSITION, contentValues, creationEntry, newObject, placedIn, renamed, type NewObject } from './new-object.js'
import { takePositions } from './positions.js'
import { CONTENT_COLUMNS as COLUMNS, withChanges, type ContentRow, type HistoryEntry, type Located } from './rows.js'
import { ContentReads } from './reads.js'
import { removeSubtree } from './subtree.js'
import { Statement } from './statement.js'
import { followChange } from './object-write.js'
import { ACCESS_CHANGED, accessGuard, ownAccessUnchanged } from './access-guard.js'
import { folderChanged, folderGone, idTaken } from './write-faults.js'
import type { CheckedWrite } from './validation.js'
import type { IndexOperations, Write } from './write-contract.js'
import { DEFAULT_VERSIONS_KEPT, INITIAL_VERSION_NOTE, versionable, type VersionNote } from './versions.js'

/** A change of an existing object: its new state computed from the current one (ContentStore.changeOptimistically). */
type ObjectChange = (current: Located) => Promise<{ changes: Partial<Pick<ContentRow, 'data' | 'review_state'>>, write?: CheckedWrite, history?: HistoryEntry, version?: VersionNote }>

/** Imports whose ids cross another's: how often one that PostgreSQL ended as a deadlock starts over. */
const MAX_DEADLOCK_ATTEMPTS = 5
/** The write of an object: a few texts that run on every request (core/db/queryable.ts). */
const PREPARED = { prepared: true }

export type { IndexOperations, Write }

/**
 * The content tree in PostgreSQL: its reads (core/content/reads.ts) and every
 * write, each in one transaction together with its catalogue row, its index
 * operations and its image bytes, so that a failed write changes nothing
 * (a bulk import's: core/content/batch-write.ts). Permissions are
 * core/security/permissions.ts, workflow transitions core/content/transitions.ts.
 */

export class ContentStore extends ContentReads {
  private indexOperations: IndexOperations | null = null
  private readonly catalogListeners: Array<(columns?: readonly string[], uids?: readonly string[]) => void> = []
  /**
   * The key of this process's catalogue notifications: its own writes are
   * applied by its listeners when they commit, so what it keeps need not be
   * dropped again when their echo arrives a moment later.
   */
  readonly writerId = randomUUID()
  /** This process's changes of one object, by uid: one at a time (`changeOptimistically`). */
  private readonly changing = new OneAtATime()
  /** Versions kept per object of a versionable type (VERSIONS_KEPT, core/content/versions.ts). */
  versionsKept = DEFAULT_VERSIONS_KEPT

  /** The types that may hold objects: a delete locks the objects of these types inside what it deletes. */
  private readonly folderishTypes: string[]

  constructor (db: Db, types: ContentTypeRegistry, private readonly catalog: Catalog, private readonly outbox: Outbox) {
    super(db, types)
    this.folderishTypes = [...types.types.values()].filter(type => type.folderish).map(type => type.name)
  }

  /**
   * Called after every committed write that changed the catalogue, before the
   * request answers (what this process keeps of the catalogue is stale then;
   * other processes hear of it through a notification sent in the write), with
   * the catalogue columns it changed when it knows them (an update of one
   * object) and the objects it changed.
   */
  onCatalogChange (listener: (columns?: readonly string[], uids?: readonly string[]) => void): void {
    this.catalogListeners.push(listener)
  }

  /** Keeps what `locateForReading` finds (core/content/kept-objects.ts), stale from this process's next write on. */
  keepReads (kept: KeptObjects): void {
    this.kept = kept
    this.onCatalogChange((_columns, uids) => { kept.changed(uids) })
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
    const changed = new Set<string>()
    const result = await this.db.transaction(async tx => {
      const record = async (op: IndexOp, uids: string[]): Promise<void> => {
        for (const uid of uids) changed.add(uid)
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
      const written = await fn({
        tx,
        reindex: async (obj, lineage) => { await reindexMany([{ obj, lineage, type: this.typeOf(obj) }]) },
        reindexMany,
        unindex: async uids => { await record('unindex', uids) },
        reindexed: async (uids, rowsOnly = []) => {
          for (const uid of rowsOnly) changed.add(uid)
          await record('index', uids)
        }
      })
      // At its commit, to every process: which objects changed (a change of more than a message holds is one of any).
      if (changed.size > 0) await this.db.notifications.notify(tx, CATALOG_CHANGED, this.writerId, [...changed])
      return written
    })
    if (changed.size > 0) for (const listener of this.catalogListeners) listener(undefined, changed.size <= MAX_ITEMS ? [...changed] : undefined)
    if (operations !== null && touched.length > 0) await operations.deliver([...new Set(touched)])
    return result
  }

  /**
   * Creates an object in `parent`, at the folder's next position, taken by the
   * statement that writes it (core/content/positions.ts); its id comes from
   * the title unless given (409 when a given id is taken). Creates in one
   * folder do not wait for each other's ids: the id is tried and, when another
   * create took it meanwhile, the next free one.
   */
  async create (parent: Located, type: ContentType, write: CheckedWrite, who: Principal, changeNote = INITIAL_VERSION_NOTE): Promise<Located> {
    let created = newObject(parent, type, write, who, new Date())
    const base = created.obj.id
    for (let attempt = 0; ; attempt++) {
      const { obj } = created
      try {
        // The position waits for the guard: a sharing change above the folder under way is waited for, then refuses it.
        const values = (p: (value: unknown) => string): string[] => contentValues(obj).map((value, c) => c === POSITION ? `CASE WHEN ${accessGuard(p, parent.lineage)} THEN (SELECT position FROM taken) END` : p(value))
        const version = versionable(type) ? { actor: who.userId, comment: changeNote } : undefined
        const written = await this.writeOne(created, p => `INSERT INTO content (${COLUMNS})
          VALUES (${values(p).join(', ')}) RETURNING uid, position, data`, { history: creationEntry(created, who), write, placedIn: parent.obj.uid, version })
        // An INSERT that did not fail wrote its row.
        return written!
      } catch (err) {
        // The folder went while the request ran.
        if ((err as { code?: string }).code === '23503') throw folderGone(parent)
        // The folder moved while the request ran (infra/migrations/021_redirects.sql): the object goes where the folder is now.
        // Or its local roles (or those of a folder above it) changed: the object's access is computed from them as they are now.
        if (folderChanged(err) && attempt < MAX_ID_ATTEMPTS) {
          parent = await this.folderNow(parent)
          created = placedIn(created, parent)
          continue
        }
        if (!idTaken(err)) throw err
        if (write.id !== undefined) throw Conflict(`The id '${write.id}' is taken in ${parent.obj.path}.`)
        if (attempt >= MAX_ID_ATTEMPTS) throw Conflict(`No free id for '${base}' in ${parent.obj.path}; try again.`)
        const now = new Date()
        created = renamed({ ...created, obj: { ...obj, created: now, modified: now } }, parent, await freeId(this.db, parent, base))
      }
    }
  }

  /**
   * Creates the objects of a bulk import in `parent`, all or nothing, in one
   * transaction of a few statements whatever their number (core/content/batch-write.ts):
   * their rows in their final state, at consecutive positions, histories,
   * images, catalogue rows and index operations. An object whose id another
   * took gets the next free one, as `create` does; a taken explicit id is 409
   * and nothing is written. A folder moved or shared anew meanwhile is taken
   * as it is now; one deleted is 404. Returns the objects as written, in their order.
   */
  async createMany (parent: Located, objects: NewObject[]): Promise<Located[]> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.write(async ({ tx, reindexMany }) => {
          // The folder's lineage held until the commit, its roles as the objects' access was computed from (core/content/access-guard.ts).
          const guard = new Statement()
          await tx.query(`SELECT ${accessGuard(guard.p, parent.lineage)}`, guard.params)
          return await writeBatch(tx, reindexMany, parent, objects)
        })
      } catch (err) {
        const { code } = err as { code?: string }
        // The folder went while the request ran.
        if (code === '23503') throw folderGone(parent)
        // The folder moved, was shared anew, or it (or one above it) was deleted while the request ran:
        // the objects go where the folder is now, with its roles as they are now; 404 when it is gone.
        if (folderChanged(err)) {
          if (attempt >= MAX_ID_ATTEMPTS) throw Conflict(`${parent.obj.path} was moved or shared anew while the request ran; try again.`)
          const now = parent = await this.folderNow(parent)
          objects = objects.map(o => ({ ...o, located: placedIn(o.located, now) }))
          continue
        }
        // Two imports that wait for each other's ids: PostgreSQL ended one; it starts over and then sees the other's.
        if (code === '40P01' && attempt < MAX_DEADLOCK_ATTEMPTS) continue
        throw err
      }
    }
  }

  /**
   * Changes an object: `prepare` checks the request against the object as it
   * is now (permissions, If-Match, validation) and returns the write, which is
   * merged into that state and written only if nobody changed the object
   * meanwhile; otherwise the object is read again and `prepare` runs again on
   * the newer state. No change is merged into a state that another replaced.
   */
  async update (located: Located, prepare: (current: Located, q: Queryable) => Promise<CheckedWrite>, note?: VersionNote): Promise<Located> {
    return await this.changeOptimistically(located, async current => {
      const write = await prepare(current, this.db)
      const data: Record<string, unknown> = { ...current.obj.data }
      for (const [key, value] of Object.entries(write.values)) {
        if (value === null) delete data[key]
        else data[key] = value
      }
      return { changes: { data }, write, version: note }
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
      const { changes, write, history, version } = await change(current)
      // Strictly later than the last change, so that ETags (and Solr's sync check) see every change.
      const modified = new Date(Math.max(Date.now(), current.obj.modified.getTime() + 1))
      const obj: ContentRow = { ...current.obj, ...changes, modified }
      const next: Located = { obj, lineage: [...current.lineage.slice(0, -1), obj], type: current.type }
      // The guards, in the WHERE: a sharing change above the object first ends (then refuses the write); one of the object
      // itself holds its row, and the UPDATE re-checks the row as that change left it (no row: read again, start over).
      const written = await this.writeOne(next, p => `UPDATE content SET data = ${p(JSON.stringify(obj.data))}, review_state = ${p(obj.review_state)}, modified = ${p(modified)}
        WHERE uid = ${p(obj.uid)} AND date_trunc('milliseconds', modified) = ${p(current.obj.modified)} AND ${ownAccessUnchanged(p, current.obj)}
          AND ${accessGuard(p, current.lineage.slice(0, -1))} RETURNING uid, position, data`,
      // The history entry's time is the change's: the history and `modified` agree.
      { write, history: history !== undefined ? { ...history, time: modified } : undefined, before: current, version: versionable(current.type) ? version : undefined })
        .catch((err: unknown) => { if ((err as { code?: string }).code === ACCESS_CHANGED) return null; throw err })
      if (written !== null) return written
      if (attempt >= 50) throw Conflict(`${located.obj.path} changes too often to be changed now; try again.`)
      current = await this.reread(located)
    }
  }

  /** A folder a write is placing objects in, as it is now (moved or shared anew meanwhile): 404 when it went. */
  private async folderNow (parent: Located): Promise<Located> {
    const now = (await this.locateMany([parent.obj.uid])).get(parent.obj.uid)
    if (now === undefined) throw folderGone(parent)
    return now
  }

  /** The object as it is now: 404 when it was deleted (or replaced) since it was read. */
  private async reread (located: Located): Promise<Located> {
    const { found } = await this.locate(located.obj.path)
    if (found === null || found.obj.uid !== located.obj.uid) throw NotFound(located.obj.path, `${located.obj.path} was deleted while the request ran.`)
    return found
  }

  /**
   * One write of one object as one statement: the row's change (`changed`,
   * returning its uid, position and data when it changed something), what
   * follows it (core/content/object-write.ts), its catalogue row, its index
   * operation and the catalogue's notification — all or nothing, one round trip.
   * After it, as every write: this process's listeners, and the delivery of
   * the operation. Answers the object as written (null: `changed` changed nothing).
   * `before`: the object an update started from; the notification then names
   * the catalogue columns the update changed (a create changes them all).
   * `placedIn`: a create's folder, whose next position the statement takes
   * first, as `taken` (core/content/positions.ts).
   */
  private async writeOne (result: Located, changed: (p: (value: unknown) => string) => string,
    extras: { write?: CheckedWrite, history?: HistoryEntry, before?: Located, placedIn?: string, version?: VersionNote }): Promise<Located | null> {
    const operations = this.indexOperations?.recording() === true ? this.indexOperations : null
    const statement = new Statement()
    const { p } = statement
    const { history, write, before, placedIn, version } = extras
    if (placedIn !== undefined) statement.with('taken', takePositions(p(placedIn), '1'))
    statement.with('changed', changed(p))
    followChange(statement, result, { history, write, before, version }, this.versionsKept)
    // The site root has no catalogue row: an update of it changes no column.
    let columns: readonly string[] | undefined = before !== undefined ? [] : undefined
    if (result.obj.path !== '/') {
      const indexable = indexableOf(result)
      statement.with('catalogued', this.catalog.upsertFrom('changed', p, result.type, indexable))
      if (before !== undefined) columns = this.catalog.changedColumns(result.type, indexableOf(before), indexable)
    }
    if (operations !== null) statement.with('recorded', this.outbox.recordFrom('changed', 'index'))
    // A write's text depends on its shape only (which parts it has), never on its values.
    const { rows } = await this.db.query<{ position: number }>(statement.sql(`SELECT uid, position, ${notification(p, CATALOG_CHANGED, this.writerId, columns, [result.obj.uid])} FROM changed`),
      statement.params, PREPARED)
    if (rows.length === 0) return null
    for (const listener of this.catalogListeners) listener(columns, [result.obj.uid])
    if (operations !== null) await operations.deliver([result.obj.uid])
    return withChanges(result, { position: rows[0].position })
  }

  /**
   * Deletes the object and everything inside it, with their catalogue rows,
   * histories, images and locks; each deleted object leaves Solr too, however
   * creates and imports into the subtree race the delete (core/content/subtree.ts).
   */
  async remove (located: Located): Promise<void> {
    await this.write(async ({ tx, unindex }) => {
      await unindex(await removeSubtree(tx, located.obj, this.folderishTypes))
    })
  }
}
