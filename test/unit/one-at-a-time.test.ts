import fc from 'fast-check'
import t from 'tap'
import { OneAtATime } from '../../core/one-at-a-time.js'

/**
 * Tasks of one key run one at a time, in the order asked; tasks of other
 * keys do not wait for them; a failing task fails for its caller alone.
 * Checked against a log of what ran when, under schedules fast-check draws
 * (which tasks are asked for at once, how long each takes, which fail).
 */
const KEYS = ['a', 'b', '__proto__']
const task = fc.record({ key: fc.constantFrom(...KEYS), ticks: fc.integer({ min: 0, max: 3 }), fails: fc.boolean(), askAfter: fc.integer({ min: 0, max: 3 }) })

const tick = async (): Promise<void> => { await new Promise(resolve => setImmediate(resolve)) }

t.test('one at a time per key, in the order asked; a failure is its caller\'s', async t => {
  await fc.assert(fc.asyncProperty(fc.array(task, { maxLength: 12 }), async tasks => {
    const queue = new OneAtATime()
    const log: string[] = []
    const running = new Map<string, number>()
    const unfinished = new Map<string, number>()
    const problems: string[] = []
    const asked = tasks.map(async ({ key, ticks, fails, askAfter }, i) => {
      for (let n = 0; n < askAfter; n++) await tick()
      // The oracle of `waited`: a task of the key was asked for and has not ended.
      const expectWait = (unfinished.get(key) ?? 0) > 0
      unfinished.set(key, (unfinished.get(key) ?? 0) + 1)
      try {
        return await queue.run(key, async waited => {
          if (waited !== expectWait) problems.push(`task ${i}: waited ${waited}, expected ${expectWait}`)
          if ((running.get(key) ?? 0) > 0) problems.push(`task ${i} of ${key} ran beside another`)
          running.set(key, (running.get(key) ?? 0) + 1)
          log.push(`${key}:${i}`)
          for (let n = 0; n < ticks; n++) await tick()
          running.set(key, running.get(key)! - 1)
          if (fails) throw new Error(`task ${i}`)
          return i
        })
      } catch (err) {
        if (!fails || (err as Error).message !== `task ${i}`) problems.push(`task ${i} failed with ${String(err)}`)
        return i
      } finally {
        unfinished.set(key, unfinished.get(key)! - 1)
      }
    })
    const answers = await Promise.all(asked)
    if (answers.some((answer, i) => answer !== i)) problems.push(`answers ${JSON.stringify(answers)}`)
    if (log.length !== tasks.length) problems.push(`${log.length} of ${tasks.length} tasks ran`)
    if (problems.length > 0) throw new Error(problems.join('; '))
  }), { numRuns: 300 })
  t.pass('every schedule ran as the queue promises')
})

t.test('the order asked is the order run, for one key', async t => {
  const queue = new OneAtATime()
  const started: number[] = []
  await Promise.all([0, 1, 2, 3, 4].map(async i => await queue.run('k', async () => { started.push(i); await tick() })))
  t.same(started, [0, 1, 2, 3, 4])
})

t.test('tasks of other keys run beside each other', async t => {
  const queue = new OneAtATime()
  // Each finishes only once the other has started: serialising them would never end.
  let release: () => void = () => {}
  const bStarted = new Promise<void>(resolve => { release = resolve })
  const a = queue.run('a', async () => { await bStarted; return 'a' })
  const b = queue.run('b', async () => { release(); return 'b' })
  t.same(await Promise.all([a, b]), ['a', 'b'])
})
