import { randomUUID } from 'node:crypto'
import t from 'tap'
import { build, talkBody } from '../helper.js'

/**
 * Teaser blocks as plone.restapi 10 serves them (TeaserBlockSerializerBase):
 * their target summarised as it is now, as the reader may see it.
 */
t.test('a teaser shows its target as it is now, to whom may see it', async t => {
  const { call, tokenFor } = await build(t)
  const admin = await tokenFor('admin')
  const base = 'http://localhost:80'
  const created = async (body: Record<string, unknown>, publish: boolean): Promise<string> => {
    const res = await call('POST', '/talks', body, admin)
    t.equal(res.statusCode, 201, res.body)
    if (publish) t.equal((await call('POST', `/talks/${res.json().id as string}/@workflow/publish`, {}, admin)).statusCode, 200)
    return res.json()['@id'] as string
  }
  const open = await created(talkBody({ id: 'open-talk', title: 'Open talk', description: 'As first written' }), true)
  const hidden = await created(talkBody({ id: 'hidden-talk', title: 'Hidden talk', description: 'Nobody but its editors' }), false)
  const picked = (url: string, extra: Record<string, unknown>): Record<string, unknown> =>
    ({ '@type': 'teaser', href: [{ '@id': url, title: 'as picked', description: 'as picked' }], title: 'as picked', description: 'as picked', ...extra })
  const ids = { follows: randomUUID(), customised: randomUUID(), hidden: randomUUID(), legacy: randomUUID(), grid: randomUUID(), inGrid: randomUUID(), hiddenLegacy: randomUUID(), customisedHidden: randomUUID() }
  const page = await call('POST', '/', {
    '@type': 'Document',
    id: 'teasers',
    title: 'Teasers',
    blocks: {
      [ids.follows]: picked(open, { overwrite: false }),
      [ids.customised]: picked(open, { overwrite: true, title: 'My own title' }),
      [ids.hidden]: picked(hidden, { overwrite: false }),
      [ids.legacy]: picked(open, {}),
      [ids.grid]: { '@type': 'gridBlock', blocks: { [ids.inGrid]: picked(open, { overwrite: false }) }, blocks_layout: { items: [ids.inGrid] } },
      [ids.hiddenLegacy]: picked(hidden, { title: 'Hidden talk' }),
      [ids.customisedHidden]: picked(hidden, { overwrite: true, title: 'Coming soon' })
    },
    blocks_layout: { items: Object.values(ids).filter(id => id !== ids.inGrid) }
  }, admin)
  t.equal(page.statusCode, 201, page.body)
  t.equal((await call('POST', '/teasers/@workflow/publish', {}, admin)).statusCode, 200)
  // The target changes after the teasers were saved.
  t.equal((await call('PATCH', '/talks/open-talk', { title: 'Open talk, renamed', description: 'As it reads now' }, admin)).statusCode, 204)

  const blocksFor = async (token?: string): Promise<Record<string, any>> => {
    const res = await call('GET', '/teasers', undefined, token)
    t.equal(res.statusCode, 200)
    return res.json().blocks
  }
  const anonymous = await blocksFor()
  t.match(anonymous[ids.follows], { title: 'Open talk, renamed', description: 'As it reads now', overwrite: false, href: [{ '@id': `${base}/talks/open-talk`, '@type': 'talk', title: 'Open talk, renamed', review_state: 'published' }] }, 'a teaser that follows its target shows it as it is now')
  t.ok('image_scales' in anonymous[ids.follows].href[0], 'with its image metadata, as a listing has it')
  t.match(anonymous[ids.customised], { title: 'My own title', description: 'as picked', href: [{ title: 'Open talk, renamed' }] }, 'a customised teaser keeps its text; its target is as it is now')
  t.same(anonymous[ids.hidden].href, [], 'a target the reader may not view: no href')
  t.match(anonymous[ids.hidden], { title: '', description: '' }, 'nor the text the teaser copied from it when it was picked')
  t.match(anonymous[ids.hiddenLegacy], { href: [], title: '' }, 'a teaser of before the option, to a hidden target: nothing of it either')
  t.match(anonymous[ids.customisedHidden], { href: [], title: 'Coming soon' }, "an editor's own text stays")
  t.notOk(JSON.stringify(anonymous).includes('Hidden talk') || JSON.stringify(anonymous).includes('Nobody but its editors'), 'nothing of the hidden talk anywhere in the page')
  t.match(anonymous[ids.legacy], { title: 'as picked', href: [{ '@id': `${base}/talks/open-talk`, title: 'as picked' }] }, 'a teaser saved before the option: as kept')
  t.notOk('overwrite' in anonymous[ids.legacy], 'and not marked (read and sent back, it is kept as it was)')
  t.match(anonymous[ids.grid].blocks[ids.inGrid], { title: 'Open talk, renamed', href: [{ title: 'Open talk, renamed' }] }, 'a teaser inside a grid too')

  const forAdmin = await blocksFor(admin)
  t.match(forAdmin[ids.hidden], { title: 'Hidden talk', href: [{ '@id': `${base}/talks/hidden-talk`, title: 'Hidden talk', review_state: 'private' }] }, 'its editors see the hidden target')

  // What is kept stays by UID: the editor's next save sends the served form back, which is kept as it was.
  const edited = await call('PATCH', '/teasers', { blocks: forAdmin }, admin)
  t.equal(edited.statusCode, 204, edited.body)
  t.same((await blocksFor())[ids.hidden].href, [], 'saved back by its editor, the hidden target still reaches nobody else')
})
