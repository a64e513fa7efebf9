import type { IndexDefinition } from '../indexes.js'
import { Activity } from './activity.js'
import { Atoms } from './atoms.js'
import { Bits } from './bits.js'
import type { Column } from './column.js'
import { columnOf } from './columns.js'
import { compareText } from './text-order.js'
import { SortedOrder } from './sorted-order.js'
import { TextIndex } from './text-index.js'

/** A catalogue row as the resident catalogue reads it: `uid`, `searchable` (tsvector text) and a value under each column's index name. */
export type ResidentRow = Record<string, unknown> & { uid: string, searchable?: string | null }

/**
 * What the resident catalogue holds: every catalogue row as a document
 * number, its columns' values (core/catalog/resident/columns.ts), its words
 * (text-index.ts), a sorted order per sortable index, the filters of recent
 * queries (atoms.ts) and the inactive documents (activity.ts) — each kept
 * exact by `put` and `remove`, which every change of a row goes through.
 * Document numbers are never reused: a removed row's number stays free, so
 * that a set read before the removal cannot name another document.
 */
export class ResidentState {
  readonly live = new Bits()
  readonly columns = new Map<string, Column>()
  readonly text: TextIndex
  readonly atoms: Atoms
  readonly activity: Activity
  /** Sorted orders by index name; `created` is also the catalogue order. */
  readonly orders = new Map<string, SortedOrder>()
  private readonly uids: string[] = []
  /** How many times each document changed: what is kept of a document (a rank) holds while its version does. */
  private versions = new Uint32Array(1024)
  private readonly docOf = new Map<string, number>()
  private readonly created: Column

  /**
   * `indexes`: the catalogue's indexes; `sortsText`: whether PostgreSQL
   * compares text in code-point order (C collation), so that text sorts and
   * ranges can be answered here.
   */
  constructor (indexes: Iterable<IndexDefinition>, filterBytes: number, readonly sortsText: boolean) {
    for (const index of indexes) {
      if (!index.indexed && index.name !== 'created') continue
      const held = columnOf(index)
      if (held !== null) this.columns.set(index.name, held)
    }
    const need = (name: string): Column => {
      const held = this.columns.get(name)
      if (held === undefined) throw new Error(`The resident catalogue needs the catalogue column ${name}.`)
      return held
    }
    this.created = need('created')
    const effective = need('effective')
    const expires = need('expires')
    need('allowedRolesAndUsers')
    need('path_parents')
    need('path_depth')
    this.activity = new Activity(doc => effective.get(doc) as number | null, doc => expires.get(doc) as number | null)
    // A quarter of the filters' budget for the pairs of common words that phrases ask (text-index.ts, word-pairs.ts).
    const pairBytes = Math.floor(filterBytes / 4)
    this.text = new TextIndex(pairBytes)
    this.atoms = new Atoms(filterBytes - pairBytes)
  }

  get size (): number { return this.docOf.size }
  versionOf (doc: number): number { return this.versions[doc] ?? 0 }

  private changedVersion (doc: number): void {
    if (doc >= this.versions.length) {
      const grown = new Uint32Array(Math.max(doc + 1, this.versions.length * 2))
      grown.set(this.versions)
      this.versions = grown
    }
    this.versions[doc]++
  }

  uidOf (doc: number): string { return this.uids[doc] }
  docNumber (uid: string): number | undefined { return this.docOf.get(uid) }
  column (name: string): Column | undefined { return this.columns.get(name) }

  /** The order ZCatalog gives ties and unsorted results: creation, then uid (TIE_BREAKERS). */
  readonly tieBreak = (a: number, b: number): number => this.created.compare(a, b) || compareText(this.uids[a], this.uids[b])

  /** Whether an index's values sort here as PostgreSQL sorts them. */
  sortable (index: IndexDefinition): boolean {
    return this.columns.has(index.name) && index.sortable && (index.kind !== 'field' || this.sortsText)
  }

  /** Builds the sorted orders of the sortable indexes (once every row is in), one at a time between other work. */
  async buildOrders (yieldBetween: () => Promise<void>): Promise<void> {
    const docs = this.live.toArray()
    for (const held of this.columns.values()) {
      if (!this.sortable(held.index)) continue
      this.orders.set(held.index.name, SortedOrder.build(docs, ...this.orderFunctions(held)))
      await yieldBetween()
    }
  }

  private orderFunctions (held: Column): [(a: number, b: number) => number, (a: number, b: number) => boolean, (doc: number) => boolean] {
    return [(a, b) => held.compare(a, b) || this.tieBreak(a, b), (a, b) => held.same(a, b), doc => held.isNull(doc)]
  }

  /** Adds or replaces a row. */
  put (row: ResidentRow): void {
    const known = this.docOf.get(row.uid)
    const doc = known ?? this.uids.length
    // The columns an update changed (undefined: a new document): only the orders and filters that read them test it again.
    const changed = known === undefined
      ? undefined
      : new Set([...this.columns].filter(([name, held]) => !held.holds(doc, row[name])).map(([name]) => name))
    // A document keeps its place in an order whose value and tie-breakers (creation, uid) did not change: most edits move it in one or two.
    const placed = changed !== undefined && !changed.has(this.created.index.name)
    const moved = [...this.orders].filter(([name]) => !placed || changed.has(name)).map(([, order]) => order)
    if (known === undefined) {
      this.uids.push(row.uid)
      this.docOf.set(row.uid, doc)
    } else {
      for (const order of moved) order.remove(doc)
    }
    // A column that holds the row's value already is left alone (a keyword column would copy its list and compare its postings).
    for (const [name, held] of this.columns) if (changed === undefined || changed.has(name)) held.set(doc, row[name])
    if ('searchable' in row) this.text.set(doc, row.searchable ?? null)
    this.live.add(doc)
    this.changedVersion(doc)
    for (const order of moved) order.insert(doc)
    if (known === undefined) this.atoms.added(doc, name => this.columns.get(name)?.get(doc))
    else this.atoms.changed(doc, true, changed)
    this.activity.changed(doc, true)
  }

  remove (uid: string): void {
    const doc = this.docOf.get(uid)
    if (doc === undefined) return
    for (const order of this.orders.values()) order.remove(doc)
    this.live.delete(doc)
    this.changedVersion(doc)
    this.docOf.delete(uid)
    this.text.remove(doc)
    for (const held of this.columns.values()) held.clear(doc)
    this.atoms.changed(doc, false)
    this.activity.changed(doc, false)
  }

  /** Bytes held, all parts together. */
  get byteSize (): number {
    let bytes = this.live.byteSize + this.atoms.byteSize + this.activity.byteSize + this.text.byteSize + this.uids.length * 120
    for (const held of this.columns.values()) bytes += held.byteSize()
    for (const order of this.orders.values()) bytes += order.byteSize
    return bytes
  }
}
