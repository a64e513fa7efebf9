import { dropBinaries, keepBinary, keepUploadedFile } from './blobs.js'
import { indexLinks } from './link-index.js'
import type { HistoryEntry, Located } from './rows.js'
import type { Statement } from './statement.js'
import { endUpload } from './uploads.js'
import type { CheckedWrite } from './validation.js'
import { addVersion, type VersionNote } from './versions.js'

/** What a write of one object adds besides its row: its history entry, its version, what it links to, its binaries. */
export interface FollowingParts { write?: CheckedWrite, history?: HistoryEntry, before?: Located, version?: VersionNote }

/**
 * The parts of a write of one object (core/content/store.ts, `writeOne`) that
 * follow its row's change, the CTE `changed`: each reads the uid `changed`
 * returns, so that none is written when the row was not (a version check
 * that failed). `versionsKept`: the retention of versions (0: none kept).
 */
export function followChange (statement: Statement, result: Located, parts: FollowingParts, versionsKept: number): void {
  const { p } = statement
  const { history, write, before, version } = parts
  if (history !== undefined) {
    statement.with('history', `INSERT INTO workflow_history (uid, seq, action, actor, comments, review_state, time)
      SELECT uid, (SELECT COALESCE(max(seq) + 1, 0) FROM workflow_history WHERE workflow_history.uid = changed.uid),
        ${p(history.action)}, ${p(history.actor)}, ${p(history.comments)}, ${p(history.review_state)}, ${p(history.time)} FROM changed`)
  }
  // Versioning off (VERSIONS_KEPT=0): the versions kept so far stay as they are.
  if (version !== undefined && versionsKept > 0) addVersion(statement, 'changed', result.obj, version, versionsKept)
  indexLinks(statement, 'changed', result, before)
  for (const [i, [field, binary]] of [...write?.binaries ?? []].entries()) {
    if (binary.upload !== undefined) statement.with(`upload${i}`, endUpload(p(binary.upload), 'changed'))
    statement.with(`binary${i}`, 'bytes' in binary ? keepBinary(binary.store, 'changed', p(field), p(binary.bytes)) : keepUploadedFile('changed', p(field), `upload${i}`))
  }
  const cleared = Object.entries(write?.values ?? {}).filter(([, value]) => value === null).map(([field]) => field)
  if (cleared.length > 0) {
    statement.with('cleared_blobs', dropBinaries('blobs', 'changed', p(cleared)))
    statement.with('cleared_files', dropBinaries('files', 'changed', p(cleared)))
  }
}
