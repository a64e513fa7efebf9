import { Bits } from './bits.js'

/**
 * The documents inactive at a moment: not yet effective (`effective` after
 * it) or expired (`expires` at or before it), as the catalogue's
 * effective-date filter says (CatalogSearch.accessClause). The set holds from
 * the moment it was computed until the next moment a document becomes
 * effective or expires (`until`); then, or for an earlier moment, it is
 * computed again by one scan. A changed document updates it in place.
 */
export class Activity {
  private inactive = new Bits()
  /** Microseconds: the set holds for [at, until). */
  private at = Infinity
  private until = -Infinity

  constructor (private readonly effective: (doc: number) => number | null, private readonly expires: (doc: number) => number | null) {}

  private isInactive (doc: number, at: number): boolean {
    const effective = this.effective(doc)
    const expires = this.expires(doc)
    return (effective !== null && effective > at) || (expires !== null && expires <= at)
  }

  /** The next moment after `at` the document's state turns (Infinity: never). */
  private turnOf (doc: number, at: number): number {
    const effective = this.effective(doc)
    const expires = this.expires(doc)
    return Math.min(effective !== null && effective > at ? effective : Infinity, expires !== null && expires > at ? expires : Infinity)
  }

  /** The documents inactive at `now` (microseconds), among `live`. */
  inactiveAt (now: number, live: Bits): Bits {
    if (now < this.at || now >= this.until) {
      const inactive = new Bits(live.capacity)
      let until = Infinity
      live.forEach(doc => {
        if (this.isInactive(doc, now)) inactive.add(doc)
        until = Math.min(until, this.turnOf(doc, now))
      })
      this.inactive = inactive
      this.at = now
      this.until = until
    }
    return this.inactive
  }

  /** Until when (microseconds) the set computed for the last moment asked holds. */
  get holdsUntil (): number { return this.until }

  changed (doc: number, live: boolean): void {
    if (this.at === Infinity) return
    if (live && this.isInactive(doc, this.at)) this.inactive.add(doc)
    else this.inactive.delete(doc)
    if (live) this.until = Math.min(this.until, this.turnOf(doc, this.at))
  }

  get byteSize (): number { return this.inactive.byteSize }
}
