import { CATALOG_CHANGED } from '../catalog/kept-results.js'
import { othersOnly, type Notifications } from '../db/notifications.js'
import { heapBytes } from '../heap-size.js'
import { type CacheFigures, Kept } from '../kept.js'
import { LOCKS_CHANGED } from './locks.js'
import { pathParents } from './paths.js'
import type { Located, Traversal } from './rows.js'

/**
 * What a kept traversal holds of its own: the object's row and its lineage's
 * slots (its content type is the registry's; its ancestors' rows are shared
 * with the traversals kept of them and of their other children, and go when
 * one of them changes, since every traversal below carries their tags). Only
 * traversals that found their object are kept.
 */
const rowBytes = ({ found }: Traversal<Located>): number => found === null ? 0 : heapBytes(found.obj) + 8 * found.lineage.length

/** How the store reads a traversal: whole (with the parent's, `parentPath`, from the same rows), or the object alone below its parent (null: not that parent's child). */
export interface Locate {
  whole: (parentPath: string) => Promise<{ traversal: Traversal<Located>, parent: Traversal<Located> }>
  below: (parent: Located) => Promise<Traversal<Located> | null>
}

/**
 * Objects as the last read found them, by path, for the reads that only show
 * them (GET and HEAD): a page of Plone's is served from the object cache of
 * its ZODB connection, invalidated by every commit; so are these, which saves
 * a read of one object its only statement and a folder listing one of two.
 * They stay exact as the catalogue's kept results do (core/catalog/kept-results.ts):
 * - every content write makes them all stale — this process's at once
 *   (`changed`; the echo of its notification is then ignored), other
 *   processes' through the notification the write sends in its transaction;
 *   so does every lock taken, refreshed or released;
 * - an object with a live lock is not kept: its lock ends with time, which no
 *   write announces;
 * - while notifications are not heard, nothing is kept (losing the listening
 *   connection is heard as a change of everything).
 * Requests that traverse to the same path while it is being read wait for
 * that read (core/kept.ts).
 * An object whose parent is kept is read alone, below it: the talks of a
 * folder share its lineage, and each costs a statement of one row, not of
 * the whole lineage. A traversal read whole keeps its parent's too.
 * A write never starts from a kept object: it reads the object as it is now.
 */
export class KeptObjects {
  private readonly entries: Kept<Traversal<Located>>
  /** Writes heard so far (`changed`): a read that saw none meanwhile may keep what it found beside its own entry. */
  private writes = 0

  /**
   * `budget`: bytes (core/kept.ts; the least recently read go first: KEPT_OBJECTS_BYTES);
   * `ownWrites`: the key of this process's notifications, whose writes `changed` already applied (ContentStore.writerId).
   */
  constructor (private readonly notifications: Notifications, budget: number, ownWrites?: string) {
    this.entries = new Kept<Traversal<Located>>(budget, rowBytes, ({ found, nearest }) => (found?.lineage ?? nearest).map(row => row.uid))
    notifications.onChange(CATALOG_CHANGED, othersOnly(ownWrites, (_columns, uids) => { this.changed(uids) }))
    notifications.onChange(LOCKS_CHANGED, othersOnly(ownWrites, () => { this.changed() }))
  }

  /**
   * What was kept may be stale: a write happened (a lost listening connection
   * is heard as one). When the write names the objects it changed, only the
   * traversals through one of them are: an object's kept answer holds its
   * ancestors (the permissions it acquires, its parent's summary), so a
   * change of a folder makes every object kept below it stale too.
   */
  changed (uids?: readonly string[]): void {
    this.writes++
    if (uids === undefined) this.entries.clear()
    else this.entries.clearTagged(uids)
  }

  /** Its entries, bytes and look-ups, for the metrics. */
  figures (): CacheFigures { return this.entries.figures() }

  /**
   * What traversal finds at `path`: kept, or read once for every caller
   * asking meanwhile (core/kept.ts) — alone below its parent when that is
   * kept, else whole; kept when an object was found, has no live lock, and
   * no write was heard while it was read.
   */
  async read (path: string, locate: Locate): Promise<Traversal<Located>> {
    const lineage = pathParents(path)
    // A path not written as the object's own (`/talks/` for `/talks`) finds nothing: read whole, as ever.
    const parentPath = lineage.length > 1 && lineage[lineage.length - 1] === path ? lineage[lineage.length - 2] : null
    if (!this.notifications.listening) return (await locate.whole(parentPath ?? path)).traversal
    return await this.entries.read(path, 0, async () => {
      const parent = parentPath === null ? null : this.entries.get(parentPath)?.found ?? null
      const below = parent === null ? null : await locate.below(parent)
      if (below !== null) return this.keepable(below)
      const writes = this.writes
      const { traversal, parent: read } = await locate.whole(parentPath ?? path)
      // The parent's traversal is kept beside it only when no write was heard while it was read (the entry's own read is guarded by Kept).
      const parentKept = this.keepable(read)
      if (parentPath !== null && this.writes === writes && parentKept.keep !== false) this.entries.set(parentPath, parentKept.value)
      return this.keepable(traversal)
    })
  }

  /** A traversal as kept (frozen: shared by every request that reads it from now on), or not to keep. */
  private keepable (traversal: Traversal<Located>): { value: Traversal<Located>, keep?: false } {
    const { found } = traversal
    if (found === null || found.lock !== null) return { value: traversal, keep: false }
    // A change of it would be a bug (it throws, in strict mode).
    for (const row of found.lineage) Object.freeze(Object.freeze(row).data)
    Object.freeze(found.lineage)
    Object.freeze(found)
    return { value: Object.freeze(traversal) }
  }
}
