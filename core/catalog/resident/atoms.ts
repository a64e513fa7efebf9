import { Bits } from './bits.js'
import { RecencyMap } from '../../recency.js'

/**
 * One filter of a query as a set of documents (Solr's filterCache entry):
 * `key` names it (the index, the operator and the value), `test` decides one
 * document from the values the resident catalogue holds.
 */
export interface AtomSpec {
  key: string
  test: (doc: number) => boolean
  /** The columns `test` reads: a document whose other columns changed is not tested again. */
  columns: readonly string[]
  /** The only documents that may pass, when a column knows them (a keyword value's documents): then only these are tested. */
  candidates?: () => readonly number[]
  /**
   * The value of a keyword column (a list, or one text) that every document passing `test` holds:
   * a new document is tested only against the filters of the values it holds, not every kept one.
   */
  gate?: { column: string, value: string }
}

interface Atom { spec: AtomSpec, set: Bits }

/**
 * The filters of recent queries, each a set of documents, kept within a
 * budget in bytes, the least recently used going first. A filter is read
 * once by a scan of every document (a few milliseconds for a million) and
 * then reused by every query that has it — the caller's principals, a
 * subject, a state, a path — intersected with the others in microseconds.
 * Unlike Solr's, which a commit throws away, they stay exact under writes:
 * a changed document is tested again against the kept filters that read a
 * column it changed (`changed`, found by column), and a new one against the
 * filters of the values it holds (`added`, found by their gates) and the
 * ungated ones: a write tests a few filters, not every one kept.
 */
export class Atoms {
  private readonly kept = new RecencyMap<string, Atom>()
  /** The kept filters that have a gate, by its column and value; the others are `ungated`. */
  private readonly gated = new Map<string, Map<string, Set<Atom>>>()
  private readonly ungated = new Set<Atom>()
  /** The kept filters by the columns they read. */
  private readonly byColumn = new Map<string, Set<Atom>>()
  private bytes = 0

  constructor (private readonly budget: number) {}

  /** The set of `spec`, kept or read by testing every live document. */
  get (spec: AtomSpec, live: Bits): Bits {
    const known = this.kept.use(spec.key)
    if (known !== undefined) return known.set
    const set = new Bits(live.capacity)
    if (spec.candidates !== undefined) {
      for (const doc of spec.candidates()) if (live.has(doc) && spec.test(doc)) set.add(doc)
    } else {
      live.forEach(doc => { if (spec.test(doc)) set.add(doc) })
    }
    const atom = { spec, set }
    if (set.byteSize <= this.budget) {
      this.kept.set(spec.key, atom)
      this.index(atom)
      this.bytes += set.byteSize
      this.evict()
    }
    return set
  }

  /**
   * A new document, never numbered before (so in no filter yet), now live: the filters it passes
   * take it. Of the gated filters only those of the values it holds in their columns (`valueOf`)
   * test it: a write that creates tests a handful of the thousands of filters a site's listings
   * leave (a path's each, a subject's each), not every one.
   */
  added (doc: number, valueOf: (column: string) => unknown): void {
    const take = (atom: Atom): void => {
      if (!atom.spec.test(doc)) return
      const before = atom.set.byteSize
      atom.set.add(doc)
      this.bytes += atom.set.byteSize - before
    }
    for (const atom of this.ungated) take(atom)
    for (const [column, byValue] of this.gated) {
      const held = valueOf(column)
      for (const value of Array.isArray(held) ? held : [held]) {
        if (typeof value === 'string') for (const atom of byValue.get(value) ?? []) take(atom)
      }
    }
    this.evict()
  }

  /**
   * A document changed (or is gone, `live` false): every kept filter tests it
   * again, or (`columns`: what changed in a document that was and stays live)
   * every kept filter that reads one of these columns.
   */
  changed (doc: number, live: boolean, columns?: ReadonlySet<string>): void {
    const retest = (atom: Atom): void => {
      const before = atom.set.byteSize
      if (live && atom.spec.test(doc)) atom.set.add(doc)
      else atom.set.delete(doc)
      this.bytes += atom.set.byteSize - before
    }
    if (columns === undefined) this.kept.forEach(retest)
    else {
      // The filters that read a changed column, each once.
      const reading = new Set<Atom>()
      for (const column of columns) for (const atom of this.byColumn.get(column) ?? []) reading.add(atom)
      reading.forEach(retest)
    }
    this.evict()
  }

  clear (): void {
    this.kept.clear()
    this.gated.clear()
    this.ungated.clear()
    this.byColumn.clear()
    this.bytes = 0
  }

  get byteSize (): number { return this.bytes }
  get size (): number { return this.kept.size }

  private evict (): void {
    while (this.bytes > this.budget && this.kept.size > 0) {
      const atom = this.kept.removeOldest()!
      this.unindex(atom)
      this.bytes -= atom.set.byteSize
    }
  }

  private index (atom: Atom): void {
    for (const column of atom.spec.columns) {
      let atoms = this.byColumn.get(column)
      if (atoms === undefined) this.byColumn.set(column, atoms = new Set())
      atoms.add(atom)
    }
    const { gate } = atom.spec
    if (gate === undefined) {
      this.ungated.add(atom)
      return
    }
    let byValue = this.gated.get(gate.column)
    if (byValue === undefined) this.gated.set(gate.column, byValue = new Map())
    let atoms = byValue.get(gate.value)
    if (atoms === undefined) byValue.set(gate.value, atoms = new Set())
    atoms.add(atom)
  }

  private unindex (atom: Atom): void {
    for (const column of atom.spec.columns) {
      const atoms = this.byColumn.get(column)
      atoms?.delete(atom)
      if (atoms?.size === 0) this.byColumn.delete(column)
    }
    const { gate } = atom.spec
    if (gate === undefined) {
      this.ungated.delete(atom)
      return
    }
    const byValue = this.gated.get(gate.column)
    const atoms = byValue?.get(gate.value)
    atoms?.delete(atom)
    if (atoms?.size === 0) byValue!.delete(gate.value)
    if (byValue?.size === 0) this.gated.delete(gate.column)
  }
}
