import t from 'tap'
import { build, formUpload, talkBody } from '../helper.js'

/**
 * `@aliases` (plone.restapi's examples: aliases_add, aliases_get,
 * aliases_delete, aliases_root_add, aliases_root_get, _csv_format,
 * aliases_root_filter, aliases_root_delete) and the redirects moves leave:
 * GET and HEAD with the rest of the path and the query, `++api++`,
 * SITE_PATH, a chain of moves, an object created at the old path winning,
 * and no redirect to where a private object went for one who may not view it.
 */
const BASE = 'http://localhost:80'

t.test('aliases', async t => {
  const { call, tokenFor, inject } = await build(t)
  const admin = await tokenFor('admin', ['Manager'])
  const member = await tokenFor('mia', ['Member'])
  const post = async (path: string, body: unknown, token = admin): Promise<string> => {
    const res = await call('POST', path, body, token)
    t.equal(res.statusCode, 201, res.body)
    return new URL(res.json()['@id'] as string).pathname
  }
  await post('/', { '@type': 'Document', id: 'front-page', title: 'Front page' })
  await post('/', { '@type': 'folder', id: 'folder', title: 'Folder' })

  await t.test('an object\'s aliases: add, list, delete', async t => {
    const added = await call('POST', '/front-page/@aliases', { items: [{ path: '/new-alias' }, { path: '/old-alias' }, { path: '/final-alias' }] }, admin)
    t.equal(added.statusCode, 204, added.body)
    const listed = (await call('GET', '/front-page/@aliases', undefined, admin)).json()
    t.equal(listed['@id'], `${BASE}/front-page/@aliases`)
    t.equal(listed.items_total, 3)
    t.match(listed.items[0], { manual: true, path: '/final-alias', 'redirect-to': '/front-page' })
    t.match(listed.items[0].datetime, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d$/)
    t.equal((await call('DELETE', '/front-page/@aliases', { items: [{ path: '/old-alias' }] }, admin)).statusCode, 204)
    t.same((await call('GET', '/front-page/@aliases', undefined, admin)).json().items.map((i: { path: string }) => i.path), ['/final-alias', '/new-alias'])
    const res = await call('GET', '/new-alias', undefined, admin)
    t.same([res.statusCode, res.headers.location], [302, `${BASE}/front-page`], 'an alias redirects')
    const components = (await call('GET', '/front-page', undefined, admin)).json()['@components']
    t.same(components.aliases, { '@id': `${BASE}/front-page/@aliases` })
    const expanded = (await call('GET', '/front-page?expand=aliases', undefined, admin)).json()['@components'].aliases
    t.equal(expanded.items_total, 2)
  })

  await t.test('the site\'s aliases: add with redirect-to, list, filter, CSV, delete', async t => {
    const items = [{ datetime: '2022-05-05', path: '/old-page', 'redirect-to': '/front-page' }, { datetime: '2022-05-05', path: '/fizzbuzz', 'redirect-to': '/front-page' }]
    t.equal((await call('POST', '/@aliases', { items }, admin)).statusCode, 204)
    const all = (await call('GET', '/@aliases?manual=true', undefined, admin)).json()
    t.equal(all['@id'], `${BASE}/@aliases`)
    t.same(all.items.filter((i: { path: string }) => ['/fizzbuzz', '/old-page'].includes(i.path)), [
      { datetime: '2022-05-05T00:00:00', manual: true, path: '/fizzbuzz', 'redirect-to': '/front-page' },
      { datetime: '2022-05-05T00:00:00', manual: true, path: '/old-page', 'redirect-to': '/front-page' }
    ])
    const volto = await call('GET', '/@aliases?b_size=10&b_start=0&end=&manual=&q=&start=', undefined, admin)
    t.same([volto.statusCode, volto.json().items_total], [200, all.items_total], 'empty filters, as Volto\'s panel sends them, are none')
    const filtered = (await call('GET', '/@aliases?query=/fizzbuzz', undefined, admin)).json()
    t.same([filtered.items_total, filtered.items[0].path], [1, '/fizzbuzz'])
    const paged = (await call('GET', '/@aliases?b_size=1', undefined, admin)).json()
    t.same([paged.items.length, paged.items_total > 1, typeof paged.batching.next], [1, true, 'string'])
    const csv = await inject({ method: 'GET', url: '/@aliases?query=/', headers: { accept: 'text/csv', authorization: `Bearer ${admin}` } })
    t.equal(csv.statusCode, 200, csv.body)
    t.match(csv.headers['content-type'], /^text\/csv/)
    t.match(csv.body, /^old path,new path,datetime,manual\n/)
    t.match(csv.body, /\n\/fizzbuzz,\/front-page,2022\/05\/05 00:00:00 GMT\+0,True\n/)
    t.equal((await call('DELETE', '/@aliases', { items: [{ path: '/old-page' }] }, admin)).statusCode, 204)
    t.equal((await call('GET', '/old-page', undefined, admin)).statusCode, 404)
    t.equal((await call('GET', '/@aliases', undefined, member)).statusCode, 403, 'the site\'s list is the managers\'')
    t.equal((await call('POST', '/@aliases', { items }, member)).statusCode, 403)
  })

  await t.test('hostile aliases: 400, nothing added', async t => {
    for (const path of ['relative', '', '/', '/a/../b', '/@search', '/++api++/x', '/a\u0000b', `/${'x'.repeat(3000)}`, '/front-page', '/folder']) {
      const res = await call('POST', '/front-page/@aliases', { items: [{ path: '/ok-before' }, { path }] }, admin)
      t.equal(res.statusCode, 400, path.slice(0, 40))
    }
    t.equal((await call('GET', '/ok-before', undefined, admin)).statusCode, 404, 'nothing of a refused request was added')
    const many = Array.from({ length: 1001 }, (_, i) => ({ path: `/a${i}` }))
    t.equal((await call('POST', '/front-page/@aliases', { items: many }, admin)).statusCode, 400)
    t.equal((await call('POST', '/@aliases', { items: [{ path: '/x', 'redirect-to': '/nothing' }] }, admin)).statusCode, 400)
    t.equal((await call('POST', '/front-page/@aliases', JSON.parse('{"items": [], "__proto__": {}}'), admin)).statusCode, 400)
  })

  /** A multipart upload of `text` as Volto's control panel sends it (a Blob in part `file`), encoded by the platform's FormData. */
  const upload = async (text: string, { token = admin, type = 'text/csv', field = 'file', path = '/@aliases' } = {}): Promise<{ statusCode: number, body: string, json: () => any }> =>
    await formUpload(inject, path, text, { token, type, field })

  await t.test('the site\'s aliases from a CSV file (the redirects control panel\'s upload)', async t => {
    // A header, both delimiters' forms of lines, the download's date format, manual false, CRLF newlines.
    const csv = 'old path,new path,datetime,manual\r\n/csv-one,/front-page\r\n"/csv,two",/folder/,2021/01/02 03:04:05 GMT+0,False\r\n/csv-three,/folder,2021-06-01T00:00:00Z\r\n'
    const res = await upload(csv)
    t.equal(res.statusCode, 204, res.body)
    const listed = new Map((await call('GET', '/@aliases?query=/csv', undefined, admin)).json().items.map((i: { path: string }) => [i.path, i]))
    t.same([...listed.keys()].sort(), ['/csv,two', '/csv-one', '/csv-three'])
    t.match(listed.get('/csv-one'), { manual: true, 'redirect-to': '/front-page' })
    t.same(listed.get('/csv-three'), { datetime: '2021-06-01T00:00:00', manual: true, path: '/csv-three', 'redirect-to': '/folder' })
    t.same(listed.get('/csv,two'), { datetime: '2021-01-02T03:04:05', manual: false, path: '/csv,two', 'redirect-to': '/folder' })
    t.same([(await call('GET', '/csv-one', undefined, admin)).headers.location], [`${BASE}/front-page`], 'an uploaded alias redirects')
    t.equal((await upload('/semi;/front-page\n/colon;/folder\n')).statusCode, 204, 'semicolons are found as the delimiter')
    t.equal((await call('GET', '/colon', undefined, admin)).statusCode, 302)

    // Every line is checked; any error and nothing of the file is added.
    const bad = await upload([
      '/fine-line,/front-page', // 1: would be fine
      '/only-one-column', // 2
      'relative,/front-page', // 3
      '/to-nowhere,/nothing-here', // 4
      '/front-page,/folder', // 5: a working path
      '/csv-one,/folder', // 6: already an alias
      '/outside,https://example.org/page', // 7: outside the site
      '/self,/self', // 8
      '/@@view,/front-page' // 9
    ].join('\n'))
    t.equal(bad.statusCode, 400, bad.body)
    t.match(bad.json(), { type: 'BadRequest', message: /^Found 8 errors in CSV file \(delimiter detected: ,\)\.$/ })
    t.same(bad.json().csv_errors.map((e: { line_number: number }) => e.line_number), [2, 3, 4, 5, 6, 7, 8, 9])
    t.match(bad.json().csv_errors[2], { line: '/to-nowhere,/nothing-here', message: 'The provided target object does not exist.' })
    t.equal((await call('GET', '/fine-line', undefined, admin)).statusCode, 404, 'nothing of a refused file was added')

    const many = await upload(Array.from({ length: 150 }, (_, i) => `/missing-${i},/nowhere`).join('\n'))
    t.equal(many.json().csv_errors.length, 100, 'at most 100 lines listed')
    t.match(many.json().message, /Found 150 errors/)
    t.equal((await upload('/x,/front-page', { type: 'application/pdf' })).statusCode, 415, 'not a CSV file')
    t.equal((await upload('/x,/front-page', { field: 'other' })).statusCode, 400, 'not in the part named file')
    t.equal((await upload('/x,/front-page', { path: '/folder/@aliases' })).statusCode, 400, 'a file is uploaded at the site root')
    t.equal((await upload('/x,/front-page', { token: member })).statusCode, 403, 'the managers\' upload')
    const huge = await upload(`/x,/front-page\n${'/y,/front-page\n'.repeat(800_000)}`)
    t.equal(huge.statusCode, 413, 'a file larger than 10 MB')
    t.equal(huge.json().type, 'PayloadTooLarge')
    t.equal((await upload('"/unclosed,/front-page\n')).statusCode, 400, 'not CSV')
    t.equal((await call('GET', '/x', undefined, admin)).statusCode, 404, 'nothing of the refused files was added')
    // One path twice in one request: the last counts (no 500 from an upsert that meets its own row).
    t.equal((await call('POST', '/@aliases', { items: [{ path: '/twice', 'redirect-to': '/folder' }, { path: '/twice', 'redirect-to': '/front-page' }] }, admin)).statusCode, 204)
    t.equal((await call('GET', '/twice', undefined, admin)).headers.location, `${BASE}/front-page`)
    t.equal((await upload('/twice-csv,/folder\n/twice-csv,/front-page\n')).statusCode, 204)
    t.equal((await call('GET', '/twice-csv', undefined, admin)).headers.location, `${BASE}/front-page`)
  })

  await t.test('redirects of a move: rest of the path, services, query, HEAD, ++api++', async t => {
    const a = await post('/', { '@type': 'folder', id: 'a', title: 'A' })
    await post(a, { '@type': 'Document', id: 'doc', title: 'Doc' })
    t.equal((await call('POST', '/folder/@move', { source: a }, admin)).statusCode, 200)
    const cases: Array<[string, string]> = [
      ['/a', `${BASE}/folder/a`],
      ['/a/doc', `${BASE}/folder/a/doc`],
      ['/a/doc/@breadcrumbs?x=1&y=%20z', `${BASE}/folder/a/doc/@breadcrumbs?x=1&y=%20z`],
      ['/++api++/a/doc', `${BASE}/++api++/folder/a/doc`],
      ['/a/nothing-here', `${BASE}/folder/a/nothing-here`]
    ]
    for (const [url, location] of cases) {
      const res = await call('GET', url, undefined, admin)
      t.same([res.statusCode, res.headers.location], [302, location], url)
    }
    const head = await inject({ method: 'HEAD', url: '/a/doc', headers: { authorization: `Bearer ${admin}` } })
    t.same([head.statusCode, head.headers.location], [302, `${BASE}/folder/a/doc`])
    // plone.rest: 307 for the other methods, which a client repeats, body and all, at the new address; nothing was written here.
    const patched = await call('PATCH', '/a/doc', { title: 'x' }, admin)
    t.same([patched.statusCode, patched.headers.location], [307, `${BASE}/folder/a/doc`], 'a PATCH is sent on, its method kept')
    t.equal((await call('GET', '/folder/a/doc', undefined, admin)).json().title, 'Doc', 'and nothing was written at the old address')
    t.same([(await call('DELETE', '/a/doc', undefined, admin)).statusCode, (await call('GET', '/folder/a/doc', undefined, admin)).statusCode], [307, 200], 'a DELETE too, deleting nothing')
    const vh = await call('GET', '/VirtualHostBase/http/localhost:3000/++api++/VirtualHostRoot/a/doc', undefined, admin)
    t.same([vh.statusCode, vh.headers.location], [302, 'http://localhost:3000/folder/a/doc'])
  })

  await t.test('a chain of moves leads to the current place; an object created at an old path wins', async t => {
    t.equal((await call('POST', '/@move', { source: '/folder/a' }, admin)).statusCode, 200)
    t.equal((await call('PATCH', '/a', { id: 'a2' }, admin)).statusCode, 204)
    t.equal((await call('GET', '/folder/a/doc', undefined, admin)).headers.location, `${BASE}/a2/doc`)
    t.equal((await call('GET', '/a/doc', undefined, admin)).headers.location, `${BASE}/a2/doc`)
    await post('/', { '@type': 'folder', id: 'a', title: 'A new A' })
    t.equal((await call('GET', '/a', undefined, admin)).json().title, 'A new A', 'the new object is answered')
    t.equal((await call('GET', '/a/doc', undefined, admin)).headers.location, `${BASE}/a2/doc`, 'the document\'s own old path still leads to it')
    t.equal((await call('GET', '/a/@breadcrumbs', undefined, admin)).statusCode, 200)
    t.equal((await call('GET', '/folder/a/doc', undefined, admin)).headers.location, `${BASE}/a2/doc`)
    t.equal((await call('DELETE', '/a2', undefined, admin)).statusCode, 204)
    t.equal((await call('GET', '/folder/a/doc', undefined, admin)).statusCode, 404, 'a deleted object leaves no redirect')
  })

  await t.test('a private object\'s new place is not told to who may not view it', async t => {
    const olga = await tokenFor('olga')
    const talk = await post('/talks', talkBody({ title: 'Secret talk' }), olga)
    t.equal((await call('PATCH', talk, { id: 'renamed-secret' }, olga)).statusCode, 204)
    t.equal((await call('GET', talk, undefined, olga)).headers.location, `${BASE}/talks/renamed-secret`)
    const anonymous = await call('GET', talk)
    t.same([anonymous.statusCode, anonymous.headers.location], [404, undefined])
    t.notMatch(anonymous.body, /renamed-secret/)
    t.equal((await call('GET', talk, undefined, member)).statusCode, 404)
  })
})

t.test('redirects below SITE_PATH', async t => {
  const { call, tokenFor } = await build(t, { env: { SITE_PATH: '/Plone' } })
  const admin = await tokenFor('admin', ['Manager'])
  t.equal((await call('POST', '/Plone', { '@type': 'Document', id: 'page', title: 'Page' }, admin)).statusCode, 201)
  t.equal((await call('PATCH', '/Plone/page', { id: 'renamed' }, admin)).statusCode, 204)
  t.equal((await call('GET', '/Plone/page?a=b', undefined, admin)).headers.location, `${BASE}/Plone/renamed?a=b`)
  t.equal((await call('GET', '/Plone/++api++/page', undefined, admin)).headers.location, `${BASE}/Plone/++api++/renamed`)
})
