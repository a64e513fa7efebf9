import { AsyncLocalStorage } from 'node:async_hooks'
import fc from 'fast-check'
import t, { type Test } from 'tap'
import { build, talkBody, type TestApp } from '../helper.js'
import { png } from '../image-samples.js'

/**
 * `@contextnavigation` (plone.restapi's navigation portlet) and its
 * `@components` entry: the documented example, plone.restapi's own tests of
 * the portlet's parameters (adapted to this site: its types, and `/talks`
 * at the top), who sees what, hostile parameters, the statements a tree
 * costs, and a property test against an oracle that runs plone.restapi's
 * algorithm as written (ExtendedPathIndex's navtree query, buildFolderTree,
 * the portlet's recursion) over the test's own list of objects.
 */
const BASE = 'http://localhost:80'
const P = 'expand.contextnavigation.'
type Call = TestApp['call']

/** A query string of the portlet's parameters (Volto's `getContextNavigation` prefixes each). */
const portlet = (params: Record<string, string | number | boolean | undefined> = {}): string => {
  const qs = Object.entries(params).filter(([, v]) => v !== undefined).map(([k, v]) => `${P}${k}=${encodeURIComponent(String(v))}`).join('&')
  return qs === '' ? '' : `?${qs}`
}

interface Item { '@id': string, title: string, is_current: boolean, is_in_path: boolean, is_folderish: boolean, review_state: string, items: Item[] }
/** The tree as text: each entry its last path segment, its entries in brackets ("a b(c d)"). */
const shape = (items: Item[]): string => items.map(i => {
  const id = i['@id'].slice(i['@id'].lastIndexOf('/') + 1)
  return i.items.length > 0 ? `${id}(${shape(i.items)})` : id
}).join(' ')

async function creator (t: Test, call: Call): Promise<(parent: string, type: string, id: string, title: string, token: string, extra?: Record<string, unknown>) => Promise<string>> {
  return async (parent, type, id, title, token, extra = {}) => {
    const body = type === 'talk' ? talkBody({ id, title, ...extra }) : { '@type': type, id, title, ...extra }
    const res = await call('POST', parent, body, token)
    t.equal(res.statusCode, 201, `created ${parent}/${id}: ${res.body.slice(0, 200)}`)
    return `${parent === '/' ? '' : parent}/${id}`
  }
}

t.test('the documented example and plone.restapi\'s tests of the portlet', async t => {
  const { call, tokenFor } = await build(t)
  const admin = await tokenFor('admin')
  const add = await creator(t, call)
  const get = async (url: string, token: string | undefined = admin): Promise<any> => {
    const res = await call('GET', url, undefined, token)
    t.equal(res.statusCode, 200, `${url}: ${res.body.slice(0, 300)}`)
    return res.json()
  }

  await t.test('GET /folder/@contextnavigation answers plone.restapi\'s documented example', async t => {
    await add('/', 'folder', 'folder', 'Folder', admin)
    await add('/folder', 'folder', 'subfolder1', 'SubFolder 1', admin)
    await add('/folder/subfolder1', 'folder', 'thirdlevelfolder', 'Third Level Folder', admin)
    await add('/folder/subfolder1/thirdlevelfolder', 'folder', 'fourthlevelfolder', 'Fourth Level Folder', admin)
    await add('/folder', 'folder', 'subfolder2', 'SubFolder 2', admin)
    await add('/folder', 'Document', 'doc1', 'A document', admin)
    const entry = (path: string, title: string, type: string, items: unknown[] = [], folderish = true): Record<string, unknown> => ({
      '@id': `${BASE}${path}`,
      description: '',
      href: `${BASE}${path}`,
      icon: '',
      is_current: false,
      is_folderish: folderish,
      is_in_path: false,
      items,
      normalized_id: path.slice(path.lastIndexOf('/') + 1),
      review_state: 'private',
      thumb: '',
      title,
      type
    })
    // docs/source/endpoints/contextnavigation.md's response; a Document is folderish here (plone.volto makes it so).
    t.same(await get('/folder/@contextnavigation'), {
      '@id': `${BASE}/folder/@contextnavigation`,
      available: true,
      has_custom_name: false,
      items: [
        entry('/folder/subfolder1', 'SubFolder 1', 'folder', [
          entry('/folder/subfolder1/thirdlevelfolder', 'Third Level Folder', 'folder', [
            entry('/folder/subfolder1/thirdlevelfolder/fourthlevelfolder', 'Fourth Level Folder', 'folder')
          ])
        ]),
        entry('/folder/subfolder2', 'SubFolder 2', 'folder'),
        entry('/folder/doc1', 'A document', 'document')
      ],
      title: 'Navigation',
      url: `${BASE}/sitemap`
    })
  })

  // plone.restapi's test site (test_services_contextnavigation.py), a talk for its file (not folderish), and `talks`, first at the top.
  for (const id of ['doc1', 'doc2', 'doc3']) await add('/', 'Document', id, id, admin)
  await add('/', 'folder', 'folder1', 'folder1', admin)
  for (const id of ['doc11', 'doc12', 'doc13']) await add('/folder1', 'Document', id, id, admin)
  await add('/', 'Link', 'link1', 'link1', admin, { remoteUrl: 'http://plone.org' })
  await add('/', 'folder', 'folder2', 'Folder 2', admin)
  for (const id of ['doc21', 'doc22', 'doc23']) await add('/folder2', 'Document', id, id, admin)
  await add('/folder2', 'talk', 'talk21', 'talk21', admin)
  await add('/folder2', 'folder', 'folder21', 'folder21', admin)
  for (const id of ['doc211', 'doc212']) await add('/folder2/folder21', 'Document', id, id, admin)
  await add('/', 'folder', 'folder2x', 'folder2x', admin)
  await add('/folder2x', 'Document', 'doc2x1', 'doc2x1', admin)
  const TOP = 'talks folder doc1 doc2 doc3 folder1 link1 folder2'

  await t.test('no parameters: the contents of the context\'s top-level folder, and everything below the context', async t => {
    const folder1 = await get('/folder1/@contextnavigation')
    t.equal(shape(folder1.items), 'doc11 doc12 doc13')
    t.same(folder1.items[0], {
      '@id': `${BASE}/folder1/doc11`,
      description: '',
      href: `${BASE}/folder1/doc11`,
      icon: '',
      is_current: false,
      is_folderish: true,
      is_in_path: false,
      items: [],
      normalized_id: 'doc11',
      review_state: 'private',
      thumb: '',
      title: 'doc11',
      type: 'document'
    })
    t.match(folder1, { title: 'Navigation', has_custom_name: false, available: true, url: `${BASE}/sitemap` })
    t.equal(shape((await get('/folder2/@contextnavigation')).items), 'doc21 doc22 doc23 talk21 folder21(doc211 doc212)')
    // plone.restapi's navtree query (depth 999) finds the way to the context, not the contents of the folders on it below the top level.
    const deep = (await get('/folder2/folder21/doc211/@contextnavigation')).items
    t.equal(shape(deep), 'doc21 doc22 doc23 talk21 folder21(doc211)')
    t.match(deep[4], { is_in_path: true, is_current: false, items: [{ '@id': `${BASE}/folder2/folder21/doc211`, is_current: true, is_in_path: false }] })
    t.equal(shape((await get(`/folder2/folder21/doc211/@contextnavigation${portlet({ bottomLevel: 1 })}`)).items), 'doc21 doc22 doc23 talk21 folder21')
    const link = (await get(`/@contextnavigation${portlet({ topLevel: 0 })}`)).items.find((i: Item) => i['@id'] === `${BASE}/link1`)
    t.match(link, { href: `${BASE}/link1`, type: 'link', is_folderish: false }, 'a Link\'s href is its own URL, as plone.restapi answers (useRemoteUrl is false)')
  })

  await t.test('expand=contextnavigation inlines the same answer; every object lists it', async t => {
    const query = `${P}topLevel=0&${P}bottomLevel=2`
    const expanded = (await get(`/folder1?expand=contextnavigation&${query}`))['@components']
    t.same(expanded.contextnavigation, await get(`/folder1/@contextnavigation?${query}`))
    t.equal(expanded.contextnavigation.items[0]['@id'], `${BASE}/talks`)
    t.same((await get('/folder1'))['@components'].contextnavigation, { '@id': `${BASE}/folder1/@contextnavigation` })
    t.same((await get('/folder1?expand=contextnavigation'))['@components'].contextnavigation, await get('/folder1/@contextnavigation'))
    t.equal((await call('GET', `/++api++/folder1/@contextnavigation${portlet({ topLevel: 0 })}`, undefined, admin)).json()['@id'], `${BASE}/folder1/@contextnavigation`)
  })

  await t.test('name: the title of the portlet', async t => {
    t.match(await get('/@contextnavigation'), { title: 'Navigation', has_custom_name: false })
    t.match(await get(`/@contextnavigation${portlet({ name: 'New navigation title' })}`), { title: 'New navigation title', has_custom_name: true })
  })

  await t.test('topLevel: the levels of the site the context is below before there is a tree', async t => {
    t.equal(shape((await get(`/folder2/talk21/@contextnavigation${portlet({ topLevel: 0 })}`)).items), `${TOP}(talk21) folder2x`,
      'topLevel 0: the site\'s contents, and the way to the context')
    t.same(await get(`/folder2/talk21/@contextnavigation${portlet({ topLevel: -3 })}`), await get(`/folder2/talk21/@contextnavigation${portlet({ topLevel: 0 })}`), 'below 0 is 0')
    t.equal(shape((await get(`/folder2/talk21/@contextnavigation${portlet({ topLevel: 1 })}`)).items), 'doc21 doc22 doc23 talk21 folder21')
    t.equal(shape((await get(`/folder2/folder21/doc211/@contextnavigation${portlet({ topLevel: 2 })}`)).items), 'doc211 doc212')
    for (const [path, topLevel] of [['', 1], ['', 5], ['/folder2', 2], ['/folder2/folder21', 3]] as const) {
      t.match(await get(`${path}/@contextnavigation${portlet({ topLevel })}`), { available: false, items: [], url: `${BASE}/sitemap` }, `${path || '/'} is above topLevel ${topLevel}`)
    }
  })

  await t.test('bottomLevel: how many levels the tree shows', async t => {
    const top = (await get(`/folder2/talk21/@contextnavigation${portlet({ bottomLevel: 1, topLevel: 0 })}`)).items
    t.equal(shape(top), `${TOP} folder2x`, 'one level: the way to the context is not opened below it')
    t.match(top.at(-2), { '@id': `${BASE}/folder2`, is_in_path: true, items: [] })
    t.equal(shape((await get(`/folder2/@contextnavigation${portlet({ bottomLevel: 1, topLevel: 0 })}`)).items), `${TOP} folder2x`)
    t.equal(shape((await get(`/folder2/@contextnavigation${portlet({ bottomLevel: 2, topLevel: 0 })}`)).items), `${TOP}(doc21 doc22 doc23 talk21 folder21) folder2x`)
    t.same(await get(`/folder2/@contextnavigation${portlet({ bottomLevel: 99, topLevel: 0 })}`), await get(`/folder2/@contextnavigation${portlet({ bottomLevel: 0, topLevel: 0 })}`), '0 is no limit')
    t.match(await get(`/folder2/@contextnavigation${portlet({ bottomLevel: -1 })}`), { available: true, items: [] }, 'below 0: a portlet without a tree')
    t.same((await get(`/folder2/@contextnavigation${portlet({ bottomLevel: -1, includeTop: true })}`)).items.map((i: Item) => i['@id']), [`${BASE}/folder2`])
  })

  await t.test('root_path: the folder the tree hangs from; url links to it', async t => {
    const rooted = await get(`/folder2/talk21/@contextnavigation${portlet({ root_path: '/folder2', topLevel: 0 })}`)
    t.equal(shape(rooted.items), 'talk21', 'the way to the context (plone.restapi\'s testRootIsNotPortal)')
    t.equal(rooted.url, `${BASE}/folder2`)
    const folder2 = await get(`/folder2/@contextnavigation${portlet({ root_path: 'folder2', topLevel: 0 })}`)
    t.equal(folder2.url, `${BASE}/folder2`, 'without the leading slash (testHeadingLinkRooted)')
    t.equal(shape(folder2.items), 'doc21 doc22 doc23 talk21 folder21(doc211 doc212)')
    t.equal(shape((await get(`/folder1/@contextnavigation${portlet({ root_path: '/folder2/', topLevel: 0 })}`)).items), 'doc21 doc22 doc23 talk21 folder21(doc211 doc212)',
      'a context outside the root: the root\'s contents (testOutsideRoot)')
    const nested = await get(`/folder2/folder21/@contextnavigation${portlet({ root_path: '/folder2', topLevel: 1 })}`)
    t.equal(shape(nested.items), 'doc211 doc212', 'topLevel counts below the root (testTopLevelWithNavigationRoot)')
    t.equal(nested.url, `${BASE}/folder2/folder21`)
    t.match(await get(`/folder2/@contextnavigation${portlet({ root_path: '/folder1', topLevel: 1 })}`), { available: false, items: [], url: null }, 'a context outside the root is above any topLevel')
    const gone = await get(`/folder2/@contextnavigation${portlet({ root_path: '/does/not/exist', topLevel: 0 })}`)
    t.equal(gone.url, `${BASE}/sitemap`, 'a root that is not there is the site root (testHeadingLinkRootedItemGone)')
    t.equal(shape(gone.items), `${TOP}(doc21 doc22 doc23 talk21 folder21(doc211 doc212)) folder2x`)
    for (const odd of ['', '/', '//', '/folder2//folder21', '/folder2/..', '/./folder2', '__proto__', 'toString']) {
      const answer = await get(`/folder2/@contextnavigation${portlet({ root_path: odd, topLevel: 0 })}`)
      t.equal(shape(answer.items), shape(gone.items), `root_path '${odd}' names no folder: the site root`)
    }
  })

  await t.test('includeTop: the root as the first entry', async t => {
    const home = (await get(`/folder2/@contextnavigation${portlet({ includeTop: true, topLevel: 0 })}`)).items[0]
    t.same(home, {
      '@id': BASE,
      description: '',
      href: BASE,
      icon: '',
      is_current: false,
      is_folderish: true,
      is_in_path: true,
      items: [],
      normalized_id: 'site',
      review_state: '',
      thumb: '',
      title: 'Home',
      type: 'plone-site'
    })
    t.match((await get(`/@contextnavigation${portlet({ includeTop: 'True', topLevel: 0 })}`)).items[0], { title: 'Home', is_current: true })
    const folder = await get(`/folder2/doc21/@contextnavigation${portlet({ includeTop: 'on' })}`)
    t.match(folder.items[0], { '@id': `${BASE}/folder2`, title: 'Folder 2', normalized_id: 'folder-2', type: 'folder', review_state: 'private', is_current: false, is_in_path: true, items: [] })
    t.equal(shape(folder.items.slice(1)), 'doc21 doc22 doc23 talk21 folder21')
    t.match((await get(`/folder2/@contextnavigation${portlet({ includeTop: true })}`)).items[0], { '@id': `${BASE}/folder2`, is_current: true })
    t.equal((await get(`/folder2/@contextnavigation${portlet({ includeTop: 'false' })}`)).items[0]['@id'], `${BASE}/folder2/doc21`)
  })

  await t.test('currentFolderOnly: the context\'s folder (itself when folderish)', async t => {
    const folder = await get(`/folder2/@contextnavigation${portlet({ currentFolderOnly: true })}`)
    t.equal(shape(folder.items), 'doc21 doc22 doc23 talk21 folder21(doc211 doc212)')
    t.equal(folder.url, `${BASE}/folder2`)
    const beside = await get(`/folder2/talk21/@contextnavigation${portlet({ currentFolderOnly: true, root_path: '/folder2/folder21' })}`)
    t.equal(shape(beside.items), 'folder21(doc211 doc212) talk21', 'a root_path beside the context: its subtree, then the way to the context, which Plone adds last')
    const talk = await get(`/folder2/talk21/@contextnavigation${portlet({ currentFolderOnly: true, topLevel: 0 })}`)
    t.equal(shape(talk.items), 'talk21', 'a talk\'s folder, below topLevel 0: the way to the talk')
    t.match(talk.items[0], { is_current: true })
    t.equal(shape((await get(`/folder2/talk21/@contextnavigation${portlet({ currentFolderOnly: true })}`)).items), 'doc21 doc22 doc23 talk21 folder21')
    // The folder's contents are what plone.restapi's navtree query (from topLevel + 1, bottomLevel deep) finds in it.
    const folder2 = (params: Record<string, number>): string => `/folder2/@contextnavigation${portlet({ currentFolderOnly: true, ...params })}`
    t.equal(shape((await get(folder2({ topLevel: 2, bottomLevel: 2 }))).items), 'doc21 doc22 doc23 talk21 folder21(doc211 doc212)')
    t.match(await get(folder2({ topLevel: 2, bottomLevel: 1 })), { available: false, items: [] }, 'one level: the contents of the folders on the way from level 3 on')
    t.match(await get(folder2({ topLevel: 5, bottomLevel: 2 })), { available: false, items: [] }, 'a query that starts below what it reaches finds nothing')
    t.equal(shape((await get(`/folder2/talk21/@contextnavigation${portlet({ currentFolderOnly: true, topLevel: 2, bottomLevel: 1 })}`)).items), 'talk21',
      'one level from level 3 on: nothing but the way to the talk')
    t.equal(shape((await get(folder2({ topLevel: 5 }))).items), 'doc21 doc22 doc23 talk21 folder21(doc211 doc212)')
  })

  await t.test('is_in_path and is_current follow the path, not its text (testIsCurrentParentWithOverlapingNames)', async t => {
    const items: Item[] = (await get(`/folder2x/doc2x1/@contextnavigation${portlet({ topLevel: 0 })}`)).items
    t.match(items.find(i => i['@id'] === `${BASE}/folder2x`), { is_in_path: true, items: [{ is_current: true }] })
    t.match(items.find(i => i['@id'] === `${BASE}/folder2`), { is_in_path: false, is_current: false })
  })

  await t.test('thumbs: an image\'s scale (thumb_scale, default icon); no_thumbs; icons are never given', async t => {
    const image = { data: png(40, 30).toString('base64'), encoding: 'base64', filename: 'p.png', 'content-type': 'image/png' }
    await add('/folder1', 'News Item', 'news', 'News', admin, { image })
    const news = async (params: Record<string, string | boolean>): Promise<any> =>
      (await get(`/folder1/@contextnavigation${portlet(params)}`)).items.find((i: Item) => i['@id'] === `${BASE}/folder1/news`)
    t.match(await news({}), { thumb: `${BASE}/folder1/news/@@images/image/icon`, icon: '', type: 'news-item' })
    t.equal((await call('GET', '/folder1/news/@@images/image/icon', undefined, admin)).statusCode, 200, 'the thumb is served')
    t.equal((await news({ thumb_scale: 'mini' })).thumb, `${BASE}/folder1/news/@@images/image/mini`)
    t.equal((await news({ no_thumbs: true, thumb_scale: 'mini' })).thumb, '')
    t.equal((await news({ no_icons: true })).icon, '')
    t.equal((await get(`/folder1/@contextnavigation${portlet()}`)).items[0].thumb, '', 'no image, no thumb')
  })
})

t.test('who sees what: the catalogue\'s security and dates; nothing below what the caller may not see', async t => {
  const { call, tokenFor } = await build(t)
  const admin = await tokenFor('admin')
  const olga = await tokenFor('olga', ['Member', 'Contributor'])
  const mia = await tokenFor('mia')
  const add = await creator(t, call)
  const publish = async (path: string, dates: Record<string, string> = {}): Promise<void> => {
    t.equal((await call('POST', `${path}/@workflow/publish`, dates, admin)).statusCode, 200)
  }
  await publish(await add('/', 'folder', 'sec', 'Section', admin))
  await add('/sec', 'folder', 'private-folder', 'Secret folder title', admin)
  await publish(await add('/sec/private-folder', 'talk', 'inner-talk', 'Published talk in a secret folder', admin))
  await add('/sec', 'folder', 'olga-folder', 'Olga folder', olga)
  await add('/sec/olga-folder', 'Document', 'olga-doc', 'Olga draft', olga)
  await publish(await add('/sec', 'folder', 'pub-folder', 'Public folder', admin))
  await publish(await add('/sec/pub-folder', 'Document', 'expired-doc', 'Expired page', admin), { effective: '2001-01-01T00:00:00Z', expires: '2002-01-01T00:00:00Z' })
  await publish(await add('/sec/pub-folder', 'Document', 'pub-doc', 'Public page', admin))
  const callers: Record<string, string | undefined> = { anonymous: undefined, mia, olga, admin }
  const tree = async (url: string, who: string): Promise<any> => {
    const res = await call('GET', url, undefined, callers[who])
    t.equal(res.statusCode, 200, `${who}: ${url}`)
    return res.json()
  }

  await t.test('a private folder and its contents are shown to its owner and Managers only; expired content to Managers only', async t => {
    const expected: Record<string, string> = {
      anonymous: 'pub-folder(pub-doc)',
      mia: 'pub-folder(pub-doc)',
      olga: 'olga-folder(olga-doc) pub-folder(pub-doc)',
      admin: 'private-folder(inner-talk) olga-folder(olga-doc) pub-folder(expired-doc pub-doc)'
    }
    for (const [who, seen] of Object.entries(expected)) {
      const answer = await tree('/sec/@contextnavigation', who)
      t.equal(shape(answer.items), seen, who)
      if (who !== 'admin') t.notMatch(JSON.stringify(answer), /Secret folder title|private-folder|Expired page/, `${who}: no title of what it may not see`)
      t.same((await tree('/sec?expand=contextnavigation', who))['@components'].contextnavigation, answer, `${who}: expanded, the same`)
    }
  })

  await t.test('a published talk in a private folder: the folder is not shown, nor the talk through it', async t => {
    for (const who of ['anonymous', 'mia']) {
      const answer = await tree('/sec/private-folder/inner-talk/@contextnavigation', who)
      t.equal(shape(answer.items), 'pub-folder', `${who}: the section, without the secret folder`)
      t.notMatch(JSON.stringify(answer.items), /Secret folder title|private-folder|inner-talk/)
      for (const params of [{ topLevel: 2 }, { currentFolderOnly: true }, { topLevel: 2, includeTop: true }, { currentFolderOnly: true, bottomLevel: -1, includeTop: true }]) {
        const rooted = await tree(`/sec/private-folder/inner-talk/@contextnavigation${portlet(params)}`, who)
        t.match(rooted, { available: false, items: [] }, `${who}, ${JSON.stringify(params)}: no tree hangs from the secret folder`)
        t.notMatch(JSON.stringify(rooted), /Secret folder title/)
      }
    }
    t.equal(shape((await tree('/sec/private-folder/inner-talk/@contextnavigation', 'admin')).items), 'private-folder(inner-talk) olga-folder pub-folder')
    t.match((await tree(`/sec/private-folder/inner-talk/@contextnavigation${portlet({ topLevel: 2, includeTop: true })}`, 'admin')).items,
      [{ title: 'Secret folder title', is_in_path: true }, { title: 'Published talk in a secret folder', is_current: true }])
  })

  await t.test('a root_path the caller may not see is answered as one that is not there', async t => {
    for (const who of ['anonymous', 'mia']) {
      const hidden = await tree(`/sec/@contextnavigation${portlet({ root_path: '/sec/private-folder', topLevel: 0 })}`, who)
      const missing = await tree(`/sec/@contextnavigation${portlet({ root_path: '/sec/no-such-folder', topLevel: 0 })}`, who)
      t.same(hidden, missing, who)
      t.notMatch(JSON.stringify(hidden), /Secret folder title|inner-talk/)
    }
    t.equal(shape((await tree(`/sec/@contextnavigation${portlet({ root_path: '/sec/private-folder', topLevel: 0 })}`, 'admin')).items), 'inner-talk')
    t.equal(shape((await tree(`/sec/@contextnavigation${portlet({ root_path: '/sec/olga-folder', topLevel: 0 })}`, 'olga')).items), 'olga-doc')
  })

  await t.test('a context the caller may not view: 401 anonymous, 403 a Member (the service and the expansion)', async t => {
    for (const url of ['/sec/olga-folder/@contextnavigation', '/sec/olga-folder?expand=contextnavigation']) {
      t.equal((await call('GET', url)).statusCode, 401)
      t.equal((await call('GET', url, undefined, mia)).statusCode, 403)
      t.equal((await call('GET', url, undefined, olga)).statusCode, 200)
    }
  })
})

t.test('hostile parameters: a 400 in the contract\'s shape, or a bounded answer', async t => {
  const { call, tokenFor } = await build(t)
  const admin = await tokenFor('admin')
  const add = await creator(t, call)
  let chain = await add('/', 'folder', 'deep', 'Deep', admin)
  for (let level = 1; level <= 12; level++) chain = await add(chain, 'folder', `l${level}`, `Level ${level}`, admin)
  const depthOf = (items: Item[]): number => items.length === 0 ? 0 : 1 + Math.max(...items.map(i => depthOf(i.items)))

  await t.test('a huge bottomLevel shows at most 10 levels', async t => {
    for (const bottomLevel of [0, 11, 2147483647]) {
      const res = await call('GET', `/deep/@contextnavigation${portlet({ bottomLevel })}`, undefined, admin)
      t.equal(res.statusCode, 200)
      t.equal(depthOf(res.json().items), 10, `bottomLevel ${bottomLevel}`)
    }
    t.equal(depthOf((await call('GET', `/deep/@contextnavigation${portlet({ bottomLevel: 3 })}`, undefined, admin)).json().items), 3)
  })

  await t.test('bad values are 400 BadRequest, on the service and expanded', async t => {
    const bad: Array<[string, string]> = [
      ...['2147483648', '-2147483649', '9223372036854775808', '1.5', '1e3', '0x10', '+1', 'abc', '', 'NaN', 'Infinity'].flatMap(v => [['topLevel', v], ['bottomLevel', v]] as Array<[string, string]>),
      ...['yes', '1', '0', 'TRUE', 'x'.repeat(8000)].flatMap(v => [['includeTop', v], ['currentFolderOnly', v], ['no_icons', v], ['no_thumbs', v]] as Array<[string, string]>),
      ['thumb_scale', 'huge2'], ['thumb_scale', '__proto__'], ['thumb_scale', 'toString'], ['thumb_scale', 'x'.repeat(8000)],
      ['name', 'x'.repeat(1001)], ['name', 'two\nlines'], ['root_path', 'a\rb'], ['root_path', '/'.repeat(1001)],
      ['toString', '1'], ['hasOwnProperty', '1'], ['title', 'x'], ['zzNoSuchName', '1'], ['', '1']
    ]
    for (const [name, value] of bad) {
      for (const url of [`/deep/@contextnavigation?${P}${name}=${encodeURIComponent(value)}`, `/deep?expand=contextnavigation&${P}${name}=${encodeURIComponent(value)}`]) {
        const res = await call('GET', url, undefined, admin)
        t.equal(res.statusCode, 400, `${name}=${value.slice(0, 20)}: ${res.body.slice(0, 120)}`)
        t.match(res.json(), { type: 'BadRequest', message: String }, 'the contract\'s error shape')
      }
    }
    for (const [name, value] of [['topLevel', ' 1 '], ['bottomLevel', '-0'], ['includeTop', ''], ['includeTop', 'off'], ['no_thumbs', 'False'], ['thumb_scale', '']]) {
      t.equal((await call('GET', `/deep/@contextnavigation?${P}${name}=${encodeURIComponent(value)}`, undefined, admin)).statusCode, 200, `${name}='${value}' is read`)
    }
  })

  await t.test('repeated parameters, prototype names, NUL, lone surrogates', async t => {
    for (const query of [`${P}topLevel=1&${P}topLevel=2`, `${P}name=a&${P}name=a`, `${P}__proto__=1`, `${P}constructor=1`, `${P}prototype=x`, `${P}name=%00`, `${P}root_path=a%00b`]) {
      for (const url of [`/deep/@contextnavigation?${query}`, `/deep?expand=contextnavigation&${query}`]) {
        const res = await call('GET', url, undefined, admin)
        t.equal(res.statusCode, 400, `${url}: ${res.body.slice(0, 120)}`)
        t.match(res.json(), { type: 'BadRequest', message: String })
      }
    }
    // A lone surrogate cannot be sent: its UTF-8 bytes are not UTF-8, and decode as U+FFFD.
    const res = await call('GET', `/deep/@contextnavigation?${P}name=%ED%A0%80&${P}root_path=%ED%A0%80`, undefined, admin)
    t.equal(res.statusCode, 200)
    t.ok((res.json().title as string).isWellFormed())
  })
})

t.test('bounded work: at most 1000 entries and 100 folders opened; statements a level, not an object', async t => {
  const { app, call, tokenFor } = await build(t, { env: { RESIDENT_CATALOG: 'false' } })
  // The statements a request sends (its async context's, not a background loop's), PostgreSQL answering every catalogue query.
  const asked = new AsyncLocalStorage<string[]>()
  const send = app.db.query.bind(app.db)
  app.db.query = (async (sql: string, ...rest: [unknown[]?, Record<string, unknown>?]) => {
    asked.getStore()?.push(sql.replace(/\s+/g, ' ').slice(0, 50))
    return await send(sql, ...rest)
  }) as typeof app.db.query
  const admin = await tokenFor('admin')
  const add = await creator(t, call)
  const imported = async (folder: string, items: Array<Record<string, unknown>>): Promise<void> => {
    const res = await call('POST', `${folder}/@import`, { items }, admin)
    t.equal(res.statusCode, 201, res.body.slice(0, 200))
  }
  const statements = async (url: string): Promise<{ answer: any, sent: string[] }> => {
    const sent: string[] = []
    const res = await asked.run(sent, async () => await call('GET', url, undefined, admin))
    t.equal(res.statusCode, 200, res.body.slice(0, 200))
    return { answer: res.json(), sent }
  }

  await t.test('the statements of a tree do not grow with its entries', async t => {
    await imported(await add('/', 'folder', 'few', 'Few', admin), Array.from({ length: 3 }, (_, i) => ({ '@type': 'talk', ...talkBody({ title: `Few ${i}` }) })))
    await imported(await add('/', 'folder', 'many', 'Many', admin), Array.from({ length: 60 }, (_, i) => ({ '@type': 'talk', ...talkBody({ title: `Many ${i}` }) })))
    await statements('/talks/@contextnavigation')
    const few = await statements('/few/@contextnavigation')
    const many = await statements('/many/@contextnavigation')
    t.equal(few.answer.items.length, 3)
    t.equal(many.answer.items.length, 60)
    t.equal(many.sent.length, few.sent.length, `as many statements for 60 entries as for 3 (${few.sent.join(' | ')} ; ${many.sent.join(' | ')})`)
    t.ok(many.sent.length >= 2 && many.sent.length <= 3, `the context, the way to it, one level: ${many.sent.join(' | ')}`)
    let chain = await add('/', 'folder', 'chain', 'Chain', admin)
    for (let level = 1; level <= 6; level++) chain = await add(chain, 'folder', `c${level}`, `C${level}`, admin)
    const deep = await statements('/chain/@contextnavigation')
    t.ok(deep.sent.length <= 6 + 3, `a tree of 6 levels: one statement a level (${deep.sent.length})`)
  })

  await t.test('1000 entries at most (a large folder is listed in part, in folder order)', async t => {
    const big = await add('/', 'folder', 'big', 'Big', admin)
    await imported(big, Array.from({ length: 1000 }, (_, i) => ({ '@type': 'Document', id: `d${i}`, title: `D ${i}` })))
    await imported(big, Array.from({ length: 5 }, (_, i) => ({ '@type': 'Document', id: `e${i}`, title: `E ${i}` })))
    const { answer } = await statements('/big/@contextnavigation')
    t.equal(answer.items.length, 1000)
    t.equal(answer.items[999]['@id'], `${BASE}/big/d999`)
    const inside = await statements('/big/e4/@contextnavigation')
    t.equal(inside.answer.items.length, 1000, 'the way to the context is kept within the bound')
    t.equal(inside.answer.items.at(-1)['@id'], `${BASE}/big/e4`)
  })

  await t.test('100 folders\' contents at most, the first ones, level by level', async t => {
    const wide = await add('/', 'folder', 'wide', 'Wide', admin)
    await imported(wide, Array.from({ length: 101 }, (_, i) => ({ '@type': 'folder', id: `f${i}`, title: `F ${i}` })))
    for (let i = 0; i < 101; i++) await imported(`${wide}/f${i}`, [{ '@type': 'Document', id: 'inside', title: 'Inside' }])
    const { answer } = await statements('/wide/@contextnavigation')
    t.equal(answer.items.length, 101)
    t.same(answer.items.map((i: Item) => i.items.length), [...Array(99).fill(1), 0, 0], 'the root and 99 folders opened')
  })
})

// ------------------------------------------------------------------ the oracle

/** An object of the test's site as the oracle knows it. */
interface Obj { path: string, id: string, title: string, type: string, folderish: boolean, state: 'private' | 'published', owner: string, inactive: boolean, order: number }
type Viewer = 'anonymous' | 'mia' | 'olga' | 'admin'
interface Options { name?: string, root_path?: string, includeTop?: boolean, currentFolderOnly?: boolean, topLevel?: number, bottomLevel?: number }
interface Expected { status: number, body?: { title: string, url: string | null, has_custom_name: boolean, available: boolean, items: Node[] } }
interface Node { path: string, title: string, is_current: boolean, is_in_path: boolean, is_folderish: boolean, review_state: string, items: Node[] }

const segmentsOf = (path: string): string[] => path.split('/').filter(Boolean)
const physical = (path: string): string => path === '/' ? '/plone' : `/plone${path}`
const parentOf = (path: string): string => { const s = segmentsOf(path); return s.length <= 1 ? '/' : `/${s.slice(0, -1).join('/')}` }

/** A GET of it answers (simple_publication: the owner and Managers view private content). */
const mayView = (viewer: Viewer, o: Obj): boolean => o.state === 'published' || viewer === 'admin' || viewer === o.owner
/** The catalogue finds it for the viewer: as above, and active unless the viewer may see inactive content (Managers). */
const catalogued = (viewer: Viewer, o: Obj): boolean => mayView(viewer, o) && (viewer === 'admin' || !o.inactive)

/**
 * Products.ExtendedPathIndex's search (its source, transcribed) over the
 * objects' physical paths (`/plone/…`, the site at level 0).
 */
function epi (all: Obj[], query: string, depthAsked: number, navtree: boolean, navtreeStart: number): Set<Obj> {
  const comps = (o: Obj): string[] => segmentsOf(physical(o.path))
  const level = (o: Obj): number => comps(o).length - 1
  const asked = segmentsOf(query)
  let depth = depthAsked
  if (navtree && depth === -1) depth = 1
  // ExtendedPathIndex also answers nothing when navtree_start is deeper than any object of the site (`self._depth`);
  // the service decides a tree by what is below its root alone (docs/api.md).
  if (navtree && navtreeStart > asked.length - 1 + depth) return new Set()
  if (depth === 0 || depth === 1) {
    const childrenOf = (path: string): Obj[] => all.filter(o => `/${comps(o).slice(0, -1).join('/')}` === path)
    if (navtree) {
      const result = new Set<Obj>()
      for (let i = asked.length; i >= navtreeStart; i--) {
        const prefix = `/${asked.slice(0, i).join('/')}`
        for (const o of depth === 1 ? childrenOf(prefix) : all.filter(o => physical(o.path) === prefix)) result.add(o)
      }
      return result
    }
    const path = `/${asked.join('/')}`
    return new Set(depth === 0 ? all.filter(o => physical(o.path) === path) : childrenOf(path))
  }
  // "Avoid using the root set": the index's own path is /plone/portal_catalog/path.
  const indexPath = ['plone', 'portal_catalog', 'path']
  let start = 0
  for (let i = 0; i < Math.min(indexPath.length, asked.length); i++) { if (indexPath[i] !== asked[i]) break; start++ }
  const rest = asked.slice(start)
  // BTrees: a level no object ends at has no set (None), and intersection(s, None) is s, union(None, s) is s.
  const terminators = (l: number): Set<Obj> | null => { const found = all.filter(o => level(o) === l); return found.length === 0 ? null : new Set(found) }
  const at = (comp: string, l: number): Set<Obj> => new Set(all.filter(o => comps(o)[l] === comp))
  const intersect = (a: Set<Obj> | null, b: Set<Obj> | null): Set<Obj> | null => a === null ? b : b === null ? a : new Set([...a].filter(o => b.has(o)))
  const union = (a: Set<Obj> | null, b: Set<Obj> | null): Set<Obj> | null => a === null ? b : b === null ? a : new Set([...a, ...b])
  let pathset: Set<Obj> | null = null
  let depthset: Set<Obj> | null = null
  if (navtree && depth > 0) {
    depthset = new Set()
    for (let l = Math.min(navtreeStart, start); l <= Math.max(navtreeStart, start); l++) depthset = union(depthset, terminators(l) ?? new Set())
  }
  for (const [i, comp] of rest.entries()) {
    pathset = intersect(pathset, at(comp, i + start))
    if (pathset!.size === 0 && !navtree) return pathset!
    if (navtree && i + start >= navtreeStart) depthset = union(depthset, intersect(pathset, terminators(i + start)))
  }
  if (depth >= 0) {
    let first = rest.length - 1
    if (navtree) first = Math.max(first, navtreeStart - start)
    for (let i = first; i <= first + depth; i++) depthset = union(depthset, intersect(pathset, terminators(i + start)))
  }
  return navtree || depth >= 0 ? depthset ?? new Set() : pathset ?? new Set()
}

/**
 * What `GET <context>/@contextnavigation` answers `viewer`: plone.restapi's
 * ContextNavigation (get.py) with buildFolderTree (plone.app.layout) and
 * ExtendedPathIndex, transcribed, and this service's decisions: what the
 * viewer may not see is not shown and nothing is shown through it (Plone
 * adds the way to the context unrestricted); a root_path the viewer may not
 * see, or with `.`/`..`/empty segments, names the site root; at most 10
 * levels.
 */
function oracle (all: Obj[], viewer: Viewer, context: string, o: Options): Expected {
  const byPath = new Map(all.map(x => [x.path, x]))
  const here = byPath.get(context)
  if (here !== undefined && !mayView(viewer, here)) return { status: viewer === 'anonymous' ? 401 : 403 }
  const T = o.topLevel ?? 1
  const B = o.bottomLevel ?? 0
  const within = (path: string, ancestor: string): boolean => ancestor === '/' || path === ancestor || path.startsWith(`${ancestor}/`)
  // get_root, with this service's decisions on what names no folder.
  let Q = '/'
  if (o.root_path !== undefined) {
    const segments = o.root_path.replace(/^\//, '').split('/')
    if (segments.at(-1) === '') segments.pop()
    const target = byPath.get(`/${segments.join('/')}`)
    if (!segments.some(s => s === '' || s === '.' || s === '..') && target !== undefined && catalogued(viewer, target)) Q = target.path
  }
  // getRootPath
  let R: string | null
  if (o.currentFolderOnly === true) R = context === '/' || here!.folderish ? context : parentOf(context)
  else if (T <= 0) R = Q
  else if (!within(context, Q)) R = null
  else {
    const below = segmentsOf(context).slice(segmentsOf(Q).length)
    R = below.length < T ? null : `/${[...segmentsOf(Q), ...below.slice(0, T)].join('/')}`
  }
  const url = (o.root_path === undefined || o.root_path === '') && o.currentFolderOnly !== true ? `${BASE}/sitemap` : R === null ? null : R === '/' ? `${BASE}/sitemap` : `${BASE}${R}`
  const body = { title: o.name !== undefined && o.name !== '' ? o.name : 'Navigation', url, has_custom_name: o.name !== undefined && o.name !== '', available: false, items: [] as Node[] }
  if (R === null || (R !== '/' && !catalogued(viewer, byPath.get(R)!))) return { status: 200, body }
  const rootObj = R === '/' ? undefined : byPath.get(R)!
  const top: Node = rootObj === undefined
    ? { path: '/', title: 'Home', is_current: context === '/', is_in_path: true, is_folderish: true, review_state: '', items: [] }
    : { path: R, title: rootObj.title, is_current: R === context, is_in_path: true, is_folderish: true, review_state: rootObj.state, items: [] }
  if (B < 0) return { status: 200, body: { ...body, available: true, items: o.includeTop === true ? [top] : [] } }

  // QueryBuilder
  const depth = B === 0 ? 999 : B
  const found = within(context, Q)
    ? epi(all, physical(context), depth, true, T > 0 ? T + 1 : 0)
    : epi(all, physical(Q), depth, false, 0)
  const results = [...found].filter(x => catalogued(viewer, x)).sort((a, b) => a.order - b.order)
  // buildFolderTree
  interface TreeNode { item?: Obj, depth?: number, children: TreeNode[], prune?: boolean }
  const itemPaths = new Map<string, TreeNode>([[R, { children: [] }]])
  const rootDepth = segmentsOf(R).length
  const insert = (item: Obj, force: boolean): void => {
    if (!force && itemPaths.get(item.path)?.item !== undefined) return
    const parentPath = parentOf(item.path)
    if (!force && itemPaths.get(parentPath)?.prune === true) return
    const isCurrentParent = context !== item.path && within(context, item.path)
    const node: TreeNode = { item, depth: segmentsOf(item.path).length - rootDepth, children: [] }
    const parent = itemPaths.get(parentPath)
    if (parent !== undefined) {
      if (force) { if (!parent.children.some(c => c.item?.path === item.path)) parent.children.push(node) } else if (parent.prune !== true) parent.children.push(node)
    } else itemPaths.set(parentPath, { children: [node] })
    let expand = isCurrentParent ? true : item.folderish
    if (expand && !force) expand = !(node.depth! > 0 && B > 0 && node.depth! >= B)
    if (expand) node.children.push(...(itemPaths.get(item.path)?.children ?? []))
    else node.prune = true
    itemPaths.set(item.path, node)
  }
  for (const item of results) insert(item, false)
  // showAllParents: the way from the root to the context (here: what the viewer may see of it).
  if (context !== R && within(context, R)) {
    const missing: Obj[] = []
    let parentPath = R
    const rest = segmentsOf(context).slice(rootDepth)
    for (let i = 0; i < rest.length; i++) {
      const nodePath = `/${[...segmentsOf(R), ...rest.slice(0, i + 1)].join('/')}`
      const node = itemPaths.get(nodePath)
      if (node?.item === undefined) missing.push(byPath.get(nodePath)!)
      else {
        const parent = itemPaths.get(parentPath)
        if (parent !== undefined && !parent.children.includes(node)) parent.children.push(node)
      }
      parentPath = nodePath
    }
    for (const item of missing) if (catalogued(viewer, item)) insert(item, true)
  }
  // The portlet's recurse, at most 10 levels (this service's bound).
  const render = (children: TreeNode[], level: number): Node[] => children.map(({ item, children }) => ({
    path: item!.path,
    title: item!.title,
    is_current: item!.path === context,
    is_in_path: item!.path !== context && within(context, item!.path),
    is_folderish: item!.folderish,
    review_state: item!.state,
    items: children.length > 0 && item!.folderish && (level < B || B === 0) && level < 10 ? render(children, level + 1) : []
  }))
  const items = render(itemPaths.get(R)!.children, 1)
  if (items.length === 0) return { status: 200, body }
  return { status: 200, body: { ...body, available: true, items: [...o.includeTop === true ? [top] : [], ...items] } }
}

/** The answer in the oracle's terms. */
const nodesOf = (items: any[]): Node[] => items.map(i => ({
  path: i['@id'] === BASE ? '/' : i['@id'].slice(BASE.length),
  title: i.title,
  is_current: i.is_current,
  is_in_path: i.is_in_path,
  is_folderish: i.is_folderish,
  review_state: i.review_state,
  items: nodesOf(i.items)
}))

t.test('property: the tree is what plone.restapi\'s algorithm finds, of what the viewer may see', async t => {
  const { call, tokenFor } = await build(t)
  const tokens: Record<Viewer, string | undefined> = { anonymous: undefined, mia: await tokenFor('mia'), olga: await tokenFor('olga', ['Member', 'Contributor']), admin: await tokenFor('admin') }
  // What the site holds before the test adds to it (`talks`).
  const all: Obj[] = ((await call('GET', '/', undefined, tokens.admin)).json().items as any[]).map((item, i) => ({
    path: item['@id'].slice(BASE.length), id: item['@id'].slice(BASE.length + 1), title: item.title, type: item['@type'], folderish: true, state: item.review_state, owner: 'admin', inactive: false, order: i - 100
  }))
  let order = 0
  let run = 0

  const TYPES = [['folder', true], ['Document', true], ['talk', false]] as const
  const objectArb = fc.record({
    // Among the last few folders, so that trees grow deep.
    parent: fc.nat({ max: 4 }),
    type: fc.constantFrom(TYPES[0], ...TYPES),
    owner: fc.constantFrom('admin', 'olga'),
    published: fc.constantFrom(true, true, false),
    inactive: fc.constantFrom(false, false, false, true),
    title: fc.constantFrom('Alpha', 'Beta', 'Gamma', 'Ünïcode title')
  })
  const queryArb = fc.record({
    viewer: fc.constantFrom<Viewer>('anonymous', 'mia', 'olga', 'admin'),
    context: fc.nat(),
    topLevel: fc.option(fc.constantFrom(-1, 0, 0, 1, 1, 2, 3), { nil: undefined }),
    bottomLevel: fc.option(fc.constantFrom(-1, 0, 0, 0, 1, 2, 3), { nil: undefined }),
    currentFolderOnly: fc.option(fc.boolean(), { nil: undefined }),
    includeTop: fc.option(fc.boolean(), { nil: undefined }),
    root: fc.option(fc.oneof(fc.nat(), fc.constantFrom('', '/', '/nope/missing')), { nil: undefined }),
    rootSpelling: fc.constantFrom('/', '', 'trailing'),
    name: fc.option(fc.constantFrom('Custom', ''), { nil: undefined })
  })

  const problems: string[] = []
  /** What the answers held, so that the test says it met each kind of case. */
  const met = { refused: 0, unavailable: 0, nested: 0, rootedElsewhere: 0, hidden: 0 }
  const nested = (items: Node[]): boolean => items.some(i => i.items.length > 0)
  await fc.assert(fc.asyncProperty(fc.array(objectArb, { minLength: 8, maxLength: 18 }), fc.array(queryArb, { minLength: 30, maxLength: 30 }), async (objects, queries) => {
    run++
    // Parents come first; olga adds only below the site root or what she owns (she may not view admin's drafts).
    const created: Obj[] = []
    for (const [i, spec] of objects.entries()) {
      const parents = [null, ...created.filter(c => c.folderish && (spec.owner === 'admin' || c.owner === 'olga'))]
      const parent = parents[Math.max(0, parents.length - 1 - spec.parent)]
      const id = `r${run}o${i}`
      const path = `${parent === null ? '' : parent.path}/${id}`
      const token = tokens[spec.owner as Viewer]
      const body = spec.type[0] === 'talk' ? talkBody({ id, title: spec.title }) : { '@type': spec.type[0], id, title: spec.title }
      const res = await call('POST', parent === null ? '/' : parent.path, body, token)
      if (res.statusCode !== 201) { problems.push(`creating ${path}: ${res.statusCode} ${res.body.slice(0, 200)}`); return false }
      const obj: Obj = { path, id, title: String(res.json().title ?? '') || id, type: spec.type[0], folderish: spec.type[1], state: 'private', owner: spec.owner, inactive: false, order: order++ }
      created.push(obj)
      all.push(obj)
      if (spec.published) {
        const dates = spec.inactive ? { effective: '2001-01-01T00:00:00Z', expires: '2002-01-01T00:00:00Z' } : {}
        const published = await call('POST', `${path}/@workflow/publish`, dates, tokens.admin)
        if (published.statusCode !== 200) { problems.push(`publishing ${path}: ${published.body.slice(0, 200)}`); return false }
        obj.state = 'published'
        obj.inactive = spec.inactive
      }
    }
    const paths = ['/', ...all.map(o => o.path)]
    // Mostly this run's objects, sometimes any.
    const contexts = ['/', ...created.map(o => o.path)]
    for (const q of queries) {
      const context = q.context % 4 === 0 ? paths[q.context % paths.length] : contexts[q.context % contexts.length]
      let rootPath: string | undefined
      if (typeof q.root === 'number') {
        const target = paths[q.root % paths.length]
        rootPath = q.rootSpelling === '' ? target.slice(1) : q.rootSpelling === 'trailing' ? `${target}/` : target
      } else rootPath = q.root
      const options: Options = { topLevel: q.topLevel, bottomLevel: q.bottomLevel, currentFolderOnly: q.currentFolderOnly, includeTop: q.includeTop, root_path: rootPath, name: q.name }
      const params = Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined)) as Record<string, string | number | boolean>
      const url = `${context === '/' ? '' : context}/@contextnavigation${portlet(params)}`
      const res = await call('GET', url, undefined, tokens[q.viewer])
      const expected = oracle(all, q.viewer, context, options)
      const actual = res.statusCode === 200
        ? { status: 200, body: { title: res.json().title, url: res.json().url, has_custom_name: res.json().has_custom_name, available: res.json().available, items: nodesOf(res.json().items) } }
        : { status: res.statusCode }
      if (expected.body === undefined) met.refused++
      else if (!expected.body.available) met.unavailable++
      else {
        if (nested(expected.body.items)) met.nested++
        if (expected.body.url !== null && expected.body.url !== `${BASE}/sitemap`) met.rootedElsewhere++
        if (q.viewer !== 'admin' && JSON.stringify(oracle(all, 'admin', context, options).body) !== JSON.stringify(expected.body)) met.hidden++
      }
      if (JSON.stringify(actual) !== JSON.stringify(expected)) {
        problems.push(`${q.viewer} GET ${url}\n  got      ${JSON.stringify(actual)}\n  expected ${JSON.stringify(expected)}`)
        return false
      }
    }
    return true
  }), { numRuns: 8, endOnFailure: true }).catch(err => { problems.push(String(err).split('\n').slice(0, 2).join(' ').slice(0, 300)) })
  t.same(problems, [], 'every answer is the oracle\'s')
  for (const [kind, count] of Object.entries(met)) t.ok(count > 0, `the queries met ${kind} answers (${count})`)
})
