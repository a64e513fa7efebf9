import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, relative } from 'node:path'
import t from 'tap'
import { contentTypesDir, projectRoot } from '../../core/config/paths.js'
import { ContentTypeRegistry } from '../../core/content/registry.js'
import { configsetFiles, writeConfigset } from '../../core/solr/maintenance.js'
import { build } from '../helper.js'
import { png, upload } from '../image-samples.js'
import { startSolrDev } from '../solr-dev/helper.js'

/**
 * docs/adding-a-content-type.md, followed to the letter with its own example:
 * a `sponsor` with a choice, a URL and an image, declared in one folder
 * outside the project's content-types/. Its one generated artefact, the
 * Solr configset, is generated from the declarations as `npm run solr --
 * schema --write` would, and the type is then written, read, downloaded and
 * searched through both engines.
 */
const typeDir = join(projectRoot, 'test', `.tmp-sponsor-${process.pid}`)
t.teardown(async () => { await rm(typeDir, { recursive: true, force: true }) })
await mkdir(join(typeDir, 'sponsor'), { recursive: true })
const root = relative(join(typeDir, 'sponsor'), projectRoot).split('\\').join('/')
await writeFile(join(typeDir, 'sponsor', 'index.ts'), `import Type from 'typebox'
import { defineContentType } from '${root}/core/content/declaration.js'
import { dublinCore } from '${root}/schemas/dublincore.js'
import { Choice, Image, RichText } from '${root}/schemas/fields.js'

export default defineContentType({
  name: 'sponsor',
  title: 'Sponsor',
  folderish: false,
  behaviors: [dublinCore],
  schema: Type.Object({
    level: Choice({ title: 'Level', vocabulary: 'sponsor_levels', index: 'field' }),
    url: Type.Optional(Type.String({ title: 'Website', format: 'uri' })),
    logo: Type.Optional(Image({ title: 'Logo' })),
    notes: Type.Optional(RichText({ title: 'Notes', maxTextLength: 5000, searchable: true }))
  }),
  vocabularies: {
    sponsor_levels: { title: 'Sponsor levels', terms: ['Platinum', 'Gold', 'Silver'].map(token => ({ token, title: token })) }
  }
})
`)
const dirs = [contentTypesDir, typeDir]

// The configset a deployment would build from these declarations.
const configset = await mkdtemp(join(tmpdir(), 'sponsor-configset-'))
t.teardown(async () => { await rm(configset, { recursive: true, force: true }) })
await mkdir(join(configset, 'conf'))
await writeConfigset(join(configset, 'conf'), configsetFiles(await ContentTypeRegistry.load(dirs)))
const solr = await startSolrDev(t, { cores: { plone: configset } })
const { call, tokenFor } = await build(t, { app: { contentTypeDirs: dirs } })
const admin = await tokenFor('admin')
// Switched through the control panel, so that the same talks can be searched with Solr on and off.
const solrActive = async (active: boolean): Promise<void> => {
  const res = await call('PATCH', '/@controlpanels/solr-controlpanel', { active, port: solr.port, base: '/solr/plone' }, admin)
  t.equal(res.statusCode, 204, res.body)
}
await solrActive(true)

t.test('a sponsor with a choice, a URL and an image: written, read, downloaded, searched through both engines', async t => {
  const logo = png(4, 3)
  const created = await call('POST', '/talks', {
    '@type': 'sponsor', title: 'Acme Hosting', level: 'Gold', url: 'https://acme.example/', logo: upload(logo, 'acme.png'), notes: '<p>Kangaroo servers</p>'
  }, admin)
  t.equal(created.statusCode, 201, created.body)
  const path = new URL(created.json()['@id']).pathname
  t.equal((await call('POST', `${path}/@workflow/publish`, {}, admin)).statusCode, 200)
  t.match(created.json(), { '@type': 'sponsor', level: 'Gold', url: 'https://acme.example/', logo: { filename: 'acme.png', width: 4, height: 3 } })

  const invalid = await call('POST', '/talks', { '@type': 'sponsor', title: 'X', level: 'Bronze', url: 'not a url', logo: upload(logo.subarray(0, 20)) }, admin)
  t.same(invalid.json().errors.map((e: { field: string }) => e.field).sort(), ['level', 'logo', 'url'], 'the choice, the URL and the image are each validated')

  const schema = (await call('GET', '/@types/sponsor')).json()
  t.match(schema.properties, { level: { enum: ['Platinum', 'Gold', 'Silver'] }, url: { format: 'uri' }, logo: { type: 'object' } })

  const download = await call('GET', `${path}/@@download/logo`)
  t.equal(download.statusCode, 200)
  t.same(download.rawPayload, logo, 'the logo downloads byte for byte')

  for (const engine of ['solr', 'catalogue']) {
    if (engine === 'catalogue') await solrActive(false)
    const force = engine === 'solr' ? '&use_solr=true' : ''
    const search = async (query: string): Promise<{ engine: string, titles: string[] }> => {
      const res = await call('GET', `/@search?${query}${force}`)
      t.equal(res.statusCode, 200, res.body)
      return { engine: String(res.headers['x-search-engine']), titles: res.json().items.map((i: { title: string }) => i.title) }
    }
    t.same(await search('level=Gold'), { engine, titles: ['Acme Hosting'] }, `${engine}: its choice index`)
    t.same(await search('SearchableText=kangaroo'), { engine, titles: ['Acme Hosting'] }, `${engine}: its searchable rich text`)
    t.same(await search('portal_type=sponsor&level=Silver'), { engine, titles: [] }, `${engine}: another value`)
    // Plone 6's image metadata, which Volto's listings read: JSON in the catalogue, JSON text in Solr, the same either way.
    const [item] = (await call('GET', `/@search?level=Gold&metadata_fields=image_field&metadata_fields=image_scales${force}`)).json().items
    t.equal(item.image_field, 'logo', `${engine}: image_field`)
    t.match(item.image_scales, { logo: [{ filename: 'acme.png', width: 4, height: 3, download: /^@@images\/logo-4-[0-9a-f]{16}\.png$/, scales: { thumb: { width: 4, height: 3 } } }] }, `${engine}: image_scales`)
    t.same((await call('GET', `${path}/${item.image_scales.logo[0].download as string}`)).rawPayload, logo, `${engine}: its download is the object's, relative to it`)
  }
})
