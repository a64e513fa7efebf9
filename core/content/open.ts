import { Catalog } from '../catalog/catalog.js'
import type { Db } from '../db/db.js'
import { Outbox } from '../indexing/outbox.js'
import { ContentTypeRegistry } from './registry.js'
import { ContentStore } from './store.js'

export interface ContentCore {
  types: ContentTypeRegistry
  catalog: Catalog
  outbox: Outbox
  content: ContentStore
}

/**
 * The content side of every process: the content types (one folder each),
 * the catalogue with the columns they declare, the outbox and the store that
 * writes to all three.
 */
export async function openContent (db: Db, contentTypeDirs: string[]): Promise<ContentCore> {
  const types = await ContentTypeRegistry.load(contentTypeDirs)
  const catalog = new Catalog(types)
  const outbox = new Outbox(db)
  const content = new ContentStore(db, types, catalog, outbox)
  await catalog.ensureSchema(db, async (uids, q) => await content.indexables(uids, q))
  return { types, catalog, outbox, content }
}
