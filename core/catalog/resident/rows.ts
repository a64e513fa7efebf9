import { heapBytes } from '../../heap-size.js'
import { Kept } from '../../kept.js'

/** A catalogue row as a page shows it: its metadata columns by index name, `uid`, and the transaction that wrote it (`changed_by`, as text). */
export type MetadataRow = Readonly<Record<string, unknown>> & { readonly uid: string, readonly changed_by: string | null }

/** What is kept of a row: itself, and the transaction that wrote it. */
interface KeptRow { writer: number, row: MetadataRow }

/**
 * The metadata rows of the documents the resident catalogue's pages name, by
 * uid, within a budget in bytes (the least recently shown go first): a page
 * shows 25 rows, and a crowd's varied queries show the same documents in
 * many pages (a talk is in its folder's listing, under its subjects, in a
 * date range, sorted every way), so rows are kept by document, not by page.
 * A kept row holds while its document is the row the same transaction wrote
 * (`changed_by`): no write needs to look for what it made stale, and a row is
 * shown only when it is exactly the row the page was decided on — whatever
 * that row's writer later changed, and whether or not this process has heard of it yet.
 */
export class ResidentRows {
  private readonly kept: Kept<KeptRow>

  constructor (bytes: number) {
    this.kept = new Kept<KeptRow>(bytes, ({ row }) => heapBytes(row))
  }

  /**
   * The rows of `uids`, in order, as written by `writers` (each document's
   * writer when the page was decided): those kept, and the others read by
   * `read` — which checks the caller's access against the table as it is
   * now, and may leave some out. A row read is kept only when it is the row
   * the page was decided on: PostgreSQL may already hold a later one (shown,
   * since the table is the truth, but not kept for callers who were not checked against it).
   */
  async rowsOf (uids: readonly string[], writers: readonly number[], read: (uids: string[]) => Promise<MetadataRow[]>): Promise<MetadataRow[]> {
    const found = new Map<string, MetadataRow>()
    const missing: string[] = []
    uids.forEach((uid, i) => {
      const kept = this.kept.get(uid)
      if (kept !== undefined && kept.writer === writers[i]) found.set(uid, kept.row)
      else missing.push(uid)
    })
    if (missing.length > 0) {
      const writerOf = new Map(uids.map((uid, i) => [uid, writers[i]]))
      for (const row of await read(missing)) {
        Object.freeze(row)
        found.set(row.uid, row)
        const writer = writerOf.get(row.uid) as number
        if (Number(row.changed_by) === writer) this.kept.set(row.uid, { writer, row })
      }
    }
    return uids.map(uid => found.get(uid)).filter((row): row is MetadataRow => row !== undefined)
  }

  /** Bytes held. */
  get byteSize (): number { return this.kept.bytes }
}
