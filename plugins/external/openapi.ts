import swagger from '@fastify/swagger'
import fp from 'fastify-plugin'
import { ErrorSchema } from '../../schemas/error.js'

/**
 * The OpenAPI 3 document, generated from the route schemas (registered first
 * so that it sees every route), served at `{base_url}/@openapi`.
 */
export default fp(async fastify => {
  fastify.addSchema(ErrorSchema)
  await fastify.register(swagger, {
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
  fastify.get('/@openapi', {
    schema: { hide: true },
    config: { binary: true }
  }, async () => fastify.swagger())
}, { name: 'openapi' })
