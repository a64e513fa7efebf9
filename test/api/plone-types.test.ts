import t from 'tap'
import { MAX_BLOCKS, MAX_BLOCKS_LENGTH } from '../../core/content/blocks.js'
import { SolrDocuments } from '../../core/solr/documents.js'
import { indexableOf } from '../../core/content/indexable.js'
import { png } from '../image-samples.js'
import { build } from '../helper.js'

/**
 * Plone's standard types as plugin folders (content-types/document,
 * news-item, link) and Volto's blocks (core/content/blocks.ts), in
 * plone.restapi's shapes: `@types` describes blocks as its JSONField, a page
 * keeps its blocks as sent, their text is found by full text in the catalogue
 * and goes to Solr, and hostile blocks are refused with nothing written.
 */

/** A slate block as Volto 18 writes it (value and its plain text). */
const slate = (text: string): Record<string, unknown> =>
  ({ '@type': 'slate', value: [{ type: 'p', children: [{ text }] }], plaintext: text })

/** A page's blocks in Volto's shapes, each holding one word that only it holds. */
const PAGE_BLOCKS = {
  'b-title': { '@type': 'title' },
  'b-slate': slate('Lighthouse keepers'),
  'b-draft': { '@type': 'text', text: { blocks: [{ key: 'x', text: 'Marmalade recipes', type: 'unstyled' }], entityMap: {} } },
  'b-grid': { '@type': 'gridBlock', blocks: { 'g-1': slate('Quokka sightings') }, blocks_layout: { items: ['g-1'] } },
  'b-columns': { '@type': 'columnsBlock', data: { blocks: { 'c-1': { '@type': 'slateTable', table: { rows: [{ key: 'r', cells: [{ key: 'c', type: 'data', value: [{ type: 'p', children: [{ text: 'Zeppelin timetable' }] }] }] }] } } } } },
  'b-custom': { '@type': 'acmeMap', searchableText: 'Archipelago', caption: 'Walrus' },
  'b-image': { '@type': 'image', url: 'https://example.org/a.png', alt: 'Narwhal' }
}
const PAGE_LAYOUT = { items: Object.keys(PAGE_BLOCKS) }

t.test('Plone\'s standard types and blocks', async t => {
  const { app, call, tokenFor } = await build(t)
  const admin = await tokenFor('admin')
  const jane = await tokenFor('jane')
  const found = async (text: string): Promise<string[]> => {
    const res = await call('GET', `/@search?SearchableText=${encodeURIComponent(text)}&portal_type=Document`, undefined, admin)
    t.equal(res.statusCode, 200, res.body)
    return res.json().items.map((i: { '@id': string }) => new URL(i['@id']).pathname)
  }

  t.test('@types/Document describes blocks as plone.restapi\'s JSONField, in the Layout fieldset', async t => {
    const schema = (await call('GET', '/@types/Document', undefined, jane)).json()
    t.match(schema, { title: 'Page', layouts: ['document_view'] })
    t.same(schema.properties.blocks, { description: '', title: 'Blocks', default: {}, type: 'dict', factory: 'JSONField', widget: 'json', behavior: 'volto.blocks' })
    t.same(schema.properties.blocks_layout, { description: '', title: 'Blocks Layout', default: { items: [] }, type: 'dict', factory: 'JSONField', widget: 'json', behavior: 'volto.blocks' })
    t.match(schema.fieldsets.find((f: { id: string }) => f.id === 'layout'), { title: 'Layout', fields: ['blocks', 'blocks_layout'] })
    const news = (await call('GET', '/@types/News%20Item', undefined, jane)).json()
    t.match(news.properties, { image: { factory: 'Image' }, image_caption: { type: 'string' }, blocks: { factory: 'JSONField' } })
    const link = (await call('GET', '/@types/Link', undefined, jane)).json()
    t.same(link.required, ['title', 'remoteUrl'])
  })

  t.test('a page keeps its blocks as sent; one without reads as Volto expects an empty page', async t => {
    const created = await call('POST', '/', { '@type': 'Document', id: 'about', title: 'About us', blocks: PAGE_BLOCKS, blocks_layout: PAGE_LAYOUT }, admin)
    t.equal(created.statusCode, 201, created.body)
    const page = (await call('GET', '/about', undefined, admin)).json()
    t.match(page, { '@type': 'Document', type_title: 'Page', layout: 'document_view', is_folderish: true, items: [], items_total: 0 })
    t.same(page.blocks, PAGE_BLOCKS)
    t.same(page.blocks_layout, PAGE_LAYOUT)
    t.equal((await call('POST', '/', { '@type': 'Document', id: 'empty', title: 'Empty' }, admin)).statusCode, 201)
    const empty = (await call('GET', '/empty', undefined, admin)).json()
    t.same([empty.blocks, empty.blocks_layout], [{}, { items: [] }])
  })

  t.test('block text is searchable text: by block type, a block\'s own searchableText, nested blocks', async t => {
    for (const word of ['lighthouse', 'marmalade', 'quokka', 'zeppelin', 'archipelago']) t.same(await found(word), ['/about'], word)
    // Neither a block's other keys nor a block type without text count (plone.restapi's indexers).
    for (const word of ['walrus', 'narwhal', 'gridblock']) t.same(await found(word), [], word)
    const { rows: [row] } = await app.db.query<{ uid: string }>("SELECT uid::text AS uid FROM content WHERE path = '/about'")
    const located = (await app.content.locate('/about')).found!
    t.equal(located.obj.uid, row.uid)
    const solr = new SolrDocuments(app.contentTypes).build(located.type, indexableOf(located), null)
    for (const word of ['Lighthouse', 'Marmalade', 'Quokka', 'Zeppelin', 'Archipelago']) t.match(solr.SearchableText, new RegExp(word), `Solr's SearchableText has ${word}`)
    t.notMatch(solr.SearchableText, /Walrus|Narwhal/)

    const patched = await call('PATCH', '/about', { blocks: { only: slate('Harbour') }, blocks_layout: { items: ['only'] } }, admin)
    t.equal(patched.statusCode, 204, patched.body)
    t.same(await found('lighthouse'), [], 'a block taken out is no longer found')
    t.same(await found('harbour'), ['/about'])
  })

  t.test('hostile blocks are refused in the error shape, and nothing is written', async t => {
    const before = (await call('GET', '/about', undefined, admin)).json()
    const many = Object.fromEntries(Array.from({ length: MAX_BLOCKS + 1 }, (_, i) => [`b${i}`, { '@type': 'x' }]))
    const nestedMany = { grid: { '@type': 'gridBlock', blocks: Object.fromEntries(Array.from({ length: MAX_BLOCKS }, (_, i) => [`b${i}`, { '@type': 'x' }])) } }
    const long = { big: slate('a'.repeat(MAX_BLOCKS_LENGTH)) }
    let deep: Record<string, unknown> = { text: 'deep' }
    for (let i = 0; i < 40; i++) deep = { type: 'p', children: [deep] }
    const cases: Array<[string, Record<string, unknown>, RegExp]> = [
      ['blocks as a list', { blocks: [slate('x')] }, /object/i],
      ['blocks as text', { blocks: 'hello' }, /object/i],
      ['a block that is not an object', { blocks: { a: 5 } }, /Block 'a' is not an object/],
      ['a block that is a list', { blocks: { a: [] } }, /Block 'a' is not an object/],
      ['an @type that is not text', { blocks: { a: { '@type': 7 } } }, /'@type' that is not text/],
      ['a nested block that is not an object', { blocks: { g: { '@type': 'gridBlock', blocks: { n: null } } } }, /Block 'n' is not an object/],
      ['too many blocks', { blocks: many }, new RegExp(`More than ${MAX_BLOCKS} blocks`)],
      ['too many blocks, nested', { blocks: { ...nestedMany, one: slate('x') } }, new RegExp(`More than ${MAX_BLOCKS} blocks`)],
      ['blocks too long', { blocks: long }, /characters as JSON/],
      ['blocks nested too deep', { blocks: { a: { '@type': 'slate', value: [deep] } } }, /nested deeper/],
      ['a layout without items', { blocks_layout: {} }, /items/],
      ['a layout of numbers', { blocks_layout: { items: [1, 2] } }, /string/i],
      ['a layout too long', { blocks_layout: { items: Array.from({ length: MAX_BLOCKS + 1 }, (_, i) => `b${i}`) } }, /items/]
    ]
    for (const [name, body, message] of cases) {
      const res = await call('PATCH', '/about', body, admin)
      t.equal(res.statusCode, 400, `${name}: ${res.body.slice(0, 200)}`)
      t.match(res.json(), { type: 'BadRequest', message: String }, name)
      t.match(JSON.stringify(res.json()), message, name)
    }
    for (const text of ['{"blocks": {"__proto__": {"@type": "slate"}}}', '{"blocks": {"a": {"@type": "slate", "plaintext": "nul\\u0000"}}}', '{"blocks": {"a": {"@type": "slate", "plaintext": "\\ud800"}}}']) {
      const res = await app.inject({ method: 'PATCH', url: '/about', payload: text, headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' } })
      t.equal(res.statusCode, 400, text)
    }
    t.same((await call('GET', '/about', undefined, admin)).json().blocks, before.blocks, 'the page is as it was')
  })

  t.test('a News Item has a lead image and blocks; a Link its remoteUrl, in the catalogue as getRemoteUrl', async t => {
    const image = { data: png(3, 2).toString('base64'), encoding: 'base64', filename: 'harbour.png', 'content-type': 'image/png' }
    const news = await call('POST', '/', { '@type': 'News Item', id: 'opening', title: 'We open', image, image_caption: 'The harbour', blocks: { a: slate('Ribbon') }, blocks_layout: { items: ['a'] } }, admin)
    t.equal(news.statusCode, 201, news.body)
    const read = (await call('GET', '/opening', undefined, admin)).json()
    t.match(read, { '@type': 'News Item', layout: 'newsitem_view', image_caption: 'The harbour', image: { width: 3, height: 2, 'content-type': 'image/png', download: /^http:\/\/localhost:80\/opening\/@@images\/image-3-[0-9a-f]{16}\.png$/ } })
    t.equal((await call('GET', new URL(read.image.download).pathname, undefined, admin)).statusCode, 200)

    const imageItem = await call('POST', '/about', { '@type': 'Image', title: 'harbour.png', image }, admin)
    t.equal(imageItem.statusCode, 201, 'an Image is uploaded into a page (Volto\'s image block does so)')
    const imageUrl = String(imageItem.headers.location)
    t.match(imageUrl, /^http:\/\/localhost:80\/about\//)
    t.match((await call('GET', new URL(imageUrl).pathname, undefined, admin)).json(), { '@type': 'Image', layout: 'image_view', image: { width: 3, height: 2, download: new RegExp(`^${imageUrl}/@@images/image-3-`) } })
    t.match((await call('GET', '/about', undefined, admin)).json(), { items_total: 1, items: [{ '@type': 'Image' }] }, 'the page lists it')
    t.equal((await call('POST', '/', { '@type': 'Image', title: 'Nothing' }, admin)).statusCode, 400, 'an Image needs its image')

    const missing = await call('POST', '/', { '@type': 'Link', title: 'Plone' }, admin)
    t.equal(missing.statusCode, 400)
    t.match(missing.json(), { errors: [{ field: 'remoteUrl' }] })
    t.equal((await call('POST', '/', { '@type': 'Link', id: 'plone', title: 'Plone', remoteUrl: 'https://plone.org' }, admin)).statusCode, 201)
    const listed = (await call('GET', '/@search?portal_type=Link&metadata_fields=getRemoteUrl', undefined, admin)).json()
    t.match(listed.items, [{ '@id': 'http://localhost:80/plone', getRemoteUrl: 'https://plone.org' }])
    const talks = (await call('GET', '/@search?portal_type=talk&metadata_fields=getRemoteUrl', undefined, admin)).json()
    t.ok(talks.items.every((i: { getRemoteUrl: unknown }) => i.getRemoteUrl === null), 'other types have none')
  })

  t.test('the site root has blocks: Volto\'s home page, edited by a Manager only', async t => {
    const home = { h: { '@type': 'title' }, w: slate('Welcome aboard') }
    t.equal((await call('PATCH', '/', { blocks: home, blocks_layout: { items: ['h', 'w'] } }, jane)).statusCode, 403)
    t.equal((await call('PATCH', '/', { blocks: home })).statusCode, 401)
    const res = await call('PATCH', '/', { blocks: home, blocks_layout: { items: ['h', 'w'] } }, admin)
    t.equal(res.statusCode, 204, res.body)
    const root = (await call('GET', '/')).json()
    t.same([root.blocks, root.blocks_layout], [home, { items: ['h', 'w'] }])
    t.equal((await call('PATCH', '/', { blocks: { a: 1 } }, admin)).statusCode, 400)
    t.same((await call('GET', '/')).json().blocks, home)
  })
})
