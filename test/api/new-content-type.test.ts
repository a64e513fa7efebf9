import { randomBytes } from 'node:crypto'
import { mkdir, rm, writeFile } from 'node:fs/promises'
import { join, relative } from 'node:path'
import t from 'tap'
import { contentTypesDir, projectRoot } from '../../core/config/paths.js'
import { build } from '../helper.js'

/**
 * "A new content type is one folder": a type declared only in a folder of its
 * own (outside content-types/, nothing else edited) is served, validated,
 * described and indexed like the talk.
 */
async function writeWorkshopType (dir: string): Promise<void> {
  const typeDir = join(dir, 'workshop')
  await mkdir(typeDir, { recursive: true })
  const root = relative(typeDir, projectRoot).split('\\').join('/')
  await writeFile(join(typeDir, 'index.ts'), `import Type from 'typebox'
import { defineContentType } from '${root}/core/content/declaration.js'
import { dublinCore } from '${root}/schemas/dublincore.js'
import { Choice } from '${root}/schemas/fields.js'

export default defineContentType({
  name: 'workshop',
  title: 'Workshop',
  folderish: false,
  behaviors: [dublinCore],
  schema: Type.Object({
    workshop_level: Choice({ title: 'Level', vocabulary: 'workshop_levels', index: 'field' }),
    seats: Type.Optional(Type.Integer({ title: 'Seats', minimum: 1, maximum: 40 })),
    // Sub-fields may bear the names of the service's annotations: they are names, not annotations.
    venue: Type.Optional(Type.Object({ kind: Type.Union([Type.Literal('online'), Type.Literal('onsite')]), index: Type.Optional(Type.Integer()) }, { title: 'Venue' }))
  }),
  vocabularies: {
    workshop_levels: { title: 'Workshop levels', terms: [{ token: 'intro', title: 'Introduction' }, { token: 'deep', title: 'Deep dive' }] }
  }
})
`)
}

t.test('a content type declared in one folder', async t => {
  const tmp = join(projectRoot, 'test', `.tmp-${randomBytes(6).toString('hex')}`)
  t.teardown(async () => { await rm(tmp, { recursive: true, force: true }) })
  await writeWorkshopType(tmp)
  const { call, tokenFor } = await build(t, { app: { contentTypeDirs: [contentTypesDir, tmp] } })
  const jane = await tokenFor('jane')
  const workshop = (fields: Record<string, unknown>): Record<string, unknown> => ({ '@type': 'workshop', title: 'Fastify hands-on', ...fields })

  t.test('appears in @types with its JSON Schema, and its vocabulary in @vocabularies', async t => {
    const types = (await call('GET', '/talks/@types', undefined, jane)).json()
    t.match(types.find((i: { id: string }) => i.id === 'workshop'), { title: 'Workshop', addable: true })
    const schema = await call('GET', '/@types/workshop', undefined, jane)
    t.equal(schema.statusCode, 200)
    t.match(schema.headers['content-type'], /application\/json\+schema/)
    t.match(schema.json(), {
      title: 'Workshop',
      required: ['title', 'workshop_level'],
      properties: {
        workshop_level: { type: 'string', enum: ['intro', 'deep'], vocabulary: { '@id': 'http://localhost:80/@vocabularies/workshop_levels' } },
        seats: { type: 'integer', minimum: 1, maximum: 40 }
      }
    })
    t.notOk('index' in schema.json().properties.workshop_level, 'annotations stay inside the service')
    t.same(Object.keys(schema.json().properties.venue.properties), ['kind', 'index'], 'sub-fields keep their names')
    const terms = (await call('GET', '/@vocabularies/workshop_levels')).json().items
    t.same(terms, [{ token: 'intro', title: 'Introduction' }, { token: 'deep', title: 'Deep dive' }])
  })

  t.test('is created in /talks and validated', async t => {
    const created = await call('POST', '/talks', workshop({ workshop_level: 'deep', seats: 40, venue: { kind: 'online' } }), jane)
    t.equal(created.statusCode, 201, created.body)
    t.match(created.json(), { '@type': 'workshop', type_title: 'Workshop', workshop_level: 'deep', seats: 40, venue: { kind: 'online' }, review_state: 'private' })
    const invalid = await call('POST', '/talks', workshop({ workshop_level: 'advanced', seats: 41, venue: { kind: 'moon' }, colour: 'red' }), jane)
    t.equal(invalid.statusCode, 400)
    t.same(invalid.json().errors.map((e: { field: string }) => e.field).sort(), ['colour', 'seats', 'venue', 'workshop_level'])
    const missing = await call('POST', '/talks', workshop({ seats: 0 }), jane)
    t.same(missing.json().errors.map((e: { field: string }) => e.field).sort(), ['seats', 'workshop_level'])
    t.equal((await call('POST', '/talks', workshop({ workshop_level: 'intro', seats: 1 }), jane)).statusCode, 201)
  })

  t.test('its declared index is queryable through @search', async t => {
    const titles = async (query: string): Promise<string[]> => {
      const res = await call('GET', `/@search?${query}`, undefined, jane)
      t.equal(res.statusCode, 200, res.body)
      return res.json().items.map((i: { '@type': string, title: string }) => `${i['@type']}:${i.title}`)
    }
    t.same(await titles('workshop_level=deep'), ['workshop:Fastify hands-on'])
    t.same(await titles('workshop_level=intro&metadata_fields=workshop_level'), ['workshop:Fastify hands-on'])
    t.same(await titles('workshop_level=none'), [])
    t.same(await titles('portal_type=workshop&sort_on=workshop_level'), ['workshop:Fastify hands-on', 'workshop:Fastify hands-on'])
    const page = (await call('GET', '/@search?portal_type=workshop&sort_on=workshop_level&metadata_fields=workshop_level', undefined, jane)).json()
    t.same(page.items.map((i: { workshop_level: string }) => i.workshop_level), ['deep', 'intro'], 'sortable and returned as metadata')
  })

  t.test('the project\'s own types still work beside it', async t => {
    const talk = await call('POST', '/talks', { '@type': 'talk', title: 'Still here', type_of_talk: 'Talk', audience: ['Beginner'] }, jane)
    t.equal(talk.statusCode, 201, talk.body)
  })
})
