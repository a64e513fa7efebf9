import { RecencyMap } from '../../recency.js'
import { Bits } from './bits.js'

/** Lexeme ids below 2³¹: two of them as one number, the left one first (exact in a double). */
export const pairKey = (left: number, right: number): number => left * 2 ** 31 + right

/**
 * The documents where one lexeme stands right before another, for the pairs
 * of common words that phrases asked (TextIndex.phrase): what PostgreSQL's
 * `a <-> b` finds, read once by checking every document holding both words
 * and then kept exact as documents change, within a budget in bytes, the
 * least recently asked pair going first. A phrase of two common words then
 * costs an intersection instead of a check of a tenth of the catalogue
 * document by document. Only documents whose positions run without a gap
 * are in these sets: the others (`TextIndex`'s gapped documents) are checked
 * one by one, as before.
 */
export class WordPairs {
  private readonly kept = new RecencyMap<number, Bits>()
  private bytes = 0

  constructor (private readonly budget: number) {}

  /** The kept documents of `left` right before `right`, or undefined. */
  get (left: number, right: number): Bits | undefined {
    return this.kept.use(pairKey(left, right))
  }

  /** Keeps the documents of a pair just read, when they fit the budget. */
  keep (left: number, right: number, docs: Bits): void {
    if (docs.byteSize > this.budget) return
    const key = pairKey(left, right)
    const known = this.kept.peek(key)
    if (known !== undefined) this.bytes -= known.byteSize
    this.kept.set(key, docs)
    this.bytes += docs.byteSize
    while (this.bytes > this.budget && this.kept.size > 0) this.bytes -= this.kept.removeOldest()!.byteSize
  }

  /** Whether any pair is kept (a document's pairs need not be looked up otherwise). */
  get empty (): boolean { return this.kept.size === 0 }

  /** Document `doc` now has `left` right before `right`. */
  add (doc: number, left: number, right: number): void {
    const docs = this.kept.peek(pairKey(left, right))
    if (docs === undefined) return
    const before = docs.byteSize
    docs.add(doc)
    this.bytes += docs.byteSize - before
  }

  /** Document `doc` no longer has `left` right before `right` (or is gone). */
  delete (doc: number, left: number, right: number): void {
    this.kept.peek(pairKey(left, right))?.delete(doc)
  }

  get byteSize (): number { return this.bytes }
}
