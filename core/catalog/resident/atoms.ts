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

/** Adds a filter to the set of `key`, made when it is the first. */
function addTo (sets: Map<string, Set<Atom>>, key: string, atom: Atom): void {
  let atoms = sets.get(key)
  if (atoms === undefined) sets.set(key, atoms = new Set())
  atoms.add(atom)
}

/** Takes a filter out of the set of `key`, dropped when it is the last. */
function removeFrom (sets: Map<string, Set<Atom>>, key: string, atom: Atom): void {
  const atoms = sets.get(key)
  atoms?.delete(atom)
  if (atoms?.size === 0) sets.delete(key)
}

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
    const take = (atom: Atom): void => { if (atom.spec.test(doc)) this.place(atom, doc, true) }
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
   * the kept filters that read one of these columns, found by column.
   */
  changed (doc: number, live: boolean, columns?: ReadonlySet<string>): void {
    const retest = (atom: Atom): void => { this.place(atom, doc, live && atom.spec.test(doc)) }
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

  /** Puts `doc` in the filter's set or takes it out, counting what the set's bytes changed. */
  private place (atom: Atom, doc: number, member: boolean): void {
    const before = atom.set.byteSize
    if (member) atom.set.add(doc)
    else atom.set.delete(doc)
    this.bytes += atom.set.byteSize - before
  }

  private evict (): void {
    while (this.bytes > this.budget && this.kept.size > 0) {
      const atom = this.kept.removeOldest()!
      this.unindex(atom)
      this.bytes -= atom.set.byteSize
    }
  }

  private index (atom: Atom): void {
    for (const column of atom.spec.columns) addTo(this.byColumn, column, atom)
    const { gate } = atom.spec
    if (gate === undefined) this.ungated.add(atom)
    else {
      let byValue = this.gated.get(gate.column)
      if (byValue === undefined) this.gated.set(gate.column, byValue = new Map())
      addTo(byValue, gate.value, atom)
    }
  }

  private unindex (atom: Atom): void {
    for (const column of atom.spec.columns) removeFrom(this.byColumn, column, atom)
    const { gate } = atom.spec
    if (gate === undefined) this.ungated.delete(atom)
    else {
      const byValue = this.gated.get(gate.column)
      if (byValue === undefined) return
      removeFrom(byValue, gate.value, atom)
      if (byValue.size === 0) this.gated.delete(gate.column)
    }
  }
}
