import type { Access } from '../query/model.js'
import { heapBytes } from '../heap-size.js'
import { type CacheFigures, Kept } from '../kept.js'
import { column } from './catalog.js'
import { microseconds } from './resident/columns.js'

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

/** What a row is read with for the access rule, under names no index has (an index name is an identifier). */
const ACCESS = { allowed: 'access allowed', effective: 'access effective', expires: 'access expires', creator: 'access creator' }

/** How catalogue rows are read for pages: every metadata column (`names`, in this order) and what the access rule reads, by uid. */
export class RowLayout {
  readonly select: string
  constructor (readonly names: readonly string[]) {
    this.select = `SELECT uid::text AS uid, ${names.map(column).join(', ')}${names.length > 0 ? ', ' : ''}"allowedRolesAndUsers" AS "${ACCESS.allowed}",
      ${microseconds(column('effective'))} AS "${ACCESS.effective}", ${microseconds(column('expires'))} AS "${ACCESS.expires}", "Creator" AS "${ACCESS.creator}"
      FROM catalog WHERE uid = ANY($1::uuid[])`
  }

  /** A row as `select` read it. */
  rowOf (row: Record<string, unknown>): CatalogRow {
    return {
      values: Object.freeze(this.names.map(name => row[name])),
      allowed: row[ACCESS.allowed] as string[] | null,
      effective: row[ACCESS.effective] as number | null,
      expires: row[ACCESS.expires] as number | null,
      creator: row[ACCESS.creator] as string | null
    }
  }
}

/**
 * The access rule of CatalogSearch's `accessClause` applied to one row at
 * `at` (µs since the epoch): the caller holds one of the principals allowed,
 * and the row is active (effective by then, not yet expired) unless the
 * caller sees inactive objects, or its own (`showInactiveOf`, the creator).
 */
export function mayView (row: CatalogRow, access: Access, at: number): boolean {
  const allowed = row.allowed
  if (allowed === null || !access.principals.some(principal => allowed.includes(principal))) return false
  if (access.showInactive) return true
  const active = (row.effective === null || row.effective <= at) && (row.expires === null || row.expires > at)
  return active || (access.showInactiveOf !== undefined && row.creator === access.showInactiveOf)
}

/**
 * Catalogue rows kept by uid, whichever page or caller read them: a page of
 * the resident catalogue is its uids, and a row read for one page serves
 * every later page that shows it, for every caller (what a caller may see
 * of it is decided from the row itself, by its owner: CatalogSearch.rowsOf).
 * The least recently used go first, within a budget in bytes (core/kept.ts).
 * A write forgets the rows it changed: this process's at once, another's when
 * its notification arrives; a read under way when its row changes is given
 * to its caller but not kept. A caller does not wait for another's read of
 * the same rows (under varied traffic two pages seldom read one row at the
 * same moment; a crowd asking one page right after a write each reads its
 * rows, where the SQL engine's kept pages are read once for all of it).
 */
export class KeptRows {
  private readonly kept: Kept<CatalogRow>
  /** The reads under way, by the uid of each row they read: a change of the row unregisters it, and what the read finds of it is not kept. */
  private readonly reading = new Map<string, object>()

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
   * The rows of `uids` that exist, by uid: kept ones, and the rest read by
   * `read` in one statement (`keep` false: read, never kept — while the
   * writes of other processes are not heard).
   */
  async rows (uids: readonly string[], keep: boolean, read: (uids: string[]) => Promise<Map<string, CatalogRow>>): Promise<Map<string, CatalogRow>> {
    const found = new Map<string, CatalogRow>()
    const missing: string[] = []
    for (const uid of uids) {
      const row = keep ? this.kept.get(uid) : undefined
      if (row !== undefined) found.set(uid, row)
      else if (!missing.includes(uid)) missing.push(uid)
    }
    if (missing.length === 0) return found
    const mine = {}
    if (keep) for (const uid of missing) this.reading.set(uid, mine)
    try {
      const rows = await read(missing)
      for (const uid of missing) {
        const row = rows.get(uid)
        if (row === undefined) continue
        found.set(uid, row)
        // Still registered: no change of this row was heard since the read began (nor another read of it began).
        if (keep && this.reading.get(uid) === mine) this.kept.set(uid, row)
      }
    } finally {
      if (keep) for (const uid of missing) if (this.reading.get(uid) === mine) this.reading.delete(uid)
    }
    return found
  }

  /** The bytes kept. */
  get bytes (): number { return this.kept.bytes }

  /** Its entries, bytes and look-ups (a row each), for the metrics. */
  figures (): CacheFigures { return this.kept.figures() }
}
