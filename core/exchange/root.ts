import type { ContentStore } from '../content/store.js'
import { checkWrite } from '../content/validation.js'
import { ApiError } from '../errors.js'
import { reindexSubtreeAccess } from '../security/subtree-access.js'
import type { ImportOptions } from './importer.js'
import type { ExportedRoot } from './reader.js'
import { refusal, type ExchangeReport } from './report.js'
import { stableJson } from './format.js'

/**
 * The local roles granted on the exported site root, before the content:
 * the objects imported after it are catalogued with them, and those the site
 * had already are re-indexed, set-based, as a sharing change at the root
 * does (core/security/subtree-access.ts).
 */
export async function importRootRoles (root: ExportedRoot, content: ContentStore): Promise<void> {
  await content.write(async write => {
    const { rows: [now] } = await write.tx.query<{ local_roles: unknown }>("SELECT local_roles FROM content WHERE path = '/' FOR UPDATE")
    if (stableJson(now.local_roles) === stableJson(root.localRoles)) return
    await write.tx.query("UPDATE content SET local_roles = $1 WHERE path = '/'", [JSON.stringify(root.localRoles)])
    await reindexSubtreeAccess(write, '/', row => content.typeOf(row))
  })
}

/**
 * The site root's own fields (its title, description and blocks: Volto's
 * home page), after the content, so that its links by UID find their
 * objects; checked as a PATCH of the root is. A root that fails is reported
 * and left as it was.
 */
export async function importRootFields (root: ExportedRoot, content: ContentStore, options: ImportOptions, report: ExchangeReport): Promise<void> {
  if (Object.keys(root.fields).length === 0) return
  const located = (await content.locate('/')).found!
  try {
    await content.update(located, async current => await checkWrite(root.type, root.fields, { ...options.writeContext, mode: 'update', stored: current.obj.data }))
    report.count('site root imported')
  } catch (err) {
    if (!(err instanceof ApiError)) throw err
    report.problem('site root not imported', root.source, refusal(err))
  }
}
