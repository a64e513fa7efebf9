import fc from 'fast-check'
import t from 'tap'
import { build, talkBody } from '../helper.js'

/**
 * Pages are cut from windows of rows kept by the catalogue (core/catalog/kept-results.ts):
 * whatever the start, the size and `sort_limit`, a page holds what the test's own list of the
 * talks says, in its order, and `items_total` is the number of matches (capped by `sort_limit`),
 * whether the window showed the end or the matches were counted. Each page is asked twice (read,
 * then kept), after pages around it were, in the order fast-check draws.
 */
const TALKS = 130
const { call, tokenFor } = await build(t)
const admin = await tokenFor('admin')
/** The oracle: the talks in folder order, which is the order they are imported in. */
const titles = Array.from({ length: TALKS }, (_, i) => `Window talk ${i}`)
t.equal((await call('POST', '/talks/@import', { items: titles.map(title => talkBody({ title })) }, admin)).statusCode, 201)

const asks = fc.array(fc.record({
  start: fc.integer({ min: 0, max: TALKS + 20 }),
  size: fc.integer({ min: 1, max: 120 }),
  sortLimit: fc.option(fc.integer({ min: 1, max: TALKS + 10 }), { nil: undefined })
}), { minLength: 1, maxLength: 6 })

t.test('every page is the slice of the whole result that it names', async t => {
  const problems: string[] = []
  await fc.assert(fc.asyncProperty(asks, async pages => {
    for (const { start, size, sortLimit } of pages) {
      const limited = sortLimit === undefined ? titles : titles.slice(0, sortLimit)
      const expected = { items: limited.slice(start, start + size), total: limited.length }
      for (const time of ['read', 'kept']) {
        const query = `portal_type=talk&sort_on=getObjPositionInParent&b_start=${start}&b_size=${size}${sortLimit === undefined ? '' : `&sort_limit=${sortLimit}`}`
        const res = await call('GET', `/@search?${query}`, undefined, admin)
        const found = { items: res.json().items?.map((item: { title: string }) => item.title), total: res.json().items_total }
        if (JSON.stringify(found) !== JSON.stringify(expected)) {
          problems.push(`${query} (${time}): ${res.statusCode} ${found.items?.length} items from ${found.items?.[0]}, total ${found.total}; expected ${expected.items.length} from ${expected.items[0]}, total ${expected.total}`)
          return false
        }
      }
    }
    return true
  }), { numRuns: 60 }).catch(err => { problems.push(String(err).split('\n').slice(0, 4).join(' ')) })
  t.same(problems, [], 'every page and total was the oracle\'s')
})
