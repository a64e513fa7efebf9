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
}

interface Atom { spec: AtomSpec, set: Bits }

/**
 * The filters of recent queries, each a set of documents, kept within a
 * budget in bytes, the least recently used going first. A filter is read
 * once by a scan of every document (a few milliseconds for a million) and
 * then reused by every query that has it — the caller's principals, a
 * subject, a state, a path — intersected with the others in microseconds.
 * Unlike Solr's, which a commit throws away, they stay exact under writes:
 * every changed document is tested again against every kept filter that
 * reads a column it changed (`changed`), a few hundred tests a write at most.
 */
export class Atoms {
  private readonly kept = new RecencyMap<string, Atom>()
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
      this.bytes += set.byteSize
      this.evict()
    }
    return set
  }

  /**
   * A document changed (or is gone, `live` false): every kept filter tests it
   * again, or (`columns`: what changed in a document that was and stays live)
   * every kept filter that reads one of these columns.
   */
  changed (doc: number, live: boolean, columns?: ReadonlySet<string>): void {
    this.kept.forEach(atom => {
      if (columns !== undefined && !atom.spec.columns.some(column => columns.has(column))) return
      const before = atom.set.byteSize
      if (live && atom.spec.test(doc)) atom.set.add(doc)
      else atom.set.delete(doc)
      this.bytes += atom.set.byteSize - before
    })
    this.evict()
  }

  clear (): void {
    this.kept.clear()
    this.bytes = 0
  }

  get byteSize (): number { return this.bytes }
  get size (): number { return this.kept.size }

  private evict (): void {
    while (this.bytes > this.budget && this.kept.size > 0) this.bytes -= this.kept.removeOldest()!.set.byteSize
  }
}
