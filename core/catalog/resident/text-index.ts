// One file, over 350 lines, on purpose: the postings, the positions arena, the tsvector parser, the ranks and
// the query evaluator share private representations (sparse arrays or bitsets a lexeme, offsets
// into one arena) that a split would have to export; they change together, and
// test/unit/resident-text-index.test.ts tests them together against PostgreSQL's `@@`.
import type { FullText } from '../../query/text.js'
import { renderTsquery } from '../tsquery.js'
import { Bits } from './bits.js'
import { coverDensity } from './cover-density.js'
import { lowerBound } from './lower-bound.js'
import { PositionsArena, SEGMENT_ENTRIES } from './positions-arena.js'
import type { Slicer } from './slicer.js'
import { pairKey, WordPairs } from './word-pairs.js'

/** PostgreSQL's last word position (MAXENTRYPOS - 1): every later word of a document stands at it. */
const LAST_POSITION = 16383
/** How many positions of a lexeme PostgreSQL keeps in one document (MAXNUMPOS): the lowest ones. */
const MAX_POSITIONS = 256
/** Query words longer than this are left to PostgreSQL (its parser drops words over 2047 bytes). */
const LONGEST_WORD = 200
/** A query word that PostgreSQL's parser reads as one token and the simple dictionary keeps as it is. */
const PLAIN_WORD = /^[a-z0-9]+$/
/**
 * Digits, `e`, digits, then a letter: the default parser reads the number in
 * scientific notation as a token of its own, so `1e5x` is `'1e5' <-> 'x'` and
 * `1e5x:*` even `'1e5':* <-> 'x':*`. Checked against PostgreSQL 15 for every
 * string of letters and digits up to three characters, every string of 0, 1,
 * a, e and x up to seven and 300,000 random longer ones: these are the only
 * ones it does not take whole.
 */
const SPLIT_WORD = /^[0-9]+e[0-9]+[a-z]/

/** A position and a lexeme id as one sortable number: position × 2³² + id (exact in a double). */
const POSITION_UNIT = 2 ** 32
/** A lexeme id and a position as one sortable number, for putting a document's positions in PostgreSQL's order per lexeme. */
const LEXEME_UNIT = LAST_POSITION + 1

/** New lexemes wait in a small sorted list before they are merged into the big one: an insertion moves at most this many. */
const PENDING_LEXEMES = 2048
/** A posting list becomes a bitset when the bitset is smaller (4 bytes a document against a bit a document number), from this many documents on. */
const DENSE_FROM = 16
/** A bitset becomes a list again when it holds fewer than one document in this many (the list then a quarter of its size: no flapping around the threshold). */
const SPARSE_RATIO = 128
/** What V8 spends on a typed array beside its elements (the object, its buffer and their bookkeeping; measured on Node 20: ~190 bytes). */
const TYPED_ARRAY_OVERHEAD = 190
/** What a lexeme costs beside its characters: the string's header, the Map entry, its slots in the id and sorted lists and the per-lexeme arrays. */
const LEXEME_OVERHEAD = 16 + 40 + 8 + 16 + 8 + 12

const QUOTE = 39
const BACKSLASH = 92
const COLON = 58
const COMMA = 44

const isBlank = (c: number): boolean => c === 32 || (c >= 9 && c <= 13)
const isDigit = (c: number): boolean => c >= 48 && c <= 57
/** A weight after a position: A to D in either case, or `*` (which tsvector input takes for A). */
const isWeight = (c: number): boolean => (c >= 65 && c <= 68) || (c >= 97 && c <= 100) || c === 42
/** A weight's class as PostgreSQL numbers them (D = 0 … A = 3); a position without one is D. */
const weightClass = (c: number): number => c === 42 ? 3 : 3 - ((c | 32) - 97)
const WEIGHT_A = 3
const WEIGHT_B = 2
/** `titleEnds` of a document whose weights are not A up to some position and B after it (nor all one of them): ranked by PostgreSQL. */
const IRREGULAR_WEIGHTS = 0xffff
/** The bits of a document's signature of adjacent lexemes (`pairBits`), in 32-bit words. */
const PAIR_WORDS = 16
/**
 * The bits of two lexemes standing one after the other, among PAIR_WORDS × 32:
 * two (`which` 0 or 1) from one hash, so that a document of a hundred pairs
 * passes for a pair it lacks one time in ten, not one in three as with one
 * bit among 256 (at a million documents, every check so spared is a read of
 * a document's positions).
 */
const pairBit = (left: number, right: number, which: number): number => {
  const hash = Math.imul(left, 0x9e3779b1) ^ Math.imul(right, 0x85ebca77)
  return which === 0 ? hash >>> 23 : (hash >>> 14) & 511
}
/**
 * A pair of adjacent words is read for every document and kept (WordPairs)
 * when each of its words is held by at least one document in this many:
 * then checking the documents one by one would cost more than the bitset kept.
 */
const PAIR_KEPT_FROM = 32
/** A slice of a pair read in slices (`readPairs`): words of its set of candidates (32 documents each) checked before the slicer is asked whether to pause. */
const SLICE_WORDS = 64
/** What the kept pairs of adjacent words may hold when not told (bytes). */
const DEFAULT_PAIR_BYTES = 16 * 1024 * 1024
/** Query operands a rank tells apart (a bit each). */
const MOST_RANKED_OPERANDS = 31

/** A word of a tsquery, with `:*` when it is a prefix. */
interface Operand { word: string, prefix: boolean }

/** Pairs of adjacent words read in slices (TextIndex.readPairs), to be settled or abandoned at once. */
export interface PairsRead {
  /** The pairs' documents exact for the index as it is now, by `pairKey`; kept too. */
  settle: () => ReadonlyMap<number, Bits>
  abandon: () => void
}

/** What renderTsquery produces, parsed: operands, phrases of operands, `!`, `&` and `|`. */
type Node =
  | { kind: 'word', operand: Operand }
  | { kind: 'phrase', operands: Operand[] }
  | { kind: 'not', child: Node }
  | { kind: 'and' | 'or', left: Node, right: Node }

/**
 * A lexeme as a string of its own. A slice of 13 characters or more is, in
 * V8, a view into the string it was cut from: kept in the dictionary it would
 * hold the whole tsvector text it came from for as long as the lexeme lives.
 */
const detached = (word: string): string => word.length < 13 ? word : JSON.parse(JSON.stringify(word)) as string

/** A lexeme of tsvector text without its escapes: `''` is a quote, a backslash takes the next character as it is. */
const unescaped = (text: string): string => text.replace(/''|\\[\s\S]/g, pair => pair === "''" ? "'" : pair[1])

const malformed = (text: string): Error => new Error(`Malformed tsvector text: ${text.length > 80 ? `${text.slice(0, 80)}…` : text}`)

/**
 * PostgreSQL's `searchable @@ to_tsquery('simple', q)` answered in memory, for
 * the tsquery that renderTsquery (core/catalog/tsquery.ts) makes of full text.
 *
 * Every lexeme has an id, and a set of documents: a sorted list while few
 * documents hold it, a bitset (Bits) once the list would be bigger than the
 * bitset, so that the Zipfian head of a vocabulary costs a bit a document and
 * its long tail a few bytes a lexeme. A word is its lexeme's set; a prefix
 * the union of the sets of the lexemes it begins, found by binary search in
 * the lexemes sorted. A phrase is the intersection of its words' sets and,
 * for adjacent common words, of their pair's documents (kept: word-pairs.ts),
 * checked document by document against the positions: per document its
 * lexeme ids in position order, in an arena of large segments shared by all
 * documents (positions-arena.ts), so that a million documents are not a
 * million objects. A document's positions
 * nearly always run without a gap (a catalogue text is its words one after
 * the other): then its first position is all that is kept of them, and a
 * phrase is a run of ids; otherwise its positions follow its ids.
 *
 * `matches` answers null where it cannot be sure to find what PostgreSQL
 * finds: a query word PostgreSQL's parser would read otherwise than as one
 * token (anything but ASCII letters and digits, a number in scientific
 * notation running into letters, a very long word), or a phrase to check in a
 * document whose tsvector has a lexeme without positions.
 */
export class TextIndex {
  /** Lexeme ids by lexeme, and the lexemes by id. */
  private readonly ids = new Map<string, number>()
  private readonly lexemes: string[] = []
  /** The lexemes in order, with their ids: a big list, and the new ones in a small list until it is merged in. */
  private sortedWords: string[] = []
  private sortedIds: number[] = []
  private pendingWords: string[] = []
  private pendingIds: number[] = []

  /** Per lexeme id: how many documents hold it; the document when there is only one (no list then); the list or bitset otherwise. */
  private docCounts = new Int32Array(1024)
  private soleDoc = new Int32Array(1024)
  private readonly postings: Array<Int32Array | Bits | undefined> = []
  /** Per lexeme id: the mark of the last operation that met it (telling a document's distinct lexemes, and what an update keeps). */
  private marks = new Int32Array(1024)
  private epoch = 0

  /**
   * The arena: per document a run of its lexeme ids in position order (then
   * by id). When the positions run without a gap from `firsts[doc]` on —
   * every text of up to 16383 words with no word more than 256 times — that
   * is all; otherwise (`firsts[doc]` is 0) as many positions follow the ids.
   */
  private readonly runs: PositionsArena
  /** Per document: the arena's segment and offset of its run, how many (position, lexeme) pairs it has, and its first position when they run without a gap. */
  private segmentOf = new Int32Array(1024)
  private starts = new Int32Array(1024)
  private lengths = new Int32Array(1024)
  private firsts = new Uint16Array(1024)
  /**
   * Per document: the last position of weight A, all after it B (the
   * catalogue's title, then the rest of its text); IRREGULAR_WEIGHTS when its
   * weights are otherwise or its positions have a gap.
   */
  private titleEnds = new Uint16Array(1024)
  /**
   * Per document, PAIR_WORDS words: a bit for each two lexemes that stand one
   * after the other in it (`pairBit`), all bits when its positions have a
   * gap. A phrase whose adjacent words' bit is not set is not in the document:
   * most candidates of a phrase of two common words are dismissed without
   * reading their positions (a catalogue text of 40 words sets about one bit in
   * seven, one of a hundred about a third; a long one sets them all, and then
   * only costs its 64 bytes).
   */
  private pairBits = new Uint32Array(1024 * PAIR_WORDS)
  /** Documents set, those whose positions have a gap (`firsts` 0), those with a lexeme without positions, and those whose tsvector is NULL. */
  private readonly held = new Bits()
  private readonly gapped = new Bits()
  private readonly stripped = new Bits()
  private readonly nulls = new Bits()
  /** One past the highest document number set: how big a set of documents must be. */
  private docLimit = 0
  /** The documents of common pairs of adjacent words that phrases asked, kept exact. */
  private readonly pairs: WordPairs
  /** Pair reads in slices under way (`readPairs`), and the documents set or removed since the first of them began, in order. */
  private reads = 0
  private readonly changedDuringReads: number[] = []

  /** A segment of the arena that a release left more than half garbage: compacted once the change is done (`compactPending`). */
  private pendingCompaction = -1

  /** `pairBytes`: what the kept pairs of adjacent words may hold (WordPairs); `segmentEntries`: the arena's segments (PositionsArena). */
  constructor (pairBytes = DEFAULT_PAIR_BYTES, segmentEntries = SEGMENT_ENTRIES) {
    this.pairs = new WordPairs(pairBytes)
    this.runs = new PositionsArena(segmentEntries)
  }

  /**
   * Scratch of `parse`: the pairs of a document as sortable numbers; the
   * lexeme id at each position, with the mark of the parse that put it there;
   * its distinct lexeme ids; its first position when they run without a gap.
   */
  private keys = new Float64Array(1024)
  private readonly byPosition = new Int32Array(LAST_POSITION + 1)
  private readonly placed = new Int32Array(LAST_POSITION + 1)
  private distinct = new Int32Array(256)
  private distinctCount = 0
  private first = 0
  /** Of the last parse: the highest position of weight A, the lowest of another weight, whether those are all B. */
  private lastA = 0
  private firstOther = 0
  private othersB = true
  /** Scratch of `rank`: a document's entries, and the operands of each lexeme id (cleared after each query). */
  private entryPositions = new Int32Array(256)
  private entryWords = new Int32Array(256)
  private entryClasses = new Uint8Array(256)
  private operandsOf = new Int32Array(1024)

  /** Replaces what document `doc` holds by the tsvector given in PostgreSQL's text output form (e.g. `'abc':1A,4B 'de':2A`), or empty/null for none. */
  set (doc: number, tsvector: string | null): void {
    if (!Number.isInteger(doc) || doc < 0) throw new RangeError(`Not a document number: ${doc}`)
    const mark = this.nextEpoch()
    // Parsed first: malformed text throws before anything is changed.
    const pairs = this.parse(tsvector ?? '', mark)
    this.ensureDoc(doc)
    if (this.reads > 0) this.changedDuringReads.push(doc)
    // What the document held before: the lexemes it keeps keep their postings (an update rarely changes many).
    if (this.held.has(doc)) this.release(doc, mark)
    for (let i = 0; i < this.distinctCount; i++) {
      const id = this.distinct[i]
      if (this.marks[id] === mark) this.addPosting(id, doc)
    }
    const { first, keys, runs } = this
    runs.allocate(doc, first > 0 ? pairs : 2 * pairs)
    const arena = runs.segments[runs.segment]
    const start = runs.offset
    if (first > 0) {
      arena.set(this.byPosition.subarray(first, first + pairs), start)
    } else {
      for (let i = 0; i < pairs; i++) {
        const position = Math.floor(keys[i] / POSITION_UNIT)
        arena[start + i] = keys[i] - position * POSITION_UNIT
        arena[start + pairs + i] = position
      }
    }
    this.segmentOf[doc] = runs.segment
    this.starts[doc] = start
    this.lengths[doc] = pairs
    this.firsts[doc] = first
    this.titleEnds[doc] = first > 0 && this.othersB && this.lastA < this.firstOther ? this.lastA : IRREGULAR_WEIGHTS
    this.signPairs(doc, first > 0 ? pairs : -1)
    this.held.add(doc)
    if (first === 0 && pairs > 0) this.gapped.add(doc)
    else this.gapped.delete(doc)
    // `NULL @@ q` is null, never true: such a document matches nothing, not even `!x`.
    if (tsvector === null) this.nulls.add(doc)
    else this.nulls.delete(doc)
    // Position 0 (a lexeme without positions) sorts first.
    if (first === 0 && pairs > 0 && arena[start + pairs] === 0) this.stripped.add(doc)
    else this.stripped.delete(doc)
    this.compactPending()
  }

  /** Forgets document `doc`. */
  remove (doc: number): void {
    if (!this.held.has(doc)) return
    if (this.reads > 0) this.changedDuringReads.push(doc)
    this.release(doc, this.nextEpoch())
    this.held.delete(doc)
    this.gapped.delete(doc)
    this.stripped.delete(doc)
    this.nulls.delete(doc)
    this.compactPending()
  }

  /**
   * The documents among `universe` (every live document) that match `text`
   * exactly as `searchable @@ to_tsquery('simple', renderTsquery(text))`
   * would; null when this index cannot be sure to answer as PostgreSQL would
   * (then the caller asks PostgreSQL). Nothing when nothing searchable is
   * left of the text (the catalogue's SQL is then `false`). `read`: pairs of
   * adjacent words read just before (`readPairs`), by `pairKey`.
   */
  matches (text: FullText, universe: Bits, read?: ReadonlyMap<number, Bits>): Bits | null {
    const tsquery = renderTsquery(text)
    if (tsquery === null) return new Bits()
    // The very string PostgreSQL would get, parsed back: whatever renderTsquery does, both read the same query.
    const node = parseTsquery(tsquery)
    if (node === null) return null
    // Documents of the universe that are not held are empty (they match `!x`); NULL ones match nothing.
    const searchable = universe.temporaryClone().andNot(this.nulls)
    return this.evaluate(node, searchable, Math.max(searchable.capacity, this.docLimit), read)
  }

  /**
   * The common pairs of adjacent words in `text`'s phrases whose documents
   * are not kept: what `matches` would read now, checking every document
   * holding both words one by one (at a million documents, for two common
   * words, tens of milliseconds, during which the process answers nothing).
   */
  pairsToRead (text: FullText): Array<[number, number]> {
    const tsquery = renderTsquery(text)
    const node = tsquery === null ? null : parseTsquery(tsquery)
    const toRead: Array<[number, number]> = []
    const visit = (at: Node): void => {
      if (at.kind === 'not') visit(at.child)
      else if (at.kind === 'and' || at.kind === 'or') {
        visit(at.left)
        visit(at.right)
      } else if (at.kind === 'phrase') {
        const ids = at.operands.map(operand => this.idsOf(operand))
        for (let k = 0; k + 1 < ids.length; k++) {
          if (ids[k].length !== 1 || ids[k + 1].length !== 1) continue
          const [left, right] = [ids[k][0], ids[k + 1][0]]
          if (this.isCommonPair(left, right) && this.pairs.get(left, right) === undefined) toRead.push([left, right])
        }
      }
    }
    if (node !== null) visit(node)
    return toRead
  }

  /**
   * Reads the documents of these pairs of adjacent words in slices, letting
   * other work run between them (`slicer`). What it answers must be settled
   * (or abandoned) at once: `settle` checks again, in one go, the documents
   * set or removed during the read, keeps the pairs (WordPairs) and answers
   * them exact for the index as it is then; `matches` with them must follow
   * before anything else changes the index.
   */
  async readPairs (toRead: Array<[number, number]>, slicer: Slicer): Promise<PairsRead> {
    this.reads++
    const from = this.changedDuringReads.length
    let open = true
    const finish = (): void => {
      if (!open) return
      open = false
      if (--this.reads === 0) this.changedDuringReads.length = 0
    }
    // By key: a pair asked twice is read once.
    const read = new Map<number, { left: number, right: number, together: Bits }>()
    try {
      for (const [left, right] of toRead) {
        if (read.has(pairKey(left, right))) continue
        const together = this.pairCandidates(left, right, this.docLimit)
        // A slice is a run of the set's words; checkPhrase looks the arrays up again at each (a change may have grown them).
        for (let w = 0; w < together.words.length; w += SLICE_WORDS) {
          if (slicer.due()) await slicer.pause()
          this.checkPhrase(together, together, Int32Array.of(left, right), [null, null], w, Math.min(w + SLICE_WORDS, together.words.length))
        }
        read.set(pairKey(left, right), { left, right, together })
      }
    } catch (err) {
      finish()
      throw err
    }
    return {
      settle: () => {
        const changed = new Set(this.changedDuringReads.slice(from))
        finish()
        const settled = new Map<number, Bits>()
        for (const [key, { left, right, together }] of read) {
          const sole = Int32Array.of(left, right)
          for (const doc of changed) {
            if (this.held.has(doc) && !this.gapped.has(doc) && this.holdsPhrase(doc, sole, [null, null], 0)) together.add(doc)
            else together.delete(doc)
          }
          this.pairs.keep(left, right, together)
          settled.set(key, together)
        }
        return settled
      },
      abandon: finish
    }
  }

  /**
   * `ts_rank_cd(searchable, to_tsquery('simple', tsquery))` of these
   * documents, as PostgreSQL computes it (core/catalog/resident/cover-density.ts),
   * for those this index can rank: documents held whose positions run without
   * a gap and whose weights are A then B. Null when the query is not words and
   * prefixes joined by `&` and `|` (a phrase, a negation: PostgreSQL ranks it).
   */
  rank (tsquery: string, docs: readonly number[]): Map<number, number> | null {
    const node = parseTsquery(tsquery)
    const operands: Operand[] = []
    const satisfied = node === null ? null : compileCover(node, operands)
    if (satisfied === null || operands.length > MOST_RANKED_OPERANDS) return null
    if (this.operandsOf.length < this.lexemes.length) this.operandsOf = new Int32Array(this.lexemes.length * 2)
    const { operandsOf } = this
    const ids = operands.map(operand => this.idsOf(operand))
    ids.forEach((some, k) => { for (const id of some) operandsOf[id] |= 1 << k })
    const ranks = new Map<number, number>()
    for (const doc of docs) {
      if (!this.held.has(doc) || this.nulls.has(doc) || this.titleEnds[doc] === IRREGULAR_WEIGHTS) continue
      ranks.set(doc, coverDensity(this.entryPositions, this.entryWords, this.entryClasses, this.entriesOf(doc), satisfied))
    }
    for (const some of ids) for (const id of some) operandsOf[id] = 0
    return ranks
  }

  /** Puts a gapless document's entries (positions holding a query operand, per `operandsOf`) into the scratch arrays; answers how many. */
  private entriesOf (doc: number): number {
    const { operandsOf } = this
    const arena = this.arenaOf(doc)
    const start = this.starts[doc]
    const length = this.lengths[doc]
    const first = this.firsts[doc]
    const titleEnd = this.titleEnds[doc]
    let count = 0
    for (let i = 0; i < length; i++) {
      const words = operandsOf[arena[start + i]]
      if (words === 0) continue
      if (count === this.entryPositions.length) this.growEntries()
      const position = first + i
      this.entryPositions[count] = position
      this.entryWords[count] = words
      this.entryClasses[count] = position <= titleEnd ? WEIGHT_A : WEIGHT_B
      count++
    }
    return count
  }

  private growEntries (): void {
    const length = this.entryPositions.length * 2
    this.entryPositions = grownInt32(this.entryPositions, length)
    this.entryWords = grownInt32(this.entryWords, length)
    const classes = new Uint8Array(length)
    classes.set(this.entryClasses)
    this.entryClasses = classes
  }

  /** Bytes held (an estimate good within ~20%). */
  get byteSize (): number {
    let bytes = this.runs.byteLength + this.segmentOf.byteLength + this.starts.byteLength + this.lengths.byteLength + this.firsts.byteLength + this.titleEnds.byteLength + this.pairBits.byteLength +
      this.entryPositions.byteLength + this.entryWords.byteLength + this.entryClasses.byteLength + this.operandsOf.byteLength +
      this.byPosition.byteLength + this.placed.byteLength + this.docCounts.byteLength + this.soleDoc.byteLength + this.marks.byteLength + this.keys.byteLength + this.distinct.byteLength +
      this.held.byteSize + this.gapped.byteSize + this.stripped.byteSize + this.nulls.byteSize + this.pairs.byteSize
    const { lexemes, postings } = this
    for (let id = 0; id < lexemes.length; id++) {
      bytes += LEXEME_OVERHEAD + ((lexemes[id].length + 7) & ~7)
      const list = postings[id]
      if (list !== undefined) bytes += list instanceof Bits ? list.byteSize : list.byteLength + TYPED_ARRAY_OVERHEAD
    }
    return bytes
  }

  /** Three fresh marks (`mark`, `mark + 1`, `mark + 2`: see `release`); every mark is cleared before the counter could wrap. */
  private nextEpoch (): number {
    if (this.epoch > 0x3fffffff) {
      this.marks.fill(0)
      this.placed.fill(0)
      this.epoch = 0
    }
    this.epoch += 3
    return this.epoch
  }

  /**
   * Takes document `doc`'s pairs out of the postings and the arena. The
   * lexemes the new text holds are marked `mark` (by `parse`): those the old
   * text held too become `mark + 1` and keep their posting; the others
   * become `mark + 2` and lose it. A mark met again is a lexeme seen already.
   */
  private release (doc: number, mark: number): void {
    const { marks, pairs } = this
    const arena = this.arenaOf(doc)
    const start = this.starts[doc]
    const end = start + this.lengths[doc]
    // Its pairs of adjacent words leave the kept pairs (a document with gaps is in none).
    if (this.firsts[doc] > 0 && !pairs.empty) for (let i = start; i + 1 < end; i++) pairs.delete(doc, arena[i], arena[i + 1])
    for (let i = start; i < end; i++) {
      const id = arena[i]
      const seen = marks[id]
      if (seen === mark) marks[id] = mark + 1
      else if (seen !== mark + 1 && seen !== mark + 2) {
        marks[id] = mark + 2
        this.removePosting(id, doc)
      }
    }
    if (this.runs.release(this.segmentOf[doc], this.footprint(doc))) this.pendingCompaction = this.segmentOf[doc]
    this.lengths[doc] = 0
  }

  /**
   * Reads tsvector text, answering how many (position, lexeme) pairs it
   * holds: when their positions run without a gap, `first` is the first and
   * `byPosition` has the ids from there on; otherwise `first` is 0 and `keys`
   * has the pairs as position × 2³² + lexeme id, sorted. The distinct lexeme
   * ids go to `distinct`, marked `mark`. A lexeme without positions is a pair
   * at position 0 (PostgreSQL's positions start at 1). PostgreSQL prints every
   * lexeme once with at most 256 ascending positions, none above 16383; text
   * that does not (typed, not printed) is put in that form as tsvector input
   * would.
   */
  private parse (text: string, mark: number): number {
    const end = text.length
    const { byPosition, placed } = this
    let pairs = 0
    let canonical = true
    // Two lexemes at one position, or one without positions: no run of ids can tell where the words stand.
    let gapless = true
    let low = LAST_POSITION
    let high = 0
    let i = 0
    this.distinctCount = 0
    this.lastA = 0
    this.firstOther = LAST_POSITION + 1
    this.othersB = true
    for (;;) {
      while (i < end && isBlank(text.charCodeAt(i))) i++
      if (i >= end) break
      // The lexeme: quoted, with `''` and backslash escapes, as PostgreSQL prints it; or bare, as input may have it.
      const quoted = text.charCodeAt(i) === QUOTE
      if (quoted) i++
      const start = i
      let escaped = false
      for (;;) {
        if (i >= end) {
          if (quoted) throw malformed(text)
          break
        }
        const c = text.charCodeAt(i)
        if (c === BACKSLASH) {
          escaped = true
          i += 2
        } else if (c === QUOTE) {
          if (!quoted) throw malformed(text)
          if (text.charCodeAt(i + 1) !== QUOTE) break
          escaped = true
          i += 2
        } else if (!quoted && (isBlank(c) || c === COLON)) {
          break
        } else {
          i++
        }
      }
      if (i > end || i === start) throw malformed(text)
      const lexeme = escaped ? unescaped(text.slice(start, i)) : text.slice(start, i)
      if (quoted) i++
      const id = this.idOf(lexeme)
      if (this.marks[id] === mark) {
        canonical = false
      } else {
        this.marks[id] = mark
        if (this.distinctCount === this.distinct.length) this.distinct = grownInt32(this.distinct, this.distinctCount * 2)
        this.distinct[this.distinctCount++] = id
      }
      if (i < end && text.charCodeAt(i) === COLON) {
        i++
        let last = 0
        let count = 0
        for (;;) {
          const digits = i
          let value = 0
          while (i < end && isDigit(text.charCodeAt(i))) value = value * 10 + text.charCodeAt(i++) - 48
          if (i === digits || value === 0) throw malformed(text)
          const position = Math.min(value, LAST_POSITION)
          const weight = i < end && isWeight(text.charCodeAt(i)) ? weightClass(text.charCodeAt(i++)) : 0
          if (weight === WEIGHT_A) this.lastA = Math.max(this.lastA, position)
          else {
            this.firstOther = Math.min(this.firstOther, position)
            if (weight !== WEIGHT_B) this.othersB = false
          }
          if (position <= last || ++count > MAX_POSITIONS) canonical = false
          last = position
          pairs = this.pushKey(pairs, position * POSITION_UNIT + id)
          if (placed[position] === mark) gapless = false
          placed[position] = mark
          byPosition[position] = id
          if (position < low) low = position
          if (position > high) high = position
          if (i < end && text.charCodeAt(i) === COMMA) i++
          else break
        }
      } else {
        pairs = this.pushKey(pairs, id)
        gapless = false
      }
      if (i < end && !isBlank(text.charCodeAt(i))) throw malformed(text)
    }
    if (canonical && gapless && pairs > 0 && high - low + 1 === pairs) {
      this.first = low
      return pairs
    }
    this.first = 0
    if (!canonical) pairs = this.normalize(pairs)
    this.keys.subarray(0, pairs).sort()
    return pairs
  }

  private pushKey (pairs: number, key: number): number {
    if (pairs === this.keys.length) {
      const grown = new Float64Array(pairs * 2)
      grown.set(this.keys)
      this.keys = grown
    }
    this.keys[pairs] = key
    return pairs + 1
  }

  /**
   * What tsvector input makes of a lexeme given twice or of positions out of
   * order: one lexeme with its positions united; positions sorted, each once,
   * the lowest 256; a lexeme with positions somewhere has no position-less
   * entry. Answers how many pairs are left (in `keys`, unsorted).
   */
  private normalize (pairs: number): number {
    const { keys } = this
    for (let i = 0; i < pairs; i++) {
      const position = Math.floor(keys[i] / POSITION_UNIT)
      keys[i] = (keys[i] - position * POSITION_UNIT) * LEXEME_UNIT + position
    }
    const byLexeme = keys.slice(0, pairs).sort()
    let kept = 0
    for (let i = 0; i < pairs;) {
      const id = Math.floor(byLexeme[i] / LEXEME_UNIT)
      let j = i
      while (j < pairs && Math.floor(byLexeme[j] / LEXEME_UNIT) === id) j++
      // Position 0 (none) sorts first: it stays only when it is all there is.
      let k = i
      while (k < j && byLexeme[k] % LEXEME_UNIT === 0) k++
      if (k === j) keys[kept++] = id
      let count = 0
      for (let last = -1; k < j && count < MAX_POSITIONS; k++) {
        const position = byLexeme[k] % LEXEME_UNIT
        if (position === last) continue
        last = position
        count++
        keys[kept++] = position * POSITION_UNIT + id
      }
      i = j
    }
    return kept
  }

  /** The id of a lexeme, given one if it is new. */
  private idOf (lexeme: string): number {
    const known = this.ids.get(lexeme)
    if (known !== undefined) return known
    const id = this.lexemes.length
    const word = detached(lexeme)
    this.ids.set(word, id)
    this.lexemes.push(word)
    this.postings.push(undefined)
    if (id === this.docCounts.length) {
      this.docCounts = grownInt32(this.docCounts, id * 2)
      this.soleDoc = grownInt32(this.soleDoc, id * 2)
      this.marks = grownInt32(this.marks, id * 2)
    }
    // Into the small sorted list (a move of at most PENDING_LEXEMES entries), merged into the big one when full.
    const at = lowerBound(this.pendingWords, word)
    this.pendingWords.splice(at, 0, word)
    this.pendingIds.splice(at, 0, id)
    if (this.pendingWords.length >= PENDING_LEXEMES) this.mergePending()
    return id
  }

  private mergePending (): void {
    const { sortedWords, sortedIds, pendingWords, pendingIds } = this
    const words: string[] = new Array<string>(sortedWords.length + pendingWords.length)
    const ids: number[] = new Array<number>(words.length)
    let i = 0
    let j = 0
    for (let k = 0; k < words.length; k++) {
      if (j >= pendingWords.length || (i < sortedWords.length && sortedWords[i] < pendingWords[j])) {
        words[k] = sortedWords[i]
        ids[k] = sortedIds[i++]
      } else {
        words[k] = pendingWords[j]
        ids[k] = pendingIds[j++]
      }
    }
    this.sortedWords = words
    this.sortedIds = ids
    this.pendingWords = []
    this.pendingIds = []
  }

  /** The ids of the lexemes a query operand stands for, held by some document: the word's own, or every lexeme it begins. */
  private idsOf (operand: Operand): number[] {
    if (!operand.prefix) {
      const id = this.ids.get(operand.word)
      return id !== undefined && this.docCounts[id] > 0 ? [id] : []
    }
    // PostgreSQL compares a prefix by bytes; for an ASCII prefix that is startsWith.
    const found: number[] = []
    for (const [words, ids] of [[this.sortedWords, this.sortedIds], [this.pendingWords, this.pendingIds]] as const) {
      for (let i = lowerBound(words, operand.word); i < words.length && words[i].startsWith(operand.word); i++) {
        if (this.docCounts[ids[i]] > 0) found.push(ids[i])
      }
    }
    return found
  }

  private addPosting (id: number, doc: number): void {
    const count = this.docCounts[id]
    this.docCounts[id] = count + 1
    if (count === 0) {
      this.soleDoc[id] = doc
      return
    }
    if (count === 1) {
      const list = new Int32Array(4)
      list[0] = Math.min(doc, this.soleDoc[id])
      list[1] = Math.max(doc, this.soleDoc[id])
      this.postings[id] = list
      return
    }
    const held = this.postings[id] as Int32Array | Bits
    if (held instanceof Bits) {
      if (doc >= held.capacity) {
        // Grown by a quarter, not doubled as Bits grows: a bitset of a frequent word over a million documents is 125 kB.
        const grown = new Uint32Array(Math.max((doc >>> 5) + 1, held.words.length + (held.words.length >>> 2) + 2))
        grown.set(held.words)
        held.words = grown
        if ((count + 1) * SPARSE_RATIO < held.capacity) {
          held.add(doc)
          this.postings[id] = sparseOf(held, count + 1)
          return
        }
      }
      held.add(doc)
      return
    }
    let list = held
    if (count === list.length) {
      list = grownInt32(list, count * 2)
      this.postings[id] = list
    }
    // Documents mostly come in ascending numbers (a load, new objects): an append.
    if (doc > list[count - 1]) {
      list[count] = doc
    } else {
      const at = lowerBound(list, doc, count)
      list.copyWithin(at + 1, at, count)
      list[at] = doc
    }
    if (count + 1 >= DENSE_FROM && (count + 1) * 32 > list[count] + 1) this.postings[id] = denseOf(list, count + 1)
  }

  private removePosting (id: number, doc: number): void {
    const count = this.docCounts[id]
    this.docCounts[id] = count - 1
    if (count === 1) return
    const held = this.postings[id] as Int32Array | Bits
    if (count === 2) {
      const other = held instanceof Bits ? held.toArray().find(d => d !== doc) : (held[0] === doc ? held[1] : held[0])
      this.soleDoc[id] = other as number
      this.postings[id] = undefined
      return
    }
    if (held instanceof Bits) {
      held.delete(doc)
      if ((count - 1) * SPARSE_RATIO < held.capacity) this.postings[id] = sparseOf(held, count - 1)
      return
    }
    const at = lowerBound(held, doc, count)
    held.copyWithin(at, at + 1, count)
    // A list that lost most of its documents gives the room back.
    if (held.length > 16 && held.length > 4 * (count - 1)) this.postings[id] = held.slice(0, 2 * (count - 1))
  }

  /** Adds the documents holding lexeme `id` to `into`, which is big enough for every document number. */
  private collect (id: number, into: Bits): void {
    const count = this.docCounts[id]
    if (count === 0) return
    const { words } = into
    if (count === 1) {
      const doc = this.soleDoc[id]
      words[doc >>> 5] |= 1 << (doc & 31)
      return
    }
    const held = this.postings[id] as Int32Array | Bits
    if (held instanceof Bits) {
      into.or(held)
      return
    }
    for (let i = 0; i < count; i++) {
      const doc = held[i]
      words[doc >>> 5] |= 1 << (doc & 31)
    }
  }

  /** The documents holding any of these lexemes, into `set` (a temporary one unless given). */
  private docsOf (ids: number[], size: number, set = Bits.temporary(size)): Bits {
    for (const id of ids) this.collect(id, set)
    return set
  }

  /** A query node as a set of documents within `universe`; null when PostgreSQL may answer otherwise. */
  private evaluate (node: Node, universe: Bits, size: number, read?: ReadonlyMap<number, Bits>): Bits | null {
    switch (node.kind) {
      case 'word': return this.docsOf(this.idsOf(node.operand), size).and(universe)
      case 'phrase': return this.phrase(node.operands, universe, size, read)
      case 'not': {
        const child = this.evaluate(node.child, universe, size, read)
        return child === null ? null : universe.temporaryClone().andNot(child)
      }
      case 'and':
      case 'or': {
        const left = this.evaluate(node.left, universe, size, read)
        if (left === null) return null
        const right = this.evaluate(node.right, universe, size, read)
        if (right === null) return null
        return node.kind === 'and' ? left.and(right) : left.or(right)
      }
    }
  }

  /**
   * A phrase: the documents holding all its words, then of those the ones
   * where the words stand at consecutive positions (a prefix standing for
   * any of its lexemes there), as PostgreSQL's `<->` checks them.
   */
  private phrase (operands: Operand[], universe: Bits, size: number, read?: ReadonlyMap<number, Bits>): Bits | null {
    const ids = operands.map(operand => this.idsOf(operand))
    const candidates = universe.temporaryClone()
    for (const some of ids) candidates.and(this.docsOf(some, size))
    if (candidates.empty) return candidates
    // Without positions PostgreSQL cannot place a word; what it answers then is its business.
    if (intersects(candidates, this.stripped)) return null
    // Each word as the one lexeme to compare with, or (a prefix of several) the set of its lexemes.
    const sole = Int32Array.from(ids, some => some.length === 1 ? some[0] : -1)
    const sets = ids.map(some => some.length === 1 ? null : Bits.of(some))
    // Adjacent words of one lexeme each whose documents are kept, or common enough to be: the candidates without a gap must have them together.
    let gappedCandidates: Bits | null = null
    let pairsApplied = 0
    for (let k = 0; k + 1 < sole.length; k++) {
      if (sole[k] < 0 || sole[k + 1] < 0) continue
      const together = read?.get(pairKey(sole[k], sole[k + 1])) ?? this.pairs.get(sole[k], sole[k + 1]) ?? this.commonPair(sole[k], sole[k + 1], size)
      if (together === null) continue
      gappedCandidates ??= candidates.temporaryClone().and(this.gapped)
      candidates.and(together)
      pairsApplied++
    }
    if (gappedCandidates !== null) candidates.or(gappedCandidates)
    // Two words whose pair was applied: only the candidates with a gap are left to check.
    const toCheck = sole.length === 2 && pairsApplied === 1 ? gappedCandidates as Bits : candidates
    this.checkPhrase(toCheck, candidates, sole, sets)
    return candidates
  }

  /**
   * The documents without a gap where lexeme `left` stands right before
   * `right`, read and kept when both are common (PAIR_KEPT_FROM); null when
   * they are not (checking their few candidates one by one costs less).
   */
  private commonPair (left: number, right: number, size: number): Bits | null {
    if (!this.isCommonPair(left, right)) return null
    const together = this.pairCandidates(left, right, size)
    this.checkPhrase(together, together, Int32Array.of(left, right), [null, null])
    this.pairs.keep(left, right, together)
    return together
  }

  /** The documents a pair's read checks: those holding both lexemes whose positions run without a gap (a set of its own: it is kept). */
  private pairCandidates (left: number, right: number, size: number): Bits {
    return this.docsOf([left], size, new Bits(size)).and(this.docsOf([right], size)).andNot(this.gapped)
  }

  /** Whether both lexemes are common enough for their pair to be read for every document and kept (PAIR_KEPT_FROM). */
  private isCommonPair (left: number, right: number): boolean {
    return Math.min(this.docCounts[left], this.docCounts[right]) * PAIR_KEPT_FROM >= this.docLimit
  }

  /**
   * Takes out of `candidates` the documents of `toCheck` (a subset) in which
   * the words do not stand one after the other: all of them, or those in the
   * words `fromWord` to `toWord` (excluded) of the sets.
   */
  private checkPhrase (toCheck: Bits, candidates: Bits, sole: Int32Array, sets: Array<Bits | null>, fromWord = 0, toWord = toCheck.words.length): void {
    // The word of one lexeme that the fewest documents hold, to look for first (-1: every word a prefix of several).
    let anchor = -1
    for (let k = 0; k < sole.length; k++) {
      if (sole[k] >= 0 && (anchor < 0 || this.docCounts[sole[k]] < this.docCounts[sole[anchor]])) anchor = k
    }
    // The signature bits of its adjacent words of one lexeme each, as (word of the signature, bit) pairs.
    const signs: number[] = []
    for (let k = 0; k + 1 < sole.length; k++) {
      if (sole[k] < 0 || sole[k + 1] < 0) continue
      for (const which of [0, 1]) {
        const bit = pairBit(sole[k], sole[k + 1], which)
        signs.push(bit >>> 5, 1 << (bit & 31))
      }
    }
    const { words } = toCheck
    const kept = candidates.words
    const { pairBits } = this
    for (let w = fromWord; w < toWord; w++) {
      for (let bits = words[w]; bits !== 0;) {
        const low = bits & -bits
        bits ^= low
        const doc = w * 32 + 31 - Math.clz32(low)
        let signed = true
        for (let i = 0, base = doc * PAIR_WORDS; signed && i < signs.length; i += 2) signed = (pairBits[base + signs[i]] & signs[i + 1]) !== 0
        if (!signed || !this.holdsPhrase(doc, sole, sets, anchor)) kept[w] &= ~low
      }
    }
  }

  /** Records the pairs of adjacent lexemes of a document whose `pairs` ids run without a gap from its start (-1: it has gaps). */
  private signPairs (doc: number, pairs: number): void {
    const { pairBits } = this
    const arena = this.arenaOf(doc)
    const base = doc * PAIR_WORDS
    pairBits.fill(pairs < 0 ? 0xffffffff : 0, base, base + PAIR_WORDS)
    const start = this.starts[doc]
    const kept = this.pairs.empty ? null : this.pairs
    for (let i = start, last = start + pairs - 1; i < last; i++) {
      for (let which = 0; which < 2; which++) {
        const bit = pairBit(arena[i], arena[i + 1], which)
        pairBits[base + (bit >>> 5)] |= 1 << (bit & 31)
      }
      kept?.add(doc, arena[i], arena[i + 1])
    }
  }

  /** Whether word k of a phrase stands at position p + k of document `doc` for some p. */
  private holdsPhrase (doc: number, sole: Int32Array, sets: Array<Bits | null>, anchor: number): boolean {
    const arena = this.arenaOf(doc)
    const start = this.starts[doc]
    const pairs = this.lengths[doc]
    const end = start + pairs
    const n = sole.length
    if (this.firsts[doc] > 0 && anchor >= 0) {
      // Positions without a gap: the phrase is a run of ids. The anchor word's id first (a tight loop), then the others around it.
      const id = sole[anchor]
      for (let i = start + anchor, last = end - n + anchor; i <= last; i++) {
        if (arena[i] !== id) continue
        const base = i - anchor
        let k = 0
        while (k < n && (k === anchor || (sole[k] >= 0 ? arena[base + k] === sole[k] : (sets[k] as Bits).has(arena[base + k])))) k++
        if (k === n) return true
      }
      return false
    }
    if (this.firsts[doc] > 0) {
      for (let i = start; i + n <= end; i++) {
        let k = 0
        while (k < n && (sole[k] >= 0 ? arena[i + k] === sole[k] : (sets[k] as Bits).has(arena[i + k]))) k++
        if (k === n) return true
      }
      return false
    }
    // Positions after the ids (`pairs` further on), ascending: look for word k at the position of word 0 plus k.
    for (let i = start; i < end; i++) {
      if (sole[0] >= 0 ? arena[i] !== sole[0] : !(sets[0] as Bits).has(arena[i])) continue
      const position = arena[i + pairs]
      let j = i + 1
      let k = 1
      for (; k < n; k++) {
        const wanted = position + k
        while (j < end && arena[j + pairs] < wanted) j++
        const id = sole[k]
        const set = sets[k]
        while (j < end && arena[j + pairs] === wanted && (id >= 0 ? arena[j] !== id : !(set as Bits).has(arena[j]))) j++
        if (j >= end || arena[j + pairs] !== wanted) break
      }
      if (k === n) return true
    }
    return false
  }

  /** How much of the arena a document's run takes. */
  private footprint (doc: number): number {
    return this.firsts[doc] > 0 ? this.lengths[doc] : 2 * this.lengths[doc]
  }

  private ensureDoc (doc: number): void {
    if (doc >= this.starts.length) {
      const length = Math.max(doc + 1, this.starts.length * 2)
      this.segmentOf = grownInt32(this.segmentOf, length)
      this.starts = grownInt32(this.starts, length)
      this.lengths = grownInt32(this.lengths, length)
      this.firsts = grown(this.firsts, new Uint16Array(length))
      this.titleEnds = grown(this.titleEnds, new Uint16Array(length))
      this.pairBits = grown(this.pairBits, new Uint32Array(length * PAIR_WORDS))
    }
    if (doc >= this.docLimit) this.docLimit = doc + 1
  }

  /** The arena segment that holds document `doc`'s run (from `starts[doc]` on). */
  private arenaOf (doc: number): Int32Array {
    return this.runs.segments[this.segmentOf[doc]]
  }

  /** Moves the live runs of a segment a change left more than half garbage (PositionsArena), once the change is in place. */
  private compactPending (): void {
    const from = this.pendingCompaction
    if (from < 0) return
    this.pendingCompaction = -1
    this.runs.compact(from,
      (doc, offset) => this.held.has(doc) && this.segmentOf[doc] === from && this.starts[doc] === offset,
      doc => {
        this.segmentOf[doc] = this.runs.segment
        this.starts[doc] = this.runs.offset
      })
  }
}

/** `larger` holding `array` at its start. */
function grown<T extends Int32Array<ArrayBuffer> | Uint16Array<ArrayBuffer> | Uint32Array<ArrayBuffer>> (array: ArrayLike<number>, larger: T): T {
  larger.set(array)
  return larger
}

/** A copy of `array` with room for `length` numbers. */
const grownInt32 = (array: Int32Array, length: number): Int32Array<ArrayBuffer> => grown(array, new Int32Array(length))

/** The bitset of the first `count` documents of a sorted list, as long as its greatest document needs. */
function denseOf (list: Int32Array, count: number): Bits {
  const bits = new Bits(list[count - 1] + 1)
  const { words } = bits
  for (let i = 0; i < count; i++) words[list[i] >>> 5] |= 1 << (list[i] & 31)
  return bits
}

/** The sorted list of a bitset's `count` documents, with some room to grow. */
function sparseOf (bits: Bits, count: number): Int32Array {
  const list = new Int32Array(Math.max(4, count + (count >>> 1)))
  let i = 0
  bits.forEach(doc => { list[i++] = doc })
  return list
}

/** Whether two sets share a document. */
function intersects (a: Bits, b: Bits): boolean {
  const shared = Math.min(a.words.length, b.words.length)
  for (let i = 0; i < shared; i++) if ((a.words[i] & b.words[i]) !== 0) return true
  return false
}

/**
 * The test a cover's words must pass for a query of words joined by `&` and
 * `|` (bit k: operand k, appended to `operands`); null for anything else.
 */
function compileCover (node: Node, operands: Operand[]): ((seen: number) => boolean) | null {
  switch (node.kind) {
    case 'word': {
      const bit = 1 << operands.length
      operands.push(node.operand)
      return seen => (seen & bit) !== 0
    }
    case 'and':
    case 'or': {
      const left = compileCover(node.left, operands)
      const right = left === null ? null : compileCover(node.right, operands)
      if (left === null || right === null) return null
      return node.kind === 'and' ? seen => left(seen) && right(seen) : seen => left(seen) || right(seen)
    }
    default: return null
  }
}

/**
 * A tsquery as renderTsquery writes it, with PostgreSQL's precedence (`!`,
 * then `<->`, then `&`, then `|`); null when it holds a word this index
 * cannot be sure PostgreSQL reads as one lexeme, or anything else than
 * renderTsquery writes (a phrase of other than words, say).
 */
function parseTsquery (source: string): Node | null {
  const tokens = source.match(/<->|[()&|!]|[^\s()&|!<]+/g) ?? []
  // Nothing skipped: every character but blanks is in a token.
  if (tokens.join('').length !== source.replace(/\s+/g, '').length) return null
  let at = 0
  const or = (): Node | null => {
    let left = and()
    while (left !== null && tokens[at] === '|') {
      at++
      const right = and()
      left = right === null ? null : { kind: 'or', left, right }
    }
    return left
  }
  const and = (): Node | null => {
    let left = phrase()
    while (left !== null && tokens[at] === '&') {
      at++
      const right = phrase()
      left = right === null ? null : { kind: 'and', left, right }
    }
    return left
  }
  const phrase = (): Node | null => {
    const first = unary()
    if (first === null || tokens[at] !== '<->') return first
    const operands: Operand[] = []
    for (let next: Node | null = first; ; next = unary()) {
      if (next === null || next.kind !== 'word') return null
      operands.push(next.operand)
      if (tokens[at] !== '<->') break
      at++
    }
    return { kind: 'phrase', operands }
  }
  const unary = (): Node | null => {
    const token = tokens[at++]
    if (token === '!') {
      const child = unary()
      return child === null ? null : { kind: 'not', child }
    }
    if (token === '(') {
      const inner = or()
      return tokens[at++] === ')' ? inner : null
    }
    if (token === undefined || /^(<->|[()&|])$/.test(token)) return null
    const prefix = token.endsWith(':*')
    const word = prefix ? token.slice(0, -2) : token
    if (word.length > LONGEST_WORD || !PLAIN_WORD.test(word) || SPLIT_WORD.test(word)) return null
    return { kind: 'word', operand: { word, prefix } }
  }
  const node = or()
  return at === tokens.length ? node : null
}
