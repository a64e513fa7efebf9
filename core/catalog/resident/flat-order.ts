import { Bits } from './bits.js'

/**
 * What gathering one match's key and selecting the page among them costs, in
 * steps of a walk (a step: one array read and one bit test): a gather and
 * some two partition passes (`selectRange`).
 */
const SELECT_STEPS = 4

/**
 * The fewest changes a flat order takes as patches before it is laid again;
 * beyond it, a sixteenth of its documents (`patchLimit`).
 */
const MIN_PATCHES = 64

/** How many changes an order of `size` documents takes as patches: laying it again (a walk of them all) is paid once per so many. */
export const patchLimit = (size: number): number => Math.max(MIN_PATCHES, size >>> 4)

/** The walks of an order: `ascending`, `descending` (SQL's `DESC NULLS LAST`, ties ascending) and `reversed` (ascending backwards). */
export type Direction = 'ascending' | 'descending' | 'reversed'

/**
 * The strict total order of a direction's walk (sorted-order.ts), from the
 * order's `compare` (value ascending, nulls last, then the tie-break),
 * `sameValue` and `isNull`: for placing a document among the laid ones.
 */
export function directionOrder (direction: Direction, compare: (a: number, b: number) => number,
  sameValue: (a: number, b: number) => boolean, isNull: (doc: number) => boolean): (a: number, b: number) => number {
  if (direction === 'ascending') return compare
  if (direction === 'reversed') return (a, b) => compare(b, a)
  // Values from the highest down, ties ascending, nulls last (ascending among themselves).
  return (a, b) => {
    const aNull = isNull(a)
    if (aNull !== isNull(b)) return aNull ? 1 : -1
    return aNull || sameValue(a, b) ? compare(a, b) : compare(b, a)
  }
}

/**
 * One direction of a sorted order (sorted-order.ts) laid flat, as a page
 * wants it: the documents in a typed array (`docAt`) and each document's
 * place in it (`placeOf`, -1 for none), so that a page is a tight loop over
 * the array, or a selection among its matches' places when a walk would pass
 * too many (`page`).
 *
 * Laying an order flat walks all its documents; a site's writes change the
 * orders many times a second, and a flat laid again after each would cost
 * every query asked after a write a walk of the whole catalogue (issue 23's
 * profile: a quarter of the service's time at 100,000 talks). So a flat order
 * takes changes as patches instead: documents removed since it was laid
 * (their place is void), and documents inserted since, each with the place it
 * comes before, in order. A page merges the patches into its walk, or gives
 * inserted documents keys between the places when it selects. After
 * `patchLimit` changes the order drops it and lays it again at the next ask,
 * so laying costs each change a sixteenth of a document's step.
 *
 * `before(a, b)` is the direction's strict total order (negative when a comes
 * first). The patches hold because of what the sorted order guarantees: a
 * document is removed with the values it was inserted with, so a document
 * that was not removed keeps its place among the others, and the documents
 * laid and not removed stay sorted under `before`.
 */
export class FlatOrder {
  /** How many laid documents were removed since (their place in `docAt` is void: `placeOf` says -1 for them). */
  private removed = 0
  /**
   * The void places, by place: a walk reads them in order, where `placeOf`
   * (by document) would be read at random — at a million documents a miss
   * of the processor's caches at every step of a deep page.
   */
  private readonly voids = new Bits()
  /** Documents inserted since the order was laid, in order: each with the place in `docAt` it comes before. */
  private readonly added: Array<{ doc: number, place: number }> = []

  constructor (
    private readonly docAt: Int32Array,
    private readonly placeOf: Int32Array,
    private readonly before: (a: number, b: number) => number
  ) {}

  /** Lays out the documents a walk visits in order; `before` must agree with that order. */
  static lay (size: number, walk: (visit: (doc: number) => void) => void, before: (a: number, b: number) => number): FlatOrder {
    const docAt = new Int32Array(size)
    let place = 0
    walk(doc => { docAt[place++] = doc })
    let highest = -1
    for (let i = 0; i < docAt.length; i++) if (docAt[i] > highest) highest = docAt[i]
    const placeOf = new Int32Array(highest + 1).fill(-1)
    for (let i = 0; i < docAt.length; i++) placeOf[docAt[i]] = i
    return new FlatOrder(docAt, placeOf, before)
  }

  /** Changes taken as patches since the order was laid. */
  get patches (): number { return this.removed + this.added.length }

  /** Bytes held (estimate): the two arrays, and each patch. */
  get byteSize (): number {
    return this.docAt.byteLength + this.placeOf.byteLength + this.voids.byteSize + 320 + this.added.length * 48
  }

  /** Whether `doc` holds the place it was laid at (laid here and not removed since). */
  private laidHere (doc: number): boolean {
    return doc < this.placeOf.length && this.placeOf[doc] >= 0
  }

  /** Whether the document laid at `place` was removed since. */
  private voidAt (place: number): boolean {
    return this.voids.has(place)
  }

  /**
   * The place in `docAt` that `doc` comes before: the first laid document
   * not removed that comes after it (the length of `docAt` when none does).
   * The removed ones are skipped: their values may have changed since, so
   * they take no part in the search; patches are few, so a skip is short.
   */
  private placeFor (doc: number): number {
    return this.unremovedFrom(this.firstPlace(other => this.before(other, doc) >= 0))
  }

  /** The first place from `place` on whose document is not removed (the length of `docAt` when none is). */
  private unremovedFrom (place: number): number {
    while (place < this.docAt.length && this.voidAt(place)) place++
    return place
  }

  /** Where `doc` (at `place`) belongs among the inserted documents: the first that does not come before it. */
  private addedIndex (doc: number, place: number): number {
    return this.firstAdded(other => other.place > place || (other.place === place && this.before(other.doc, doc) >= 0))
  }

  /** The first inserted document that passes `from` (which fails, then passes, along their order); their number when none does. */
  private firstAdded (from: (other: { doc: number, place: number }) => boolean): number {
    const { added } = this
    let low = 0
    let high = added.length
    while (low < high) {
      const middle = (low + high) >>> 1
      if (from(added[middle])) high = middle
      else low = middle + 1
    }
    return low
  }

  /** Takes the insertion of `doc` (not in the order), with its values as they are now. */
  insert (doc: number): void {
    const place = this.placeFor(doc)
    this.added.splice(this.addedIndex(doc, place), 0, { doc, place })
  }

  /**
   * Takes the removal of `doc` (in the order), with the values it was
   * inserted with. A laid document's place is void from now on: the inserted
   * documents that came before it come before the next laid one. They stay
   * where they are among the inserted: they came before the removed one, and
   * those already placed before the next came after it.
   */
  remove (doc: number): void {
    if (this.laidHere(doc)) {
      const place = this.placeOf[doc]
      this.placeOf[doc] = -1
      this.voids.add(place)
      this.removed++
      const next = this.unremovedFrom(place + 1)
      const { added } = this
      for (let i = this.firstAdded(other => other.place >= place); i < added.length && added[i].place === place; i++) added[i].place = next
      return
    }
    const index = this.addedIndex(doc, this.placeFor(doc))
    if (this.added[index]?.doc !== doc) throw new Error(`Document ${doc} is not in the flat order.`)
    this.added.splice(index, 1)
  }

  /**
   * Documents `start` to `start + size` of `matches` (`count` of them) in
   * this order: walked from the first place when the page is found after few
   * documents (the first page of a common filter after a few dozen), or else
   * the page selected among the matches' keys (a deep page, a rare filter) —
   * the cheaper of the two, as their expected steps tell. `from`: a place
   * no match comes before (`firstPlace`: a range of the order's own values).
   *
   * The expected walk takes the matches as spread evenly over the order;
   * matches that lie together (a date range sorted by another date that
   * follows it, a folder's newest objects) can be far from the first place.
   * A walk that has gone as far as a selection would cost gives up, and the
   * page is selected: never more than twice the cheaper of the two.
   */
  page (matches: Bits, count: number, start: number, size: number, from = 0): number[] {
    const end = Math.min(count, start + size)
    if (start >= end) return []
    const selection = SELECT_STEPS * count
    const expectedWalk = end * ((this.docAt.length - from) / Math.max(count, 1))
    return (expectedWalk <= selection ? this.walk(matches, start, end, from, selection) : null) ?? this.selectedPage(matches, count, start, end)
  }

  /**
   * The first place from which on `passes` may hold, as the direction lays
   * the documents: the laid documents before it that were not removed fail
   * it. `passes` must fail, then hold, along the direction (a bound on the
   * order's own value; nulls, last, passing; or, for `placeFor`, coming
   * after a document). A binary search that skips the void places.
   */
  firstPlace (passes: (doc: number) => boolean): number {
    const { docAt } = this
    let low = 0
    let high = docAt.length
    // Laid documents before `low` that are not removed fail; those from `high` on pass.
    while (low < high) {
      const middle = (low + high) >>> 1
      let probe = middle
      while (probe < high && this.voidAt(probe)) probe++
      if (probe < high && !passes(docAt[probe])) low = probe + 1
      else high = middle
    }
    return low
  }

  /** Matches `start` to `end` (excluded), by a walk from the first place that merges the inserted documents in. */
  walkedPage (matches: Bits, start: number, end: number): number[] {
    return this.walk(matches, start, end, 0, Infinity) as number[]
  }

  /**
   * A walk from place `from` (inserted documents that come before it
   * included) that takes matches `start` to `end`; null once it has passed
   * `budget` places without completing the page.
   */
  private walk (matches: Bits, start: number, end: number, from: number, budget: number): number[] | null {
    const { docAt, added, voids } = this
    const page: number[] = []
    let seen = 0
    let next = this.firstAdded(other => other.place >= from)
    const take = (doc: number): void => { if (seen++ >= start) page.push(doc) }
    for (let place = from; place <= docAt.length && page.length < end - start; place++) {
      if (place - from > budget) return null
      for (; next < added.length && added[next].place === place && page.length < end - start; next++) {
        if (matches.has(added[next].doc)) take(added[next].doc)
      }
      if (place === docAt.length || page.length >= end - start) break
      const doc = docAt[place]
      if (matches.has(doc) && !voids.has(place)) take(doc)
    }
    return page
  }

  /**
   * Matches `start` to `end` (excluded), by selecting them among keys: a laid
   * document's place, or for an inserted one a key between the place before
   * its own and its own, ordered as the inserted documents are.
   */
  selectedPage (matches: Bits, count: number, start: number, end: number): number[] {
    const { docAt, placeOf, added } = this
    const keys = keysFor(count)
    const inserted = new Map<number, number>()
    let found = 0
    matches.forEach(doc => {
      if (this.laidHere(doc)) {
        keys[found++] = placeOf[doc]
        return
      }
      const index = this.addedIndex(doc, this.placeFor(doc))
      if (added[index]?.doc !== doc) return
      // Keys of the inserted documents lie between place − 1 and place, in their order (index).
      const key = added[index].place - 1 + (index + 1) / (added.length + 1)
      inserted.set(key, doc)
      keys[found++] = key
    })
    const gathered = keys.subarray(0, found)
    selectRange(gathered, start, Math.min(end, found))
    return Array.from(gathered.subarray(start, end), key => inserted.get(key) ?? docAt[key])
  }
}

/**
 * The keys of the page being selected, one array for every page (a page is
 * selected in one go): a deep page at a million documents gathers some
 * 700,000 keys, 5.6 MB, which made new for each page counted towards a
 * collection of V8's whole heap.
 */
let selectionKeys = new Float64Array(0)
function keysFor (count: number): Float64Array {
  if (selectionKeys.length < count) selectionKeys = new Float64Array(count + (count >>> 3))
  return selectionKeys
}

/**
 * Puts the keys that rank `from` to `to` (excluded) among distinct `keys`
 * at those offsets, in order (the others on their sides, in no order): two
 * quickselects and a sort of the range, so a page deep in 70,000 matches
 * costs a few passes over them, not a sort of them all (8 ms at 100,000 talks).
 */
export function selectRange (keys: Float64Array, from: number, to: number): void {
  if (from >= to) return
  select(keys, 0, keys.length, from)
  select(keys, from, keys.length, to - 1)
  keys.subarray(from, to).sort()
}

/** Hoare's quickselect in keys[low, high): afterwards keys[k] is the k-th smallest, the smaller before it, the larger after. */
function select (keys: Float64Array, low: number, high: number, k: number): void {
  let hi = high - 1
  while (hi > low) {
    // The middle of three keys drawn at random: no arrangement of places (sorted, reversed, organ pipes) makes it quadratic but by chance.
    const pivot = medianOf(keys[low + Math.floor(Math.random() * (hi - low + 1))], keys[low + Math.floor(Math.random() * (hi - low + 1))], keys[low + Math.floor(Math.random() * (hi - low + 1))])
    let i = low
    let j = hi
    while (i <= j) {
      while (keys[i] < pivot) i++
      while (keys[j] > pivot) j--
      if (i <= j) {
        const swap = keys[i]
        keys[i++] = keys[j]
        keys[j--] = swap
      }
    }
    // keys[low, j] <= pivot <= keys[i, hi], and between them (when j + 1 < i) the pivot itself.
    if (k <= j) hi = j
    else if (k >= i) low = i
    else return
  }
}

const medianOf = (a: number, b: number, c: number): number => Math.max(Math.min(a, b), Math.min(Math.max(a, b), c))
