import fc from 'fast-check'
import t from 'tap'
import { stringBytes } from '../../core/heap-size.js'
import { ENTRY_BYTES, Kept } from '../../core/kept.js'

/**
 * What a process keeps stays within its budget in bytes — each entry's key,
 * value and bookkeeping counted — and the least recently used goes first:
 * Kept against a list that does the same the slow way.
 */
type Op = { kind: 'set', key: string, size: number } | { kind: 'get', key: string }

const ops = fc.array(fc.oneof(
  fc.record({ kind: fc.constant('set' as const), key: fc.constantFrom('a', 'b', 'c', 'd', 'e', '__proto__'), size: fc.integer({ min: 0, max: 600 }) }),
  fc.record({ kind: fc.constant('get' as const), key: fc.constantFrom('a', 'b', 'c', 'd', 'e', '__proto__') })
), { maxLength: 60 })

t.test('within the budget, the least recently used first', async t => {
  const budget = 800
  const bytes = (key: string, size: number): number => ENTRY_BYTES + stringBytes(key) + size
  fc.assert(fc.property(ops, (steps: Op[]) => {
    const kept = new Kept<number>(budget, size => size)
    // The model: [key, size] from the least to the most recently used.
    let model: Array<[string, number]> = []
    for (const step of steps) {
      if (step.kind === 'get') {
        const found = kept.get(step.key)
        const i = model.findIndex(([key]) => key === step.key)
        if (found !== (i < 0 ? undefined : model[i][1])) return false
        if (i >= 0) model = [...model.slice(0, i), ...model.slice(i + 1), model[i]]
        continue
      }
      kept.set(step.key, step.size)
      // A value too large to keep is not kept, and what the key held before is gone.
      model = model.filter(([key]) => key !== step.key)
      if (bytes(step.key, step.size) > budget) continue
      model.push([step.key, step.size])
      while (model.reduce((sum, [key, size]) => sum + bytes(key, size), 0) > budget) model.shift()
      if (kept.bytes !== model.reduce((sum, [key, size]) => sum + bytes(key, size), 0)) return false
    }
    // Everything the model holds is kept, and nothing else.
    return ['a', 'b', 'c', 'd', 'e', '__proto__'].every(key => kept.get(key) === model.find(([k]) => k === key)?.[1])
  }), { numRuns: 500 })
  t.pass('Kept agreed with the model')
})

t.test('a value kept before a write, or past its time, is not found', async t => {
  const kept = new Kept<string>(1024)
  kept.set('q', 'rows', 1000)
  t.equal(kept.get('q', 999), 'rows')
  kept.clear()
  t.equal(kept.get('q', 999), undefined, 'after a write')
  kept.set('q', 'rows', 1000)
  t.equal(kept.get('q', 1000), undefined, 'at the moment an object becomes effective or expires')
})

/**
 * Callers asking the same at once share one read, and a write ends the
 * sharing: against a record of which read each caller was answered from.
 * Every read's value is its own number, so each answer names its read; the
 * rules checked are the ones a caller relies on, not Kept's bookkeeping:
 * - an answer comes from a read that began no earlier than the last write
 *   (clear) before the caller asked;
 * - it holds at the caller's "now" (its `until` is later);
 * - while a read of a key is under way, no second read of it begins in the
 *   same generation (the crowd sends its statement once);
 * - a failed read fails its waiting callers and is not kept.
 */
type Step =
  | { kind: 'ask', key: string, now: number }
  | { kind: 'settle', which: number, holds: number, keep: boolean, fails: boolean }
  | { kind: 'clear' }

const steps = fc.array(fc.oneof(
  { arbitrary: fc.record({ kind: fc.constant('ask' as const), key: fc.constantFrom('a', 'b', '__proto__'), now: fc.integer({ min: 0, max: 20 }) }), weight: 4 },
  { arbitrary: fc.record({ kind: fc.constant('settle' as const), which: fc.nat(), holds: fc.oneof(fc.integer({ min: 1, max: 10 }), fc.constant(Infinity)), keep: fc.boolean(), fails: fc.boolean() }), weight: 3 },
  { arbitrary: fc.record({ kind: fc.constant('clear' as const) }), weight: 1 }
), { maxLength: 40 })

/** A read the test holds open; what it finds holds for `holds` ms after the "now" of the caller that began it. */
interface Read { id: number, key: string, generation: number, settled: boolean, until: number, settle: (holds: number, keep: boolean, fails: boolean) => void }

const turn = async (): Promise<void> => { await new Promise(resolve => setImmediate(resolve)) }

t.test('one read for a crowd, none shared across a write', async t => {
  await fc.assert(fc.asyncProperty(steps, async (plan: Step[]) => {
    const kept = new Kept<number>(1024)
    const reads: Read[] = []
    let generation = 0
    const problems: string[] = []
    const answers: Array<Promise<void>> = []
    const startRead = (key: string, now: number) => async () => await new Promise<{ value: number, until: number, keep: boolean }>((resolve, reject) => {
      if (reads.some(r => r.key === key && r.generation === generation && !r.settled)) problems.push(`a second read of ${key} began while one was under way`)
      const read: Read = {
        id: reads.length,
        key,
        generation,
        settled: false,
        until: NaN,
        settle: (holds, keep, fails) => { read.settled = true; const until = read.until = now + holds; if (fails) reject(new Error(`read ${read.id} failed`)); else resolve({ value: read.id, until, keep }) }
      }
      reads.push(read)
    })
    for (const step of plan) {
      if (step.kind === 'clear') { generation++; kept.clear() }
      if (step.kind === 'settle') {
        const pending = reads.filter(r => !r.settled)
        if (pending.length > 0) pending[step.which % pending.length].settle(step.holds, step.keep, step.fails)
      }
      if (step.kind === 'ask') {
        const asked = generation
        answers.push(kept.read(step.key, step.now, startRead(step.key, step.now)).then(id => {
          const read = reads[id]
          if (read.generation < asked) problems.push(`asked in generation ${asked}, answered from read ${id} of generation ${read.generation}`)
          if (read.key !== step.key) problems.push(`asked for ${step.key}, answered from a read of ${read.key}`)
          if (!(step.now < read.until)) problems.push(`asked at ${step.now}, answered from read ${id}, which held until ${read.until}`)
        }, (err: Error) => {
          if (!/^read \d+ failed$/.test(err.message)) problems.push(`unexpected failure: ${err.message}`)
        }))
      }
      await turn()
    }
    // Whatever is still under way ends (the callers past its end read again, and those reads end too).
    for (let round = 0; reads.some(r => !r.settled); round++) {
      for (const read of reads.filter(r => !r.settled)) read.settle(Infinity, true, false)
      await turn()
      if (round > 100) problems.push('reads never ended')
    }
    await Promise.all(answers)
    return problems.length === 0 || (t.fail(problems.join('; ')), false)
  }), { numRuns: 300 })
  t.pass('every answer came from a read that began after the last write its caller could know of')
})

t.test('a crowd: one read, everyone answered, then kept', async t => {
  const kept = new Kept<string>(1024)
  let reads = 0
  let finish: (value: string) => void = () => {}
  const read = async (): Promise<{ value: string }> => { reads++; return { value: await new Promise<string>(resolve => { finish = resolve }) } }
  const crowd = Array.from({ length: 10 }, async () => await kept.read('page', 0, read))
  await turn()
  finish('rows')
  t.same(await Promise.all(crowd), Array(10).fill('rows'))
  t.equal(reads, 1, 'ten callers, one read')
  t.equal(kept.get('page'), 'rows', 'kept for the next caller')
})

t.test('a write while a read is under way: its callers are answered, later callers read again, nothing stale is kept', async t => {
  const kept = new Kept<string>(1024)
  const finishers: Array<(value: string) => void> = []
  const read = async (): Promise<{ value: string }> => ({ value: await new Promise<string>(resolve => { finishers.push(resolve) }) })
  const before = kept.read('page', 0, read)
  await turn()
  kept.clear()
  const after = kept.read('page', 0, read)
  await turn()
  t.equal(finishers.length, 2, 'the caller after the write did not wait for the read that began before it')
  finishers[0]('before the write')
  t.equal(await before, 'before the write')
  t.equal(kept.get('page'), undefined, 'what the older read found is not kept')
  finishers[1]('after the write')
  t.equal(await after, 'after the write')
  t.equal(kept.get('page'), 'after the write')
})

t.test('a read that fails fails its crowd and leaves nothing kept', async t => {
  const kept = new Kept<string>(1024)
  let fail: (err: Error) => void = () => {}
  const failing = async (): Promise<{ value: string }> => await new Promise((_resolve, reject) => { fail = reject })
  const crowd = Array.from({ length: 3 }, async () => await kept.read('page', 0, failing))
  await turn()
  fail(new Error('connection lost'))
  for (const caller of crowd) await t.rejects(caller, /connection lost/)
  t.equal(await kept.read('page', 0, async () => ({ value: 'read again' })), 'read again')
})

t.test('a caller whose "now" is past what the shared read holds until reads for itself', async t => {
  const kept = new Kept<string>(1024)
  let finish: (found: { value: string, until: number }) => void = () => {}
  let reads = 0
  const read = async (): Promise<{ value: string, until: number }> => { reads++; return reads === 1 ? await new Promise(resolve => { finish = resolve }) : { value: 'at 150', until: Infinity } }
  const early = kept.read('page', 50, read)
  const late = kept.read('page', 150, read)
  await turn()
  finish({ value: 'at 50', until: 100 })
  t.equal(await early, 'at 50')
  t.equal(await late, 'at 150', 'an object became effective at 100: the later caller does not get the earlier answer')
  t.equal(reads, 2)
})

t.test('a write that changes some columns: the values that depend on them go, the others stay, no read under way is joined', async t => {
  const kept = new Kept<{ dependsOn: string[] }>(4096)
  const byType = { dependsOn: ['portal_type'] }
  const byText = { dependsOn: ['searchable', 'portal_type'] }
  kept.set('by type', byType)
  kept.set('by text', byText)
  let finish: (value: { dependsOn: string[] }) => void = () => {}
  let reads = 0
  const read = async (): Promise<{ value: { dependsOn: string[] } }> => { reads++; return { value: await new Promise(resolve => { finish = resolve }) } }
  const underWay = kept.read('by room', 0, read)
  await turn()
  kept.clearWhere(value => value.dependsOn.includes('searchable'))
  t.equal(kept.get('by type'), byType, 'a value that does not depend on what changed stays')
  t.equal(kept.get('by text'), undefined, 'a value that depends on it goes')
  const later = kept.read('by room', 0, async () => ({ value: { dependsOn: ['room'] } }))
  t.same(await later, { dependsOn: ['room'] }, 'a caller after the write does not wait for the read that began before it')
  finish({ dependsOn: ['room', 'stale'] })
  t.same(await underWay, { dependsOn: ['room', 'stale'] })
  t.same(kept.get('by room'), { dependsOn: ['room'] }, 'what the older read found is not kept')
  t.equal(reads, 1)
})

t.test('tagged values: a write clears exactly those that carry one of its tags, evictions and replacements included, within the budget', async t => {
  const names = ['a', 'b', 'c', 'd', '__proto__', 'constructor']
  type TagOp = { kind: 'set', key: string, tags: string[] } | { kind: 'clear', tags: string[] } | { kind: 'get', key: string }
  const tagOps = fc.array(fc.oneof(
    fc.record({ kind: fc.constant('set' as const), key: fc.constantFrom(...names), tags: fc.array(fc.constantFrom(...names), { maxLength: 3 }) }),
    fc.record({ kind: fc.constant('clear' as const), tags: fc.uniqueArray(fc.constantFrom(...names), { maxLength: 3 }) }),
    fc.record({ kind: fc.constant('get' as const), key: fc.constantFrom(...names) })
  ), { maxLength: 80 })
  fc.assert(fc.property(tagOps, fc.integer({ min: 300, max: 1200 }), (steps: TagOp[], budget) => {
    const bytes = (key: string, tags: string[]): number => ENTRY_BYTES + stringBytes(key) + 100 + tags.length * 64
    const kept = new Kept<{ tags: string[] }>(budget, () => 100, value => value.tags)
    // The model: [key, tags] from the least to the most recently used; a clear looks at every value.
    let model: Array<[string, string[]]> = []
    for (const step of steps) {
      if (step.kind === 'get') {
        const i = model.findIndex(([key]) => key === step.key)
        if (kept.get(step.key)?.tags !== (i < 0 ? undefined : model[i][1])) return false
        if (i >= 0) model = [...model.slice(0, i), ...model.slice(i + 1), model[i]]
      } else if (step.kind === 'clear') {
        kept.clearTagged(step.tags)
        model = model.filter(([, tags]) => !tags.some(tag => step.tags.includes(tag)))
      } else {
        kept.set(step.key, { tags: step.tags })
        model = model.filter(([key]) => key !== step.key)
        if (bytes(step.key, step.tags) <= budget) model.push([step.key, step.tags])
        while (model.reduce((sum, [key, tags]) => sum + bytes(key, tags), 0) > budget) model.shift()
      }
      if (kept.bytes !== model.reduce((sum, [key, tags]) => sum + bytes(key, tags), 0)) return false
    }
    return names.every(key => kept.get(key)?.tags === model.find(([k]) => k === key)?.[1])
  }), { numRuns: 1000 })
  t.pass('Kept agreed with the model')

  const kept = new Kept<string>(4096, () => 10, value => [value])
  let finish: (value: string) => void = () => {}
  const underWay = kept.read('k', 0, async () => ({ value: await new Promise<string>(resolve => { finish = resolve }) }))
  await turn()
  kept.clearTagged(['unrelated'])
  finish('x')
  t.equal(await underWay, 'x', 'a read under way across a write is answered')
  t.equal(kept.get('k'), undefined, 'and not kept: what it found may predate the write')
})
