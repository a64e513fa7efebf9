import t, { type Test } from 'tap'
import { Bits } from '../../core/catalog/resident/bits.js'
import { SortedOrder } from '../../core/catalog/resident/sorted-order.js'
import { selectRange } from '../../core/catalog/resident/flat-order.js'
import fc from 'fast-check'

/**
 * A sorted order of documents kept under inserts and removals walks as a
 * plain array sorted from scratch would: random sequences of inserts,
 * removals and value changes (remove with the old value, change it, insert
 * again) on values from a tiny domain (so groups of ties span many chunks)
 * with nulls, chunks as small as four documents so that they split, join
 * and empty all the time, and walks stopped at random points. The oracle
 * sorts by bucketing documents by value, not with the comparator the order
 * is given. Each scenario runs from a seed, named when it fails;
 * SORTED_ORDER_SEED=<n> runs that seed alone.
 */

/** mulberry32: a small seeded generator, so that a failure can be run again. */
function generator (seed: number): () => number {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6d2b79f5) >>> 0
    let z = state
    z = Math.imul(z ^ (z >>> 15), z | 1)
    z ^= z + Math.imul(z ^ (z >>> 7), z | 61)
    return ((z ^ (z >>> 14)) >>> 0) / 2 ** 32
  }
}

type Value = number | null

/** What the catalogue passes: value ascending, nulls last, the document number as the tie-break. */
function comparators (values: Value[]): [(a: number, b: number) => number, (a: number, b: number) => boolean, (doc: number) => boolean] {
  const compare = (a: number, b: number): number => {
    const x = values[a]
    const y = values[b]
    if (x === null) return y === null ? a - b : 1
    if (y === null) return -1
    return x - y || a - b
  }
  return [compare, (a, b) => values[a] === values[b], doc => values[doc] === null]
}

/** The oracle: the members bucketed by value, the values sorted, each bucket's documents sorted. */
function oracle (members: Set<number>, values: Value[]): { ascending: number[], descending: number[], reversed: number[] } {
  const buckets = new Map<number, number[]>()
  const nulls: number[] = []
  for (const doc of members) {
    const value = values[doc]
    if (value === null) nulls.push(doc)
    else if (buckets.has(value)) buckets.get(value)?.push(doc)
    else buckets.set(value, [doc])
  }
  const byNumber = (a: number, b: number): number => a - b
  nulls.sort(byNumber)
  const keys = [...buckets.keys()].sort(byNumber)
  const groups = keys.map(key => (buckets.get(key) ?? []).sort(byNumber))
  const ascending = [...groups.flat(), ...nulls]
  return { ascending, descending: [...groups.reverse().flat(), ...nulls], reversed: [...ascending].reverse() }
}

/** The documents a walk visits, stopping after `stopAfter` (all when undefined); visit answers nothing until then. */
function walked (walk: (visit: (doc: number) => boolean | void) => void, stopAfter?: number): number[] {
  const docs: number[] = []
  walk(doc => {
    docs.push(doc)
    if (stopAfter !== undefined && docs.length >= stopAfter) return false
  })
  return docs
}

/** Where two walks first differ, or null. */
function difference (actual: number[], expected: number[]): string | null {
  const length = Math.max(actual.length, expected.length)
  for (let i = 0; i < length; i++) {
    if (actual[i] !== expected[i]) return `at ${i} of ${expected.length}: walked ${actual.slice(i, i + 5).join(',')}…, expected ${expected.slice(i, i + 5).join(',')}…`
  }
  return null
}

interface Scenario {
  /** Documents numbered 0 … universe − 1. */
  universe: number
  chunkSize: number
  /** Values drawn from 0 … domain − 1, or null. */
  domain: number
  nullShare: number
  /** How many documents the order is built from before the changes. */
  built: number
  /** Inserts until this many are in, then random changes, then removals until none is. */
  fill: number
  changes: number
  /** Walks are checked after every `checkEvery` steps. */
  checkEvery: number
}

/** Runs a scenario from a seed: null when the order agreed with the oracle throughout, else where it did not. */
function run (seed: number, s: Scenario): string | null {
  const random = generator(seed)
  const below = (n: number): number => Math.floor(random() * n)
  const draw = (): Value => random() < s.nullShare ? null : below(s.domain)
  const values: Value[] = Array.from({ length: s.universe }, draw)
  const [compare, sameValue, isNull] = comparators(values)
  // Members in a set, and in an array for drawing one (swap-removed).
  const members = new Set<number>()
  const memberList: number[] = []
  const outside: number[] = []
  const numbers = Array.from({ length: s.universe }, (_, i) => i)
  for (let i = numbers.length - 1; i > 0; i--) {
    const j = below(i + 1);
    [numbers[i], numbers[j]] = [numbers[j], numbers[i]]
  }
  for (const doc of numbers) {
    if (memberList.length < s.built) {
      members.add(doc)
      memberList.push(doc)
    } else outside.push(doc)
  }
  const order = SortedOrder.build(memberList, compare, sameValue, isNull, s.chunkSize)
  const take = (list: number[]): number => {
    const i = below(list.length)
    const doc = list[i]
    list[i] = list[list.length - 1]
    list.pop()
    return doc
  }
  const insert = (): void => {
    const doc = take(outside)
    order.insert(doc)
    members.add(doc)
    memberList.push(doc)
  }
  let problem: string | null = null
  const remove = (): void => {
    const doc = take(memberList)
    if (!order.remove(doc)) problem = `remove(${doc}) answered false for a member`
    members.delete(doc)
    outside.push(doc)
  }

  const check = (step: string): string | null => {
    if (problem !== null) return `${step}: ${problem}`
    if (order.size !== members.size) return `${step}: size ${order.size}, expected ${members.size}`
    const expected = oracle(members, values)
    const walks = [['ascending', order.ascending.bind(order)], ['descending', order.descending.bind(order)], ['reversed', order.reversed.bind(order)]] as const
    for (const [name, walk] of walks) {
      const full = difference(walked(walk), expected[name])
      if (full !== null) return `${step}, ${name}: ${full}`
      for (let i = 0; i < 3; i++) {
        const stopAfter = 1 + below(members.size + 2)
        const stopped = difference(walked(walk, stopAfter), expected[name].slice(0, stopAfter))
        if (stopped !== null) return `${step}, ${name} stopped after ${stopAfter}: ${stopped}`
      }
      // A range of values between a lower bound and an upper one (nulls pass both tests, as they come last): two searches, then a walk.
      if (name === 'ascending') {
        for (let i = 0; i < 3; i++) {
          const low = below(s.domain + 1) - 1
          const high = below(s.domain + 1) - 1
          const inRange = (doc: number): boolean => values[doc] !== null && (values[doc] as number) >= low && (values[doc] as number) <= high
          const found: number[] = []
          order.between(doc => values[doc] === null || (values[doc] as number) >= low, doc => values[doc] === null || (values[doc] as number) > high, doc => { found.push(doc) })
          const wrong = difference(found, expected.ascending.filter(inRange))
          if (wrong !== null) return `${step}, values ${low} to ${high} from the search: ${wrong}`
        }
      }
      // Laid flat, then patched by the changes since (asked twice: the second is the one kept): every member, walked and sorted.
      for (const flat of [order.flat(name), order.flat(name)]) {
        const all = new Bits(s.universe)
        for (const doc of members) all.add(doc)
        const walkedAll = difference(flat.walkedPage(all, 0, members.size), expected[name])
        if (walkedAll !== null) return `${step}, ${name} flat, walked: ${walkedAll}`
        const sortedAll = difference(flat.selectedPage(all, members.size, 0, members.size), expected[name])
        if (sortedAll !== null) return `${step}, ${name} flat, sorted: ${sortedAll}`
      }
      for (let i = 0; i < 3; i++) {
        const share = [0.02, 0.3, 1][i]
        const matches = new Bits(s.universe)
        for (const doc of members) if (random() < share) matches.add(doc)
        const count = matches.count()
        const start = below(count + 2)
        const size = 1 + below(30)
        const flat = order.flat(name)
        const wanted = expected[name].filter(doc => matches.has(doc)).slice(start, start + size)
        const end = Math.min(count, start + size)
        const pages = { chosen: flat.page(matches, count, start, size), walked: start < end ? flat.walkedPage(matches, start, end) : [], sorted: start < end ? flat.selectedPage(matches, count, start, end) : [] }
        for (const [how, page] of Object.entries(pages)) {
          const wrong = difference(page, wanted)
          if (wrong !== null) return `${step}, ${name} page of ${count} matches from ${start}, ${size} (${how}): ${wrong}`
        }
        // The matches within a bound of the order's own values (they lie together, at its end for a lower bound ascending), walked from the first place the bound allows.
        if (name !== 'reversed') {
          const threshold = below(s.domain + 1) - 1
          const bound = (doc: number): boolean => values[doc] === null || (name === 'ascending' ? (values[doc] as number) >= threshold : (values[doc] as number) <= threshold)
          const within = new Bits(s.universe)
          matches.forEach(doc => { if (bound(doc)) within.add(doc) })
          const inBound = within.count()
          const from = below(inBound + 2)
          const bounded = flat.page(within, inBound, from, size, flat.firstPlace(bound))
          const wrong = difference(bounded, expected[name].filter(doc => within.has(doc)).slice(from, from + size))
          if (wrong !== null) return `${step}, ${name} page of ${inBound} matches within ${threshold}, from ${from}, ${size}: ${wrong}`
        }
      }
    }
    return null
  }

  let steps = 0
  const checked = (phase: string): string | null => ++steps % s.checkEvery === 0 ? check(`${phase} step ${steps}`) : null
  while (members.size < s.fill && outside.length > 0) {
    insert()
    const found = checked('filling')
    if (found !== null) return found
  }
  for (let i = 0; i < s.changes; i++) {
    const roll = random()
    if (roll < 0.25 && outside.length > 0) insert()
    else if (roll < 0.5 && memberList.length > 0) remove()
    else if (roll < 0.6 && outside.length > 0) {
      // A document not in the order is not found, whatever its value.
      const doc = outside[below(outside.length)]
      if (order.remove(doc)) return `step ${steps}: remove(${doc}) answered true for a document not in the order`
    } else if (memberList.length > 0) {
      // A value change: removed with its old value, inserted with the new.
      const doc = memberList[below(memberList.length)]
      if (!order.remove(doc)) return `step ${steps}: remove(${doc}) before a change answered false`
      values[doc] = draw()
      order.insert(doc)
    } else if (outside.length > 0) values[outside[below(outside.length)]] = draw()
    const found = checked('changing')
    if (found !== null) return found
  }
  while (memberList.length > 0) {
    remove()
    const found = checked('emptying')
    if (found !== null) return found
  }
  return check('at the end')
}

const only = process.env.SORTED_ORDER_SEED === undefined ? undefined : Number(process.env.SORTED_ORDER_SEED)
const seeds = (count: number, from: number): number[] => only !== undefined ? [only] : Array.from({ length: count }, (_, i) => from + i)

/** Runs a scenario over seeds, one assertion in all; the failing seed is in the message. */
function agrees (t: Test, name: string, scenario: Scenario, seedList: number[]): void {
  for (const seed of seedList) {
    let found: string | null
    try {
      found = run(seed, scenario)
    } catch (error) {
      found = `threw ${String(error)}`
    }
    if (found !== null) {
      t.fail(`${name}, seed ${seed} (SORTED_ORDER_SEED=${seed}): ${found}`)
      return
    }
  }
  t.pass(`${name}: agreed with the oracle over ${seedList.length === 1 ? 'one seed' : `${seedList.length} seeds`}`)
}

t.test('small orders in chunks of four agree with the oracle after every step', async t => {
  const small = { universe: 40, chunkSize: 4, built: 0, fill: 30, changes: 600, checkEvery: 1 }
  agrees(t, 'one value', { ...small, domain: 1, nullShare: 0 }, seeds(40, 1))
  agrees(t, 'three values and nulls', { ...small, domain: 3, nullShare: 0.25 }, seeds(80, 100))
  agrees(t, 'mostly nulls', { ...small, domain: 2, nullShare: 0.8 }, seeds(20, 200))
  agrees(t, 'only nulls', { ...small, domain: 2, nullShare: 1 }, seeds(10, 300))
  agrees(t, 'distinct values', { ...small, domain: 1_000_000, nullShare: 0.1 }, seeds(20, 400))
  agrees(t, 'built, then changed', { ...small, domain: 4, nullShare: 0.2, built: 25, chunkSize: 5 }, seeds(80, 500))
})

t.test('20,000 documents in chunks of four: thousands of splits, joins and dropped chunks', async t => {
  const large = { universe: 20_000, chunkSize: 4, built: 0, fill: 20_000, changes: 20_000, checkEvery: 1_000 }
  agrees(t, 'filled one by one', { ...large, domain: 3, nullShare: 0.2 }, seeds(1, 1000))
  agrees(t, 'built, then changed', { ...large, domain: 5, nullShare: 0.3, built: 15_000, chunkSize: 7 }, seeds(1, 2000))
  agrees(t, 'default chunks, distinct values', { ...large, chunkSize: 1024, domain: 1e9, nullShare: 0.05 }, seeds(1, 3000))
})

t.test('a page from the top of 100,000 ties is found by binary search, not by a walk back', async t => {
  const docs = 100_010
  // Documents 0 … 9 hold value 2, the rest value 1: the top group is 0 … 9, the next group 10 … 100,009.
  const values: Value[] = Array.from({ length: docs }, (_, doc) => doc < 10 ? 2 : 1)
  values.push(null, null)
  let tests = 0
  const [compare, sameValue, isNull] = comparators(values)
  const order = SortedOrder.build(Array.from({ length: docs + 2 }, (_, i) => docs + 1 - i), compare,
    (a, b) => { tests++; return sameValue(a, b) }, doc => { tests++; return isNull(doc) })
  tests = 0
  const page = walked(order.descending.bind(order), 25)
  t.same(page, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24])
  t.ok(tests < 100, `${tests} value tests for the page (log₂ of 100,000 is 17)`)
})

t.test('what the caller gets wrong is refused or answered false', async t => {
  const values: Value[] = [3, 1, null, 1]
  const [compare, sameValue, isNull] = comparators(values)
  t.throws(() => SortedOrder.build([0, 1, 0], compare, sameValue, isNull), /given twice/)
  t.throws(() => new SortedOrder(compare, sameValue, isNull, 3), /at least 4/)
  const order = new SortedOrder(compare, sameValue, isNull)
  t.equal(order.remove(1), false, 'nothing to remove from an empty order')
  t.same(walked(order.descending.bind(order)), [])
  for (const doc of [2, 0, 3, 1]) order.insert(doc)
  t.same(walked(order.ascending.bind(order)), [1, 3, 0, 2])
  t.same(walked(order.descending.bind(order)), [0, 1, 3, 2])
  t.equal(order.size, 4)
  t.ok(order.byteSize >= 4 * 1024, 'a chunk counts with its room')
})

t.test('selectRange puts the keys of a page in order at their offsets, whatever their arrangement', async t => {
  const arrangements = {
    'as drawn': (keys: number[]) => keys,
    sorted: (keys: number[]) => keys.sort((a, b) => a - b),
    reversed: (keys: number[]) => keys.sort((a, b) => b - a),
    'organ pipes': (keys: number[]) => { const sorted = [...keys].sort((a, b) => a - b); return [...sorted.filter((_, i) => i % 2 === 0), ...sorted.filter((_, i) => i % 2 === 1).reverse()] }
  }
  fc.assert(fc.property(
    fc.uniqueArray(fc.double({ min: -1, max: 1e7, noNaN: true, noDefaultInfinity: true }), { minLength: 0, maxLength: 400 }),
    fc.constantFrom(...Object.keys(arrangements) as Array<keyof typeof arrangements>),
    fc.nat(), fc.nat(),
    (distinct, arrangement, a, b) => {
      const keys = Float64Array.from(arrangements[arrangement]([...distinct]))
      const from = keys.length === 0 ? 0 : a % (keys.length + 1)
      const to = Math.min(keys.length, from + (b % 40))
      const expected = [...keys].sort((x, y) => x - y)
      selectRange(keys, from, to)
      t.strictSame([...keys.subarray(from, to)], expected.slice(from, to))
      t.strictSame([...keys].sort((x, y) => x - y), expected, 'the same keys')
    }
  ), { numRuns: 300 })
})
