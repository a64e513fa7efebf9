import t from 'tap'
import { FailureThrottle } from '../../core/throttle.js'

// Login throttling (API.md §3): failures per key in a sliding window; times in ms.
const WINDOW = 60_000

t.test('a key may try until it has `limit` failures in the window', async t => {
  const throttle = new FailureThrottle(3, WINDOW)
  throttle.fail('jane', 0)
  throttle.fail('jane', 1000)
  t.equal(throttle.retryAfter('jane', 2000), 0, 'two failures are below the limit of 3')
  throttle.fail('jane', 2000)
  t.equal(throttle.retryAfter('jane', 2000), 58, 'three: wait until the first leaves the window, in seconds')
  t.equal(throttle.retryAfter('joe', 2000), 0, 'each key counts for itself')
})

t.test('the wait ends when the oldest counted failure leaves the window', async t => {
  const throttle = new FailureThrottle(2, WINDOW)
  throttle.fail('jane', 0)
  throttle.fail('jane', 30_000)
  t.equal(throttle.retryAfter('jane', WINDOW - 1), 1, 'a millisecond before: one second, rounded up')
  t.equal(throttle.retryAfter('jane', WINDOW), 0, 'then one failure is left in the window')
  throttle.fail('jane', WINDOW)
  t.equal(throttle.retryAfter('jane', WINDOW), 30, 'and the next failure waits for the second one')
})

t.test('reset forgets a key', async t => {
  const throttle = new FailureThrottle(1, WINDOW)
  throttle.fail('jane', 0)
  t.equal(throttle.retryAfter('jane', 0), 60, 'throttled')
  throttle.reset('jane')
  t.equal(throttle.retryAfter('jane', 0), 0, 'free again')
})

t.test('keys whose failures all left the window are swept once many keys are tracked', async t => {
  const throttle = new FailureThrottle(5, 100, 2)
  throttle.fail('a', 0)
  throttle.fail('b', 0)
  throttle.fail('c', 50)
  t.equal(throttle.trackedKeys, 3, 'a sweep in the window forgets nothing')
  throttle.fail('d', 150)
  throttle.fail('e', 150)
  throttle.fail('f', 150)
  t.equal(throttle.trackedKeys, 6, 'the next sweep waits until twice as many keys are tracked')
  throttle.fail('g', 200)
  t.equal(throttle.trackedKeys, 4, 'a, b (failed at 0) and c (at 50) left the window: forgotten; d, e, f stay')
})
