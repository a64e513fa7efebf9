import { heapBytes } from '../heap-size.js'
import { Kept } from '../kept.js'

/**
 * A catalogue row as pages show it: the values of the metadata columns (in
 * the order its reader, CatalogSearch, lays them out) and what the access
 * rule reads: the principals allowed, the effective and expiry dates (µs
 * since the epoch, as PostgreSQL compares them) and the creator.
 */
export interface CatalogRow {
  readonly values: readonly unknown[]
  readonly allowed: readonly string[] | null
  readonly effective: number | null
  readonly expires: number | null
  readonly creator: string | null
}

/** A read under way of one row: null when the catalogue has no row of that uid. */
type Reading = Promise<CatalogRow | null>

/**
 * Catalogue rows kept by uid, whichever page or caller read them: a page of
 * the resident catalogue is its uids, and a row read for one page serves
 * every later page that shows it, for every caller (what a caller may see
 * of it is decided from the row itself, by its owner: CatalogSearch.rowsOf).
 * The least recently used go first, within a budget in bytes (core/kept.ts).
 * A write forgets the rows it changed: this process's at once, another's when
 * its notification arrives. Callers that need a row another caller is reading
 * wait for that read (a crowd after a write reads a popular page once); a
 * read under way when its row changes is given to its callers but not kept.
 */
export class KeptRows {
  private readonly kept: Kept<CatalogRow>
  private readonly reading = new Map<string, Reading>()

  /** `budget`: bytes (a row counted as its values and principals: the rest of it is a few numbers). */
  constructor (budget: number) {
    this.kept = new Kept<CatalogRow>(budget, row => heapBytes(row.values) + heapBytes(row.allowed))
  }

  /** Rows changed: those of `uids`, or any when not said. */
  changed (uids?: readonly string[]): void {
    if (uids === undefined) {
      this.kept.clear()
      this.reading.clear()
      return
    }
    this.kept.forget(uids)
    for (const uid of uids) this.reading.delete(uid)
  }

  /**
   * The rows of `uids` that exist, by uid: kept ones, those another caller is
   * reading, and the rest read by `read` in one statement (`keep` false: read,
   * never kept nor shared — while the writes of other processes are not heard).
   */
  async rows (uids: readonly string[], keep: boolean, read: (uids: string[]) => Promise<Map<string, CatalogRow>>): Promise<Map<string, CatalogRow>> {
    const found = new Map<string, CatalogRow>()
    const waits: Array<Promise<void>> = []
    const missing: string[] = []
    for (const uid of uids) {
      const row = keep ? this.kept.get(uid) : undefined
      if (row !== undefined) { found.set(uid, row); continue }
      const underWay = keep ? this.reading.get(uid) : undefined
      if (underWay !== undefined) waits.push(underWay.then(row => { if (row !== null) found.set(uid, row) }))
      else if (!found.has(uid) && !missing.includes(uid)) missing.push(uid)
    }
    if (missing.length > 0) await this.readMissing(missing, keep, read, found)
    await Promise.all(waits)
    return found
  }

  private async readMissing (missing: string[], keep: boolean, read: (uids: string[]) => Promise<Map<string, CatalogRow>>, found: Map<string, CatalogRow>): Promise<void> {
    const reading = read(missing)
    const readings = missing.map(uid => reading.then(rows => rows.get(uid) ?? null))
    // Callers that joined a read see its failure through their own chain; these are only shared.
    for (const one of readings) one.catch(() => {})
    if (keep) missing.forEach((uid, i) => this.reading.set(uid, readings[i]))
    try {
      const rows = await reading
      missing.forEach((uid, i) => {
        const row = rows.get(uid)
        if (row !== undefined) found.set(uid, row)
        // Still registered: no change of this row was heard since the read began.
        if (keep && this.reading.get(uid) === readings[i] && row !== undefined) this.kept.set(uid, row)
      })
    } finally {
      if (keep) missing.forEach((uid, i) => { if (this.reading.get(uid) === readings[i]) this.reading.delete(uid) })
    }
  }

  /** The bytes kept. */
  get bytes (): number { return this.kept.bytes }
}
