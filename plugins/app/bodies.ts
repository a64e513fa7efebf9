import type { FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { UnsupportedMediaType } from '../../core/errors.js'
import { bodyBounds, type BodyBounds, type BodyKind } from '../../core/security/body-bounds.js'
import { parseJsonBody } from '../../core/security/json-body.js'

/** A route that may be sent a body, with the bounds its body gets and the fields its schema names (none: any, as an object's). */
export interface BodyRoute extends BodyBounds { method: string, url: string, kind: BodyKind, fields: string[] }

declare module 'fastify' {
  interface FastifyContextConfig {
    /** What the route's body is, for its bounds (core/security/body-bounds.ts); `small` when unset. */
    bodyKind?: BodyKind
  }
  interface FastifyInstance {
    /** Every route that may be sent a body (any method but GET and HEAD), as registered, with its bounds. */
    bodyRoutes: readonly BodyRoute[]
  }
}

const kindOf = (config: { bodyKind?: BodyKind } | undefined): BodyKind => config?.bodyKind ?? 'small'

/**
 * Request bodies: JSON only, each bounded by what its route takes before it
 * is read or parsed (docs/api.md, "Bounded work per request"). Every route
 * gets the byte limit of its kind (a larger body is 413 as soon as its
 * Content-Length or its bytes say so); the JSON text is then scanned against
 * the kind's count of values and the nesting limit, and parsed and checked
 * for untrusted input (core/security/untrusted-input.ts) in slices that let
 * other requests run.
 */
export default fp(async fastify => {
  const routes: BodyRoute[] = []
  fastify.decorate('bodyRoutes', routes)
  fastify.addHook('onRoute', route => {
    const kind = kindOf(route.config)
    const bounds = bodyBounds(kind, fastify.config)
    route.bodyLimit = bounds.bytes
    const fields = Object.keys((route.schema?.body as { properties?: Record<string, unknown> } | undefined)?.properties ?? {})
    for (const method of [route.method].flat()) {
      if (method !== 'GET' && method !== 'HEAD') routes.push({ method, url: route.url, kind, fields, ...bounds })
    }
  })

  // Plain text is not a body this API takes: without its parser Fastify answers 415.
  fastify.removeContentTypeParser('text/plain')
  // An empty body is no body whatever its Content-Type (@plone/client posts workflow
  // transitions with an empty form body); anything else that is not JSON is 415.
  fastify.addContentTypeParser('*', { parseAs: 'string' }, (_request, body, done) => {
    if ((body as string) === '') done(null, undefined)
    else done(UnsupportedMediaType(), undefined)
  })
  // Clients send `Content-Type: application/json` on bodiless POSTs (@workflow,
  // @logout): an empty body is no body, not a syntax error. Every body is
  // checked once here for what no handler should have to meet (prototype
  // keys, NUL, lone surrogates, absurd nesting, too many values), so that handlers cannot forget.
  fastify.removeContentTypeParser('application/json')
  fastify.addContentTypeParser('application/json', { parseAs: 'string' }, async (request: FastifyRequest, body: string | Buffer) => {
    const text = body as string
    if (/^\s*$/.test(text)) return undefined
    return await parseJsonBody(text, bodyBounds(kindOf(request.routeOptions.config), fastify.config))
  })
}, { name: 'bodies' })
