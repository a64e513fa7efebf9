import { Compile } from 'typebox/compile'
import t from 'tap'
import { build, talkBody } from '../helper.js'

/** Keys that drive the service (content-type.ts FieldAnnotations) and must not reach clients. */
const INTERNAL_KEYS = ['index', 'indexName', 'metadata', 'searchable', 'kind', 'maxTextLength', '~kind', '~optional']

/** Every key of a JSON value, at any depth. */
function keysOf (value: unknown): string[] {
  if (Array.isArray(value)) return value.flatMap(keysOf)
  if (value === null || typeof value !== 'object') return []
  return Object.entries(value).flatMap(([k, v]) => [k, ...keysOf(v)])
}

t.test('@types', async t => {
  const { app, call, tokenFor } = await build(t)
  const jane = await tokenFor('jane')
  const admin = await tokenFor('admin')
  const addable = async (path: string, token: string): Promise<Record<string, boolean>> =>
    Object.fromEntries((await call('GET', `${path}/@types`, undefined, token)).json().map((i: { id: string, addable: boolean }) => [i.id, i.addable]))

  t.test('lists the types with what the caller may add here', async t => {
    const list = await call('GET', '/talks/@types', undefined, jane)
    t.equal(list.statusCode, 200)
    const byId = new Map(list.json().map((i: { id: string }) => [i.id, i]))
    t.match(byId.get('folder'), { '@id': 'http://localhost:80/@types/folder', id: 'folder', title: 'Folder', addable: Boolean, immediately_addable: Boolean })
    t.match(byId.get('talk'), { id: 'talk', title: 'Talk' })
    t.match(byId.get('Document'), { '@id': 'http://localhost:80/@types/Document', title: 'Page' })
    t.same([...byId.keys()].sort(), ['Collection', 'Document', 'Event', 'File', 'Image', 'Link', 'News Item', 'folder', 'talk'])
    t.notOk(byId.has('Plone Site'), 'the site root is not a type one adds')
    t.equal((await addable('/talks', jane)).talk, true, 'a member adds talks in /talks')
    const none = { Collection: false, Document: false, Event: false, File: false, Image: false, Link: false, 'News Item': false, folder: false, talk: false }
    t.same(await addable('/', jane), none, 'but nothing in the site root')
    t.same(await addable('/', admin), { Collection: true, Document: true, Event: true, File: true, Image: true, Link: true, 'News Item': true, folder: true, talk: true })
    const talk = await call('POST', '/talks', talkBody(), jane)
    t.same(await addable(new URL(talk.headers.location as string).pathname, jane), none, 'nothing inside a talk')
    const anonymous = await call('GET', '/talks/@types')
    t.equal(anonymous.statusCode, 401)
    t.equal(anonymous.json().type, 'Unauthorized')
  })

  t.test('@types/talk is the JSON Schema that validates writes', async t => {
    const res = await call('GET', '/@types/talk', undefined, jane)
    t.equal(res.statusCode, 200)
    t.match(res.headers['content-type'], /^application\/json\+schema/)
    const schema = res.json()
    t.match(schema, { title: 'Talk', type: 'object', layouts: ['talkview'] })
    t.same([...schema.required].sort(), ['audience', 'title', 'type_of_talk'])
    t.match(schema.properties.details, { maxLength: 2000, widget: 'richtext', factory: 'Rich Text' })
    t.match(schema.properties.speaker_biography, { maxLength: 1000, widget: 'richtext' })
    t.match(schema.properties.type_of_talk, {
      type: 'string', enum: ['Talk', 'Training', 'Keynote', 'Lightning Talk'], vocabulary: { '@id': 'http://localhost:80/@vocabularies/types_of_talk' }
    })
    t.match(schema.properties.audience, { type: 'array', minItems: 1, items: { enum: ['Beginner', 'Advanced', 'Professionals'] } })
    t.match(schema.properties.room, { enum: ['101', '201', 'Auditorium'], writePermission: 'Review portal content' })
    t.match(schema.properties.title, { type: 'string', minLength: 1, maxLength: 1024 })
    t.match(schema.properties.email, { format: 'email', widget: 'email' })
    t.match(schema.properties.start, { format: 'date-time', widget: 'datetime' })
    const leaked = keysOf(schema.properties).filter(k => INTERNAL_KEYS.includes(k))
    t.same(leaked, [], 'no internal annotation reaches the client')
    t.same(schema.fieldsets.flatMap((f: { fields: string[] }) => f.fields).sort(), Object.keys(schema.properties).sort(), 'every field is in a fieldset')
    t.same([schema.fieldsets[0].id, ...schema.fieldsets[0].fields.slice(0, 2)], ['default', 'title', 'description'], 'the default fieldset first (Volto opens its forms on it), title and description first in it')
    t.equal(new Set(schema.fieldsets.flatMap((f: { fields: string[] }) => f.fields)).size, Object.keys(schema.properties).length, 'no field in two fieldsets')

    // Generated from the declaration: each field's JSON Schema keywords come through unchanged.
    for (const [name, field] of app.contentTypes.get('talk')!.fields) {
      for (const keyword of ['type', 'minLength', 'maxLength', 'pattern', 'format', 'minItems', 'maxItems'] as const) {
        const declared = (field as Record<string, unknown>)[keyword]
        if (declared !== undefined && field.kind !== 'richtext') t.equal(schema.properties[name][keyword], declared, `${name}.${keyword}`)
      }
    }
    // And it is a JSON Schema a client can validate with.
    const validator = Compile(schema)
    t.ok(validator.Check(talkBody({ '@type': undefined })), 'a valid talk passes')
    t.notOk(validator.Check(talkBody({ '@type': undefined, title: undefined })), 'a talk without title fails')
    t.notOk(validator.Check(talkBody({ '@type': undefined, type_of_talk: 'Workshop' })), 'an unknown kind fails')
  })

  t.test('the rooms in the schema follow the vocabulary', async t => {
    t.equal((await call('PATCH', '/@vocabularies/rooms', { items: [{ token: 'Hall A' }] }, admin)).statusCode, 204)
    t.same((await call('GET', '/@types/talk', undefined, jane)).json().properties.room.enum, ['Hall A'])
  })

  t.test('unknown types are 404; the site root\'s schema is served (Volto edits the home page with it)', async t => {
    const root = await call('GET', '/@types/Plone%20Site', undefined, jane)
    t.equal(root.statusCode, 200)
    t.match(root.json().properties, { title: { type: 'string' }, blocks: { widget: 'json' }, blocks_layout: { widget: 'json' } })
    const res = await call('GET', '/@types/Bookshelf', undefined, jane)
    t.equal(res.statusCode, 404)
    t.match(res.json(), { type: 'NotFound', message: /Bookshelf/ })
  })
})
