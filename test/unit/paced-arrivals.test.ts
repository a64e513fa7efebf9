import t from 'tap'
import { arrivalGap } from '../../bench/crowd.mjs'
import { seededRandom } from '../../bench/talks.mjs'

// The paced crowd of `npm run bench` (bench/crowd.mjs) draws the gaps between
// arrivals of a Poisson process: exponential, with mean 1/rate. Checked here
// against that distribution's own facts, not against the module's formula:
// the mean, and the share of gaps longer than x, which is e^(-rate·x).
const DRAWS = 200_000

for (const rate of [50, 1000, 4000]) {
  t.test(`gaps at ${rate} arrivals a second`, async t => {
    const random = seededRandom(rate)
    const gaps = Array.from({ length: DRAWS }, () => arrivalGap(random(), rate))
    const mean = gaps.reduce((a, b) => a + b, 0) / DRAWS
    const expectedMean = 1000 / rate
    // The exponential's standard deviation is its mean: the sample mean's is mean/√n.
    t.ok(Math.abs(mean - expectedMean) < 5 * expectedMean / Math.sqrt(DRAWS), `mean ${mean.toFixed(4)} ms, expected ${expectedMean} ms`)
    t.ok(gaps.every(gap => gap >= 0 && Number.isFinite(gap)), 'every gap finite and not negative')
    for (const multiple of [0.5, 1, 2, 4]) {
      const longer = gaps.filter(gap => gap > multiple * expectedMean).length / DRAWS
      const expected = Math.exp(-multiple)
      const sd = Math.sqrt(expected * (1 - expected) / DRAWS)
      t.ok(Math.abs(longer - expected) < 5 * sd, `longer than ${multiple}× the mean: ${(longer * 100).toFixed(2)} %, expected ${(expected * 100).toFixed(2)} %`)
    }
  })
}

t.test('a draw of 0 is no gap, a draw just below 1 a finite one', async t => {
  t.equal(arrivalGap(0, 100), 0)
  t.ok(Number.isFinite(arrivalGap(1 - Number.EPSILON, 100)))
})
