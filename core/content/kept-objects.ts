import { CATALOG_CHANGED } from '../catalog/kept-results.js'
import { othersOnly, type Notifications } from '../db/notifications.js'
import { heapBytes } from '../heap-size.js'
import { Kept } from '../kept.js'
import { LOCKS_CHANGED } from './locks.js'
import type { Located, Traversal } from './rows.js'

/**
 * Objects kept, in bytes (core/kept.ts; the least recently read go first):
 * some thousands of objects with their lineages, a few hundred at the
 * largest a talk may be (its texts at their limits).
 */
const OBJECTS_BYTES = 32 * 1024 * 1024

/** What a traversal holds of its own: its rows (its content type is the registry's, shared by all). */
const rowBytes = ({ found, nearest }: Traversal<Located>): number => heapBytes(found?.lineage ?? []) + heapBytes(nearest)

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
 * A write never starts from a kept object: it reads the object as it is now.
 */
export class KeptObjects {
  private readonly entries = new Kept<Traversal<Located>>(OBJECTS_BYTES, rowBytes, ({ found, nearest }) => (found?.lineage ?? nearest).map(row => row.uid))

  /** `ownWrites`: the key of this process's notifications, whose writes `changed` already applied (ContentStore.writerId). */
  constructor (private readonly notifications: Notifications, ownWrites?: string) {
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
    if (uids === undefined) this.entries.clear()
    else this.entries.clearTagged(uids)
  }

  /**
   * What traversal finds at `path`: kept, or read by `locate` once for every
   * caller asking meanwhile (core/kept.ts); kept when an object was found, has
   * no live lock, and no write was heard while it was read.
   */
  async read (path: string, locate: () => Promise<Traversal<Located>>): Promise<Traversal<Located>> {
    if (!this.notifications.listening) return await locate()
    return await this.entries.read(path, 0, async () => {
      const traversal = await locate()
      const { found } = traversal
      if (found === null || found.lock !== null) return { value: traversal, keep: false }
      // Shared by every request that reads it from now on: a change of it would be a bug (it throws, in strict mode).
      for (const row of found.lineage) Object.freeze(Object.freeze(row).data)
      Object.freeze(found.lineage)
      Object.freeze(found)
      return { value: Object.freeze(traversal) }
    })
  }
}
