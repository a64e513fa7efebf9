import Fastify from 'fastify'
import t from 'tap'
import fc from 'fast-check'
import SerializerSelector from '@fastify/fast-json-stringify-compiler'
import Type from 'typebox'
import { LazySchemaCompilers, writesEverything } from '../../plugins/support/schema-compilers.js'
import { build } from '../helper.js'

/**
 * Route schemas compile at first use (plugins/support/schema-compilers.ts):
 * what a request sees must be what Fastify's own compilers give, and every
 * schema of the service must compile.
 */

function serverWith (compilers: LazySchemaCompilers): ReturnType<typeof Fastify> {
  const fastify = Fastify({ schemaController: { compilersFactory: { buildValidator: compilers.buildValidator, buildSerializer: compilers.buildSerializer } } })
  fastify.addSchema({ $id: 'Error', type: 'object', properties: { message: { type: 'string' } }, required: ['message'] })
  fastify.post('/talks/:id', {
    schema: {
      params: { type: 'object', properties: { id: { type: 'string', pattern: '^[a-z]+$' } } },
      querystring: { type: 'object', properties: { page: { type: 'integer', default: 1 } } },
      body: { type: 'object', properties: { title: { type: 'string', minLength: 1 }, audience: { type: 'string', default: 'all' } }, required: ['title'] },
      response: {
        200: { type: 'object', properties: { id: { type: 'string' }, page: { type: 'integer' }, title: { type: 'string' }, audience: { type: 'string' } } },
        400: { $ref: 'Error#' }
      }
    }
  }, async request => ({ ...(request.params as object), ...(request.query as object), ...(request.body as object), secret: 'not in the schema' }))
  return fastify
}

t.test('a lazily compiled route validates, fills defaults and serializes as Fastify does', async t => {
  const compilers = new LazySchemaCompilers()
  const fastify = serverWith(compilers)
  t.teardown(async () => { await fastify.close() })
  await fastify.ready()

  const ok = await fastify.inject({ method: 'POST', url: '/talks/fastify', payload: { title: 'Fastify' } })
  t.equal(ok.statusCode, 200)
  t.same(ok.json(), { id: 'fastify', page: 1, title: 'Fastify', audience: 'all' }, 'defaults filled in, what the response schema omits left out')

  const invalid = await fastify.inject({ method: 'POST', url: '/talks/fastify?page=two', payload: { title: 'Fastify' } })
  t.equal(invalid.statusCode, 400)
  t.match(invalid.json().message, /querystring\/page must be integer/, 'the validator\'s errors reach the error answer')
  const badBody = await fastify.inject({ method: 'POST', url: '/talks/fastify', payload: { audience: 'all' } })
  t.equal(badBody.statusCode, 400)
  t.match(badBody.json().message, /body must have required property 'title'/)
  const badParams = await fastify.inject({ method: 'POST', url: '/talks/Fastify', payload: { title: 'Fastify' } })
  t.equal(badParams.statusCode, 400)
  t.match(badParams.json().message, /params\/id must match pattern/)
  t.same(Object.keys(badParams.json()), ['message'], 'the 400 goes through its response schema, a shared one')

  t.equal(await compilers.compilePending(), 0, 'the requests compiled what they used (HEAD twins aside, none here)')
})

t.test('nothing compiles until it is used, and compilePending compiles the rest once', async t => {
  const compilers = new LazySchemaCompilers()
  const fastify = serverWith(compilers)
  t.teardown(async () => { await fastify.close() })
  await fastify.ready()
  // params, querystring, body, the 200 and the 400 serializers.
  t.equal(await compilers.compilePending(), 5, 'five schemas were left to compile after ready')
  t.equal(await compilers.compilePending(), 0, 'and none after that')
  t.equal((await fastify.inject({ method: 'POST', url: '/talks/fastify', payload: { title: 'Fastify' } })).statusCode, 200, 'the route answers with the compiled functions')
})

t.test('a header schema is refused at start (Fastify would not lower-case it for a custom compiler)', async t => {
  const fastify = serverWith(new LazySchemaCompilers())
  t.teardown(async () => { await fastify.close() })
  fastify.get('/with-headers', { schema: { headers: { type: 'object', properties: { 'X-Token': { type: 'string' } } } } }, async () => ({}))
  await t.rejects(fastify.ready(), /header schemas are not supported/)
})

t.test('every route schema of the service compiles', async t => {
  const { app } = await build(t)
  const compiled = await app.compileRouteSchemas()
  t.ok(compiled > 100, `${compiled} schemas compiled after ready, none at start`)
  t.equal(await app.compileRouteSchemas(), 0, 'each once')
})

t.test('a response schema that leaves nothing out is written by JSON.stringify, as fast-json-stringify would write it', async t => {
  // Open schemas as the routes declare them (an object's GET, a search's page).
  const open = [
    Type.Object({ '@id': Type.String(), UID: Type.String() }, { additionalProperties: true }),
    Type.Object({
      '@id': Type.String(),
      items: Type.Array(Type.Record(Type.String(), Type.Unknown())),
      items_total: Type.Integer(),
      facets: Type.Optional(Type.Record(Type.String(), Type.Record(Type.String(), Type.Integer())))
    }, { additionalProperties: true })
  ]
  for (const schema of open) t.ok(writesEverything(schema))
  // What fast-json-stringify would cut: undeclared properties, references, alternatives.
  const closed = [
    Type.Object({ id: Type.String() }),
    Type.Object({ id: Type.String() }, { additionalProperties: false }),
    Type.Object({ nested: Type.Object({ id: Type.String() }) }, { additionalProperties: true }),
    Type.Array(Type.Object({ id: Type.String() })),
    { $ref: 'Error#' },
    Type.Union([Type.String(), Type.Object({}, { additionalProperties: true })])
  ]
  for (const schema of closed) t.notOk(writesEverything(schema), JSON.stringify(schema))

  // The oracle: fast-json-stringify itself, on values of the open schemas' shapes (names that are
  // no line of their own: its record pattern `^.*$` drops those, which JSON.stringify keeps).
  const name = fc.string({ maxLength: 8 }).filter(n => !/[\n\r\u2028\u2029]/.test(n))
  const value = fc.dictionary(name, fc.jsonValue({ maxDepth: 3 }), { maxKeys: 6 })
  const page = fc.record({
    '@id': fc.string(),
    items: fc.array(value, { maxLength: 4 }),
    items_total: fc.nat(),
    facets: fc.dictionary(name, fc.dictionary(name, fc.nat(), { maxKeys: 4 }), { maxKeys: 3 })
  }).chain(fields => value.map(extra => ({ ...extra, ...fields })))
  const object = fc.record({ '@id': fc.string(), UID: fc.uuid() }).chain(fields => value.map(extra => ({ ...extra, ...fields })))
  for (const [schema, values] of [[open[0], object], [open[1], page]] as const) {
    const compiled = SerializerSelector()({}, {})({ schema, method: 'GET', url: '/', httpStatus: '200' } as never)
    fc.assert(fc.property(values, v => {
      t.same(JSON.parse(JSON.stringify(v)), JSON.parse(compiled(v)))
    }), { numRuns: 500 })
  }
})
