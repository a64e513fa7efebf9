import t, { type Test } from 'tap'
import fc from 'fast-check'
import { build, type TestApp } from '../helper.js'

/**
 * Ordering of a folder's items (plone.restapi's `ordering` and `sort` in a
 * PATCH of the folder, core/content/ordering.ts): plone.folder's rules, the
 * catalogue's getObjPositionInParent following at once, in every process.
 */

type Call = TestApp['call']

/** The ids of a folder's items as a GET of the folder lists them. */
const listed = async (call: Call, folder: string, token: string): Promise<string[]> =>
  (await call('GET', `${folder}?b_size=1000`, undefined, token)).json().items.map((item: { '@id': string }) => item['@id'].replace(/^.*\//, ''))

/** The ids of a folder's items as @search answers them by position. */
const searched = async (call: Call, folder: string, token: string): Promise<string[]> =>
  (await call('GET', `/@search?path.query=${folder}&path.depth=1&sort_on=getObjPositionInParent&b_size=1000`, undefined, token)).json().items.map((item: { '@id': string }) => item['@id'].replace(/^.*\//, ''))

async function folderWith (t: Test, call: Call, token: string, folder: string, ids: string[]): Promise<void> {
  t.equal((await call('POST', '/', { '@type': 'folder', id: folder.slice(1), title: folder }, token)).statusCode, 201)
  for (const [i, id] of ids.entries()) {
    const res = await call('POST', folder, { '@type': 'Document', id, title: `Page ${String.fromCharCode(90 - i)}` }, token)
    t.equal(res.statusCode, 201, res.body)
  }
}

/**
 * The oracle: plone.folder's moveObjectsByDelta for one id, written from its
 * source (the subset reversed for a move down, the id moved up by |delta|,
 * the subset's ids written back into the slots the subset held).
 */
function oracleMove (order: string[], id: string, delta: number, subsetIds?: string[]): string[] {
  let subset = subsetIds === undefined ? [...order] : [...subsetIds]
  if (delta > 0) subset.reverse()
  const old = subset.indexOf(id)
  if (old >= 0) {
    const next = Math.max(old - Math.abs(delta), 0)
    if (next !== old) {
      subset.splice(old, 1)
      subset.splice(next, 0, id)
    }
  }
  if (delta > 0) subset = subset.reverse()
  let i = 0
  return order.map(item => subset.includes(item) ? subset[i++] : item)
}

t.test('ordering, as plone.restapi documents it', async t => {
  const { call, tokenFor } = await build(t)
  const admin = await tokenFor('admin')
  await folderWith(t, call, admin, '/folder', ['item_1', 'item_2', 'item_3', 'item5'])
  const patch = async (body: unknown, token = admin, path = '/folder'): Promise<{ statusCode: number, body: string, json: () => any }> => await call('PATCH', path, body, token)
  const order = async (): Promise<string[]> => {
    const inListing = await listed(call, '/folder', admin)
    t.same(await searched(call, '/folder', admin), inListing, '@search by position answers the listing\'s order')
    return inListing
  }

  t.test('the documented example: to the top of a subset', async t => {
    const res = await patch({ ordering: { obj_id: 'item_3', delta: 'top', subset_ids: ['item_1', 'item_3', 'item5'] } })
    t.equal(res.statusCode, 204, res.body)
    t.same(await order(), ['item_3', 'item_2', 'item_1', 'item5'], 'the subset takes the places it held; item_2 stays')
  })

  t.test('bottom, and integer deltas (also as text, as Python\'s int() reads them)', async t => {
    t.equal((await patch({ ordering: { obj_id: 'item_3', delta: 'bottom' } })).statusCode, 204)
    t.same(await order(), ['item_2', 'item_1', 'item5', 'item_3'])
    t.equal((await patch({ ordering: { obj_id: 'item_3', delta: -2 } })).statusCode, 204)
    t.same(await order(), ['item_2', 'item_3', 'item_1', 'item5'])
    t.equal((await patch({ ordering: { obj_id: 'item_2', delta: '2' } })).statusCode, 204)
    t.same(await order(), ['item_3', 'item_1', 'item_2', 'item5'])
    t.equal((await patch({ ordering: { obj_id: 'item_2', delta: 100 } })).statusCode, 204, 'past the end: the end')
    t.same(await order(), ['item_3', 'item_1', 'item5', 'item_2'])
    t.equal((await patch({ ordering: { obj_id: 'item_2', delta: 0 } })).statusCode, 204, 'no move')
    t.equal((await patch({ ordering: { obj_id: 'item_2', delta: 1, subset_ids: ['item_3', 'item_1'] } })).statusCode, 204, 'outside the subset: nothing moves')
    t.same(await order(), ['item_3', 'item_1', 'item5', 'item_2'])
  })

  t.test('400s: mismatch, unknown ids, wrong shapes — nothing moves', async t => {
    const before = await order()
    const refused: Array<[unknown, RegExp]> = [
      [{ ordering: { obj_id: 'item_1', delta: 'top', subset_ids: ['item_1', 'item_3'] } }, /Client\/server ordering mismatch/],
      [{ ordering: { obj_id: 'nothing', delta: 'top' } }, /no item 'nothing'/],
      [{ ordering: { obj_id: 'item_1', delta: 1, subset_ids: ['item_3', 'ghost'] } }, /no item 'ghost'/],
      [{ ordering: { obj_id: 'item_1', delta: 1, subset_ids: ['item_3', 'item_3'] } }, /twice/],
      [{ ordering: { obj_id: 'item_1', delta: 1.5 } }, /delta/],
      [{ ordering: { obj_id: 'item_1', delta: 'up' } }, /delta/],
      [{ ordering: { obj_id: 'item_1', delta: 1e300 } }, /delta/],
      [{ ordering: { obj_id: 'item_1', delta: '99999999999999999999' } }, /delta/],
      [{ ordering: { obj_id: 'item_1', delta: null } }, /delta/],
      [{ ordering: { obj_id: { id: 'item_1' }, delta: 1 } }, /obj_id/],
      [{ ordering: { obj_id: 'x'.repeat(300), delta: 1 } }, /obj_id/],
      [{ ordering: { obj_id: 'item_1', delta: 1, subset_ids: 'item_1' } }, /subset_ids/],
      [{ ordering: { obj_id: 'item_1', delta: 1, subset_ids: [1, 2] } }, /subset_ids/],
      [{ ordering: { obj_id: 'item_1', delta: 1, subset_ids: Array.from({ length: 5_001 }, (_, i) => `i${i}`) } }, /subset_ids/],
      [{ ordering: 'item_1' }, /ordering must be an object/],
      [{ ordering: [] }, /ordering must be an object/],
      [{ sort: { on: 'no_such_index' } }, /.+/],
      [{ sort: { on: 'SearchableText' } }, /.+/],
      [{ sort: { on: 'sortable_title', order: 'sideways' } }, /sort.order/],
      [{ sort: 'title' }, /sort must be an object/]
    ]
    for (const [body, message] of refused) {
      const res = await patch(body)
      t.equal(res.statusCode, 400, JSON.stringify(body).slice(0, 120))
      t.match(res.json(), { message }, JSON.stringify(body).slice(0, 120))
    }
    const hostile = await call('PATCH', '/folder', undefined, admin, { 'content-type': 'application/json' })
    t.equal(hostile.statusCode, 400, 'no body')
    const protoKey = await patch(JSON.parse('{"ordering": {"obj_id": "item_1", "delta": 1, "__proto__": {"x": 1}}}'))
    t.equal(protoKey.statusCode, 400, 'a prototype key')
    const nul = await patch({ ordering: { obj_id: 'item\u00001', delta: 1 } })
    t.equal(nul.statusCode, 400, 'NUL')
    t.same(await order(), before, 'nothing moved')
  })

  t.test('fields and ordering in one PATCH; a refused ordering writes no field', async t => {
    const res = await patch({ title: 'Renamed', ordering: { obj_id: 'item5', delta: 'top' } })
    t.equal(res.statusCode, 204, res.body)
    t.equal((await call('GET', '/folder', undefined, admin)).json().title, 'Renamed')
    t.equal((await order())[0], 'item5')
    const refused = await patch({ title: 'Not written', ordering: { obj_id: 'ghost', delta: 'top' } })
    t.equal(refused.statusCode, 400)
    t.equal((await call('GET', '/folder', undefined, admin)).json().title, 'Renamed')
  })

  t.test('sort: every item by a catalogue index, either way', async t => {
    // Titles run Page Z (item_1) … Page W (item5): ascending by title is the creation order reversed.
    t.equal((await patch({ sort: { on: 'sortable_title', order: 'ascending' } })).statusCode, 204)
    t.same(await order(), ['item5', 'item_3', 'item_2', 'item_1'])
    t.equal((await patch({ sort: { on: 'Title', order: 'descending' } })).statusCode, 204, 'Title sorts as sortable_title')
    t.same(await order(), ['item_1', 'item_2', 'item_3', 'item5'])
    t.equal((await patch({ sort: { on: 'modified', order: 'descending' } })).statusCode, 204, 'plone.restapi\'s content_resort example')
    t.same(await order(), ['item5', 'item_3', 'item_2', 'item_1'])
    t.equal((await patch({ sort: { on: 'created', order: 'reverse' } })).statusCode, 204)
    t.same(await order(), ['item5', 'item_3', 'item_2', 'item_1'])
    // What Volto's folder contents offers ("Rearrange by"): Indexes' sort_on, each way.
    for (const on of ['id', 'sortable_title', 'effective', 'created', 'modified', 'portal_type']) {
      for (const direction of ['ascending', 'descending']) {
        t.equal((await patch({ sort: { on, order: direction } })).statusCode, 204, `${on} ${direction}`)
      }
    }
    t.same(await order(), ['item_1', 'item_2', 'item_3', 'item5'], 'by type, descending (all alike): ties in creation order, as the catalogue breaks them')
    t.equal((await patch({ sort: { on: 'id' } })).statusCode, 204)
    t.same(await order(), ['item5', 'item_1', 'item_2', 'item_3'], 'by id, code point order')
  })

  t.test('top and bottom write one row; a create after them goes last', async t => {
    const before = await order()
    t.equal((await patch({ ordering: { obj_id: before[2], delta: 'top' } })).statusCode, 204)
    t.equal((await patch({ ordering: { obj_id: before[1], delta: 'bottom' } })).statusCode, 204)
    t.equal((await call('POST', '/folder', { '@type': 'Document', id: 'later', title: 'Later' }, admin)).statusCode, 201)
    t.same(await order(), [before[2], before[0], before[3], before[1], 'later'])
  })

  t.test('who may: Modify on the folder; an item is not orderable', async t => {
    const before = await order()
    const last = before[before.length - 1]
    t.equal((await call('PATCH', '/folder', { ordering: { obj_id: last, delta: 'top' } })).statusCode, 401, 'anonymous')
    const member = await tokenFor('member')
    t.equal((await patch({ ordering: { obj_id: last, delta: 'top' } }, member)).statusCode, 403, 'a Member, the folder private')
    t.equal((await call('POST', '/folder/@workflow/publish', {}, admin)).statusCode, 200)
    t.equal((await patch({ ordering: { obj_id: last, delta: 'top' } }, member)).statusCode, 403, 'a Member, the folder published')
    t.equal((await patch({ sort: { on: 'id' } }, member)).statusCode, 403)
    t.same(await order(), before, 'nothing moved')
    const editor = await tokenFor('editor', ['Editor'])
    t.equal((await patch({ ordering: { obj_id: last, delta: 'top' } }, editor)).statusCode, 204, 'an Editor')
    t.equal((await order())[0], last)
    t.equal((await call('POST', '/', { '@type': 'Link', id: 'a-link', title: 'L', remoteUrl: 'https://plone.org' }, admin)).statusCode, 201)
    const item = await patch({ ordering: { obj_id: 'x', delta: 'top' } }, admin, '/a-link')
    t.equal(item.statusCode, 400)
    t.match(item.json(), { message: 'Content ordering is not supported by this resource' })
  })
})

t.test('moves against plone.folder\'s rules (property test)', async t => {
  const { call, tokenFor } = await build(t)
  const admin = await tokenFor('admin')
  const ids = ['a', 'b', 'c', 'd', 'e', 'f']
  await folderWith(t, call, admin, '/prop', ids)
  let expected = [...ids]
  const move = fc.record({
    id: fc.constantFrom(...ids),
    delta: fc.oneof(fc.constantFrom<'top' | 'bottom'>('top', 'bottom'), fc.integer({ min: -7, max: 7 })),
    subset: fc.option(fc.subarray(ids, { minLength: 1 }), { nil: undefined })
  })
  await fc.assert(fc.asyncProperty(move, async ({ id, delta, subset }) => {
    // A subset as the client sees it: in the folder's order now.
    const subsetIds = subset === undefined ? undefined : expected.filter(item => subset.includes(item))
    const res = await call('PATCH', '/prop', { ordering: { obj_id: id, delta, ...(subsetIds !== undefined ? { subset_ids: subsetIds } : {}) } }, admin)
    if (res.statusCode !== 204) return false
    const steps = delta === 'top' ? -ids.length : delta === 'bottom' ? ids.length : delta
    expected = oracleMove(expected, id, steps, subsetIds)
    const inListing = await listed(call, '/prop', admin)
    return JSON.stringify(inListing) === JSON.stringify(expected) && JSON.stringify(await searched(call, '/prop', admin)) === JSON.stringify(expected)
  }), { numRuns: 60 })
})

t.test('two reorders and a create at once end with every item exactly once, seen by a second process', async t => {
  const first = await build(t)
  const second = await build(t, { databaseUrl: first.databaseUrl })
  const admin = await first.tokenFor('admin')
  const admin2 = await second.tokenFor('admin')
  const ids = Array.from({ length: 12 }, (_, i) => `p${i}`)
  await folderWith(t, first.call, admin, '/race', ids)
  for (let round = 0; round < 5; round++) {
    const results = await Promise.all([
      first.call('PATCH', '/race', { ordering: { obj_id: ids[round], delta: 'bottom' } }, admin),
      second.call('PATCH', '/race', { sort: { on: 'sortable_title', order: round % 2 === 0 ? 'ascending' : 'descending' } }, admin2),
      second.call('POST', '/race', { '@type': 'Document', id: `new${round}`, title: `New ${round}` }, admin2),
      first.call('PATCH', '/race', { ordering: { obj_id: ids[round + 1], delta: -3 } }, admin)
    ])
    t.same(results.map(r => r.statusCode), [204, 204, 201, 204], results.map(r => r.body).join(' '))
    const all = [...ids, ...Array.from({ length: round + 1 }, (_, i) => `new${i}`)].sort()
    const { rows } = await first.app.db.query<{ id: string, position: string, catalogued: string }>(`SELECT c.id, c.position, k."getObjPositionInParent" AS catalogued
      FROM content c JOIN catalog k ON k.uid = c.uid WHERE c.parent_uid = (SELECT uid FROM content WHERE path = '/race') ORDER BY c.position`)
    t.same(rows.map(r => r.id).sort(), all, 'every item once')
    t.equal(new Set(rows.map(r => r.position)).size, rows.length, 'positions distinct')
    t.ok(rows.every(r => r.position === r.catalogued), 'the catalogue holds the positions')
    const byPosition = rows.map(r => r.id)
    // Each process hears of the other's writes (the second's create, the first's reorders) through the notification, a moment after the commit.
    for (const [call, token] of [[first.call, admin], [second.call, admin2]] as const) {
      for (let wait = 0; JSON.stringify(await searched(call, '/race', token)) !== JSON.stringify(byPosition) && wait < 100; wait++) {
        await new Promise(resolve => setTimeout(resolve, 50))
      }
    }
    t.same(await listed(first.call, '/race', admin), byPosition, 'first process: the listing')
    t.same(await searched(first.call, '/race', admin), byPosition, 'first process: @search')
    t.same(await searched(second.call, '/race', admin2), byPosition, 'second process: @search')
    t.same(await listed(second.call, '/race', admin2), byPosition, 'second process: the listing')
  }
})
