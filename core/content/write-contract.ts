import type { Queryable } from '../db/db.js'
import type { ContentRow, Located } from './rows.js'

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

/** What a write may do inside its transaction besides its own SQL. */
export interface Write {
  tx: Queryable
  /** Writes the object's catalogue row and records its index operation. */
  reindex: (obj: ContentRow, lineage: ContentRow[]) => Promise<void>
  /** `reindex` of many objects: their catalogue rows and index operations in a few statements. */
  reindexMany: (objects: Located[]) => Promise<void>
  /** Records that these objects leave the indexes. */
  unindex: (uids: string[]) => Promise<void>
  /**
   * Records the index operations of objects whose catalogue rows the caller
   * wrote itself, set-based (core/security/subtree-access.ts), in one
   * statement; `rowsOnly`: objects whose content row alone changed (a
   * folder's local roles), named as changed for what processes keep.
   */
  reindexed: (uids: string[], rowsOnly?: string[]) => Promise<void>
}
