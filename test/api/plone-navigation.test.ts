import t from 'tap'
import { build, talkBody } from '../helper.js'

/**
 * The services Volto reads on every page, against the shapes plone.restapi
 * documents (its http-examples): `@components` and `expand`, `@breadcrumbs`,
 * `@navigation` with depth, `@actions` per caller, `@navroot`, `@site`.
 */
const BASE = 'http://localhost:80'

t.test('expansion and the navigation services', async t => {
  const app = await build(t)
  const { call, tokenFor } = app
  const admin = await tokenFor('admin')
  const owner = await tokenFor('olga')
  const editor = await tokenFor('eddie', ['Editor'])
  const created = await call('POST', '/talks', talkBody({ title: 'Navigable talk' }), owner)
  t.equal(created.statusCode, 201)
  const talk = new URL(created.json()['@id']).pathname
  const hidden = await call('POST', '/', { '@type': 'folder', title: 'Private folder' }, admin)
  t.equal(hidden.statusCode, 201)

  await t.test('every object lists its components; expand inlines them', async t => {
    const plain = (await call('GET', talk, undefined, owner)).json()
    t.same(plain['@components'], {
      actions: { '@id': `${BASE}${talk}/@actions` },
      aliases: { '@id': `${BASE}${talk}/@aliases` },
      breadcrumbs: { '@id': `${BASE}${talk}/@breadcrumbs` },
      contextnavigation: { '@id': `${BASE}${talk}/@contextnavigation` },
      navigation: { '@id': `${BASE}${talk}/@navigation` },
      navroot: { '@id': `${BASE}${talk}/@navroot` },
      types: { '@id': `${BASE}${talk}/@types` },
      workflow: { '@id': `${BASE}${talk}/@workflow` }
    })
    const res = await call('GET', `${talk}?expand=breadcrumbs,actions,navroot,navigation,types,workflow,translations`, undefined, owner)
    t.equal(res.statusCode, 200)
    const components = res.json()['@components']
    t.same(components.breadcrumbs, (await call('GET', `${talk}/@breadcrumbs`, undefined, owner)).json())
    t.same(components.actions, (await call('GET', `${talk}/@actions`, undefined, owner)).json())
    t.same(components.navigation, (await call('GET', `${talk}/@navigation`, undefined, owner)).json())
    t.same(components.workflow, (await call('GET', `${talk}/@workflow`, undefined, owner)).json())
    t.same(components.types, (await call('GET', `${talk}/@types`, undefined, owner)).json())
    t.same(components.translations, { '@id': `${BASE}${talk}/@translations`, items: [] })
    t.equal(components.navroot.navroot['@id'], BASE)
    const anonymous = (await call('GET', '/talks?expand=types,actions,breadcrumbs')).json()['@components']
    t.ok(anonymous.types.every((type: { addable: boolean }) => !type.addable), 'anonymous visitors may add nothing')
    t.same(anonymous.actions.user, [{ id: 'login', title: 'Log in', icon: '' }])
  })

  await t.test('@breadcrumbs: root excluded, as plone.restapi', async t => {
    t.same((await call('GET', `${talk}/@breadcrumbs`, undefined, owner)).json(), {
      '@id': `${BASE}${talk}/@breadcrumbs`,
      items: [{ '@id': `${BASE}/talks`, title: 'Talks' }, { '@id': `${BASE}${talk}`, title: 'Navigable talk' }],
      root: BASE
    })
    t.same((await call('GET', '/@breadcrumbs')).json().items, [], 'the site root has no breadcrumbs')
  })

  await t.test('@navigation: Home, then top-level content the caller may see; depth nests', async t => {
    const anonymous = (await call('GET', '/@navigation')).json()
    t.same(anonymous, {
      '@id': `${BASE}/@navigation`,
      items: [
        { '@id': BASE, title: 'Home', description: '', review_state: null, items: [] },
        { '@id': `${BASE}/talks`, title: 'Talks', description: '', review_state: 'published', items: [] }
      ]
    }, 'the private folder is not shown to anonymous')
    const forAdmin = (await call('GET', '/@navigation?expand.navigation.depth=2', undefined, admin)).json()
    t.same(forAdmin.items.map((i: { title: string }) => i.title), ['Home', 'Talks', 'Private folder'])
    t.same(forAdmin.items[1].items.map((i: { '@id': string }) => i['@id']), [`${BASE}${talk}`], 'depth 2 shows the talks')
    t.equal((await call('GET', '/@navigation?expand.navigation.depth=x')).statusCode, 400)
  })

  await t.test('@actions: edit and folderContents by permission', async t => {
    const ids = async (path: string, token?: string): Promise<Record<string, string[]>> => {
      const body = (await call('GET', `${path}/@actions`, undefined, token)).json()
      return Object.fromEntries(Object.entries(body).map(([k, v]) => [k, (v as Array<{ id: string }>).map(a => a.id)]))
    }
    const anon = await ids('/talks')
    t.same(anon.object, ['view'])
    t.same(anon.object_buttons, [])
    t.same(anon.site_actions, ['sitemap', 'accessibility', 'contact'])
    t.same(anon.portal_tabs, ['index_html'])
    t.same((await ids(talk, owner)).object, ['view', 'edit', 'history', 'local_roles'], 'the owner may edit the talk, read its history and share it')
    t.same((await ids(talk, owner)).object_buttons, ['cut', 'copy', 'delete', 'rename'], 'the owner may move, copy, delete and rename the talk')
    t.same((await ids('/talks', owner)).object_buttons, ['copy', 'paste'], 'members add talks in /talks: they may paste there')
    t.same((await ids('/', admin)).object_buttons, ['paste'], 'the site root is neither moved nor deleted')
    t.same((await ids('/talks', owner)).object, ['view', 'folderContents'], 'members add talks in /talks: they see its contents')
    t.same((await ids('/talks', editor)).object, ['view', 'edit', 'folderContents', 'history', 'local_roles'])
    t.same((await ids('/', admin)).object, ['view', 'edit', 'folderContents', 'local_roles'], 'the site root is edited too (Volto\'s home page)')
    t.same((await ids('/', admin)).user, ['preferences', 'plone_setup', 'logout'])
    t.same((await ids('/', owner)).user, ['preferences', 'logout'])
  })

  await t.test('@navroot and @site', async t => {
    const navroot = (await call('GET', `${talk}/@navroot`, undefined, owner)).json()
    t.equal(navroot['@id'], `${BASE}${talk}/@navroot`)
    t.match(navroot.navroot, { '@id': BASE, '@type': 'Plone Site', title: 'Site', lock: { locked: false, stealable: true } })
    const site = (await call('GET', '/@site')).json()
    t.match(site, { '@id': `${BASE}/@site`, 'plone.site_title': 'Site', 'plone.site_logo': null, 'plone.default_language': 'en', features: { multilingual: false } })
  })

  await t.test('content carries the keys Plone answers for absent features', async t => {
    t.match((await call('GET', talk, undefined, owner)).json(), {
      allow_discussion: false,
      contributors: [],
      rights: '',
      language: '',
      next_item: {},
      previous_item: {},
      version: 'current',
      working_copy: null,
      working_copy_of: null,
      lock: { locked: false, stealable: true }
    })
  })
})
