import Fastify, { type FastifyInstance, type RouteOptions } from 'fastify'
import fp from 'fastify-plugin'
import { ErrorSchema } from '../../schemas/error.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** The OpenAPI 3 document of every route, built at the first call. */
    openapi: () => Promise<Record<string, any>>
  }
}

/**
 * The OpenAPI 3 document, generated from the route schemas (registered first
 * so that it sees every route), served at `{base_url}/@openapi`.
 *
 * @fastify/swagger (with YAML and a schema resolver, about 400 kB of code) is
 * loaded when the document is first asked for, not at every start: this
 * plugin only keeps the routes as they are added. The first call registers
 * them, with their schemas and the shared ones, on a Fastify instance of its
 * own that @fastify/swagger documents as it would this one; that instance
 * compiles nothing, answers nothing, and is dropped once the document is built.
 */
export default fp(async fastify => {
  fastify.addSchema(ErrorSchema)
  const routes: RouteOptions[] = []
  fastify.addHook('onRoute', route => { routes.push(route) })
  let document: Promise<Record<string, any>> | undefined
  fastify.decorate('openapi', async () => await (document ??= documentOf(fastify, routes).catch(err => {
    document = undefined // the next call tries again
    throw err
  })))
  fastify.get('/@openapi', {
    schema: { hide: true },
    config: { binary: true }
  }, async () => await fastify.openapi())
}, { name: 'openapi' })

async function documentOf (fastify: FastifyInstance, routes: RouteOptions[]): Promise<Record<string, any>> {
  const { default: swagger } = await import('@fastify/swagger')
  const described = Fastify({ exposeHeadRoutes: false })
  described.setValidatorCompiler(() => () => true)
  described.setSerializerCompiler(() => JSON.stringify)
  for (const schema of Object.values(fastify.getSchemas())) described.addSchema(schema)
  await described.register(swagger, {
    openapi: {
      openapi: '3.0.3',
      info: {
        title: 'Talks content service',
        description: 'A Plone REST API compatible content service. Services named `@…` can be called on any content path: ' +
          '`/talks/my-talk/@workflow` calls `/@workflow` with `/talks/my-talk` as its context. ' +
          'Every error body is `#/components/schemas/Error`.',
        version: '0.1.0'
      },
      servers: [{ url: fastify.config.SITE_PATH || '/' }],
      components: {
        securitySchemes: { bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } }
      }
    },
    refResolver: { buildLocalReference: (json, _base, _fragment, i) => String(json.$id ?? `def-${i}`) }
  })
  const answerNothing = async (): Promise<void> => {}
  for (const { method, url, schema, config, constraints } of routes) described.route({ method, url, schema, config, constraints, handler: answerNothing })
  await described.ready()
  try {
    return described.swagger() as Record<string, any>
  } finally {
    await described.close()
  }
}
