import { BadRequest, Conflict, Forbidden, NotFound, quote } from '../errors.js'
import { principalsOf, type Principal } from '../security/roles.js'
import { reindexSubtreeAccess } from '../security/subtree-access.js'
import { copySubtree } from './copy.js'
import { freeId, MAX_ID_ATTEMPTS } from './free-ids.js'
import { destination, lockSubtree, moveSubtree, refuseIntoItself } from './move.js'
import type { ContentTypeRegistry } from './registry.js'
import type { ContentRow, Located } from './rows.js'
import type { ContentStore, Write } from './store.js'

/** One object moved or copied: where it was (the original's path) and where it (or its copy) is now. */
export interface Relocated { from: string, to: string }

/** One object to move or copy, checked by the caller (permissions), and where it goes. */
export interface Relocation { source: Located, folder: Located }

/** Copies made a statement when their catalogue rows are written. */
const REINDEX_BATCH = 1000
/** How often a request whose writes PostgreSQL ended as a deadlock (two moves crosswise) or whose id another took starts over. */
const MAX_ATTEMPTS = 5

/** Whether a write failed because an id (or a path) it took is taken. */
const idTaken = (err: unknown): boolean => (err as { code?: string }).code === '23505'

/**
 * Copy, move and rename (plone.restapi's `@copy`, `@move`, an `id` in a
 * PATCH), each request one transaction whatever the number of objects and
 * their size: the subtree is written by a few set-based statements
 * (core/content/move.ts, core/content/copy.ts), its index operations are
 * recorded in the outbox and the change is announced to every process in
 * that transaction (ContentStore.write).
 */
export class Relocations {
  private readonly folderish: string[]
  private readonly initialStates: Record<string, string | null>

  constructor (private readonly store: ContentStore, types: ContentTypeRegistry) {
    const all = [...types.types.values()]
    this.folderish = all.filter(type => type.folderish).map(type => type.name)
    this.initialStates = Object.fromEntries(all.map(type => [type.name, type.workflow?.initial ?? null]))
  }

  /** Moves each source into its folder (under its own id, or the next free one there). */
  async move (relocations: Relocation[]): Promise<Relocated[]> {
    return await this.retried(async write => {
      const done: Relocated[] = []
      for (const { source, folder } of relocations) done.push(await this.moveOne(write, source, folder, null))
      return done
    })
  }

  /** Gives the object another id in its folder (409 when another object has it). */
  async rename (source: Located, id: string): Promise<Relocated> {
    const folder = source.lineage[source.lineage.length - 2]
    if (folder === undefined) throw BadRequest('The site root cannot be renamed.')
    return await this.retried(async write => await this.moveOne(write, source, { ...source, obj: folder }, id))
  }

  /** Copies each source into its folder, the copier owning the copies. */
  async copy (relocations: Relocation[], who: Principal): Promise<Relocated[]> {
    return await this.retried(async write => {
      const done: Relocated[] = []
      for (const { source, folder } of relocations) done.push(await this.copyOne(write, source, folder, who))
      return done
    })
  }

  private async moveOne (write: Write, source: Located, folder: Located, id: string | null): Promise<Relocated> {
    const { tx } = write
    const root = await lockSubtree(tx, source.obj.uid, this.folderish)
    if (root === null) throw NotFound(source.obj.path, `${source.obj.path} was deleted while the request ran.`)
    const into = await this.destinationOf(write, folder)
    refuseIntoItself(root, into)
    if (root.path === '/') throw BadRequest('The site root cannot be moved.')
    // A move into the folder it is in, under its own id, changes nothing (as Zope's paste of a cut object there).
    if (root.parent_uid === into.uid && (id === null || id === root.id)) return { from: root.path, to: root.path }
    if (id !== null && (await tx.query('SELECT 1 FROM content WHERE parent_uid = $1 AND id = $2', [into.uid, id])).rows.length > 0) {
      throw Conflict(`The id '${quote(id)}' is taken in ${into.path}.`)
    }
    const newId = id ?? await freeId(tx, { ...folder, obj: into }, root.id)
    const moved = await moveSubtree(tx, root, into, newId)
    const to = (await tx.query<{ path: string }>('SELECT path FROM content WHERE uid = $1', [root.uid])).rows[0].path
    if (root.parent_uid !== into.uid) await reindexSubtreeAccess(write, to, row => this.store.typeOf(row))
    // The old and the new folder changed too: what processes keep of them (their traversals) goes.
    await write.reindexed(moved, [root.parent_uid, into.uid].filter((uid): uid is string => uid !== null))
    return { from: root.path, to }
  }

  private async copyOne (write: Write, source: Located, folder: Located, who: Principal): Promise<Relocated> {
    const { tx } = write
    const { rows: [root] } = await tx.query<ContentRow>('SELECT uid, path, id, parent_uid, portal_type FROM content WHERE uid = $1', [source.obj.uid])
    if (root === undefined) throw NotFound(source.obj.path, `${source.obj.path} was deleted while the request ran.`)
    const into = await this.destinationOf(write, folder)
    refuseIntoItself(root, into)
    if (root.path === '/') throw BadRequest('The site root cannot be copied.')
    const id = await freeId(tx, { ...folder, obj: into }, root.id)
    const copies = await copySubtree(tx, root, into, id, { owner: who.userId, initialStates: this.initialStates, now: new Date(), viewers: principalsOf(who) })
    for (let at = 0; at < copies.length; at += REINDEX_BATCH) {
      await write.reindexMany([...(await this.store.locateMany(copies.slice(at, at + REINDEX_BATCH), tx)).values()])
    }
    await write.reindexed([], [into.uid])
    return { from: root.path, to: (await tx.query<{ path: string }>('SELECT path FROM content WHERE uid = $1', [copies[0]])).rows[0].path }
  }

  /** The folder as it is now (404 when it went), which must still take the type of what comes. */
  private async destinationOf (write: Write, folder: Located): Promise<ContentRow> {
    const into = await destination(write.tx, folder.obj.uid)
    if (into === null) throw NotFound(folder.obj.path, `${folder.obj.path} was deleted while the request ran.`)
    return into
  }

  /** One transaction, started over when PostgreSQL ended it as a deadlock or another write took an id it chose meanwhile. */
  private async retried<T> (fn: (write: Write) => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.store.write(fn)
      } catch (err) {
        const { code } = err as { code?: string }
        if (code === '23503') throw NotFound('', 'A folder of the request was deleted while it ran.')
        if ((code === '40P01' || idTaken(err)) && attempt < Math.min(MAX_ATTEMPTS, MAX_ID_ATTEMPTS)) continue
        if (idTaken(err)) throw Conflict('The id is taken in that folder.')
        throw err
      }
    }
  }
}

/** 403 when `folder` may not hold objects of the type of `source` (as a create's "Disallowed subobject type"). */
export function checkAllowed (source: Located, folder: Located): void {
  if (!folder.type.allows(source.type)) throw Forbidden(`Disallowed subobject type: ${quote(source.type.name)}.`)
}
