import t from 'tap'
import { build, talkBody } from '../helper.js'

/**
 * Schema details Volto's forms read, against plone.restapi's examples
 * (types_document, controlpanels_get, controlpanels_get_item): `behavior`
 * and `description` on every property, rich text as `type: string`, tags
 * suggested by `plone.app.vocabularies.Keywords`, the control panel's
 * `required`, fieldset `behavior`, property `factory`, `searchable_text`.
 */
const BASE = 'http://localhost:80'

t.test('schemas as Volto reads them', async t => {
  const { app, call, tokenFor } = await build(t)
  const admin = await tokenFor('admin')
  const owner = await tokenFor('olga')

  await t.test('@types/talk: behavior and description on every property; rich text; tags', async t => {
    const schema = (await call('GET', '/@types/talk')).json()
    for (const [name, property] of Object.entries(schema.properties as Record<string, Record<string, unknown>>)) {
      t.type(property.behavior, 'string', `${name} has a behavior`)
      t.type(property.description, 'string', `${name} has a description`)
    }
    t.equal(schema.properties.title.behavior, 'plone.dublincore')
    t.equal(schema.properties.start.behavior, 'plone.eventbasic')
    t.equal(schema.properties.details.behavior, 'talk')
    t.match(schema.properties.details, { type: 'string', widget: 'richtext', factory: 'Rich Text' })
    t.notOk('anyOf' in schema.properties.details)
    t.match(schema.properties.subjects, {
      type: 'array',
      factory: 'Tuple',
      widgetOptions: { vocabulary: { '@id': `${BASE}/@vocabularies/plone.app.vocabularies.Keywords` } }
    })
  })

  await t.test('@types: yes/no and number fields without a widget name, so that Volto shows a checkbox and a number input', async t => {
    const event = (await call('GET', '/@types/Event')).json()
    const collection = (await call('GET', '/@types/Collection')).json()
    t.match(event.properties, { whole_day: { type: 'boolean', factory: 'Yes/No' }, open_end: { type: 'boolean', factory: 'Yes/No' } })
    t.match(collection.properties, { sort_reversed: { type: 'boolean', factory: 'Yes/No' }, limit: { type: 'integer', factory: 'Integer', default: 1000 }, item_count: { type: 'integer', factory: 'Integer' } })
    // Volto chooses a widget named in the schema before one for the type.
    for (const property of [event.properties.whole_day, event.properties.open_end, collection.properties.sort_reversed, collection.properties.limit]) t.notOk('widget' in property, property.title)
  })

  await t.test('plone.app.vocabularies.Keywords: the tags on content the caller may see', async t => {
    const published = await call('POST', '/talks', talkBody({ title: 'Tagged', subjects: ['fastify', 'plone'] }), owner)
    await call('POST', `${new URL(published.json()['@id']).pathname}/@workflow/submit`, undefined, owner)
    await call('POST', `${new URL(published.json()['@id']).pathname}/@workflow/publish`, undefined, admin)
    await call('POST', '/talks', talkBody({ title: 'Secret', subjects: ['secret-tag'] }), owner)
    const tokens = async (token?: string): Promise<string[]> => (await call('GET', '/@vocabularies/plone.app.vocabularies.Keywords', undefined, token)).json().items.map((i: { token: string }) => i.token)
    t.same(await tokens(), ['fastify', 'plone'], 'anonymous sees the published talk\'s tags only')
    t.same(await tokens(owner), ['fastify', 'plone', 'secret-tag'])
    const filtered = (await call('GET', '/@vocabularies/plone.app.vocabularies.Keywords?title=fast')).json()
    t.same(filtered.items, [{ token: 'fastify', title: 'fastify' }])
    t.ok((await call('GET', '/@vocabularies')).json().some((v: { '@id': string }) => v['@id'].endsWith('/plone.app.vocabularies.Keywords')))
    t.equal((await call('GET', '/@vocabularies/false')).statusCode, 404)
  })

  await t.test('@controlpanels: searchable_text; the Solr panel\'s required, behavior, factory', async t => {
    const list = (await call('GET', '/@controlpanels', undefined, admin)).json()
    t.match(list[0], { '@id': `${BASE}/@controlpanels/solr-controlpanel`, group: 'Add-on Configuration', title: 'Solr settings' })
    t.ok(list[0].searchable_text.includes('Solr settings') && list[0].searchable_text.includes('Host'))
    const panel = (await call('GET', '/@controlpanels/solr-controlpanel', undefined, admin)).json()
    t.ok(Array.isArray(panel.schema.required))
    t.same(panel.schema.required.filter((k: string) => ['host', 'port', 'base', 'login', 'active', 'highlight_fields'].includes(k)).sort(), ['base', 'host', 'port'],
      'settings that may be empty, false or [] are not required (Volto refuses to save empty required fields)')
    t.equal(panel.schema.fieldsets[0].behavior, 'plone')
    t.equal(panel.schema.properties.active.factory, 'Yes/No')
    t.equal(panel.schema.properties.port.factory, 'Integer')
    t.equal(panel.schema.properties.host.factory, 'Text line (String)')
    t.equal(panel.schema.properties.facets.factory, 'List')
  })

  await t.test('saving the whole form back, as Volto does, keeps the password', async t => {
    t.equal((await call('PATCH', '/@controlpanels/solr-controlpanel', { password: 'sesame' }, admin)).statusCode, 204)
    const panel = (await call('GET', '/@controlpanels/solr-controlpanel', undefined, admin)).json()
    t.equal(panel.data.password, '********')
    const saved = await call('PATCH', '/@controlpanels/solr-controlpanel', { ...panel.data, max_results: 400 }, admin)
    t.equal(saved.statusCode, 204, saved.body)
    t.equal((await call('GET', '/@controlpanels/solr-controlpanel', undefined, admin)).json().data.max_results, 400)
    t.equal(app.solrSettings.current.password, 'sesame', 'the mask sent back is not a new password')
  })
})
