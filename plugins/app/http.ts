import fp from 'fastify-plugin'
import { NotAcceptable, NotFound } from '../../core/errors.js'
import { ANONYMOUS } from '../../core/security.js'
import { addressOf } from '../../core/url.js'

/** Accept headers that a JSON answer satisfies. */
function acceptsJson (accept: string | undefined): boolean {
  if (accept === undefined || accept.trim() === '') return true
  return accept.split(',').some(part => {
    const type = part.split(';')[0].trim().toLowerCase()
    return type === '*/*' || type === 'application/*' || type === 'application/json' || type.endsWith('+json')
  })
}

/**
 * Addresses and negotiation (API.md §1): `{base_url}` as the client sees it,
 * the context path, JSON for `Accept: application/json`, a missing Accept,
 * `*\/*` and anything under `++api++`; 406 for a client that accepts only
 * something else.
 */
export default fp(async fastify => {
  const sitePath = fastify.config.SITE_PATH
  // A reference type cannot be a request decorator's default; the onRequest hook sets it.
  fastify.decorateRequest('principal', null as unknown as typeof ANONYMOUS)
  fastify.decorateRequest('token', null)
  fastify.decorateRequest('absoluteUrl', function (url: string) {
    return `${this.protocol}://${this.host}${url}`
  })
  fastify.decorateRequest('baseUrl', {
    getter () { return `${this.protocol}://${this.host}${sitePath}` }
  })
  fastify.decorateRequest('contextPath', {
    getter () { return addressOf(this.raw).contextPath }
  })

  // Plain text is not a body this API takes: without its parser Fastify answers 415.
  fastify.removeContentTypeParser('text/plain')
  // Clients send `Content-Type: application/json` on bodiless POSTs (@workflow,
  // @logout): an empty body is no body, not a syntax error.
  const parseJson = fastify.getDefaultJsonParser('error', 'ignore')
  fastify.removeContentTypeParser('application/json')
  fastify.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    if ((body as string).trim() === '') { done(null, undefined); return }
    parseJson(request, body as string, done)
  })

  fastify.addHook('onRequest', async (request, reply) => {
    request.principal = ANONYMOUS
    // The id that a 500's message asks the client to quote, on every answer.
    void reply.header('x-request-id', request.id)
  })

  // After authentication (an onRequest hook), so that an expired or invalid
  // token is reported whatever the request addresses (API.md §2).
  fastify.addHook('preParsing', async request => {
    const address = addressOf(request.raw)
    // A service that no route serves fell through to the content routes: it is not the content it was called on.
    const unknownService = address.service !== null && request.routeOptions.url?.startsWith('/@') !== true
    if (address.outsideSite || unknownService) throw NotFound(request.absoluteUrl(address.originalUrl))
    if (request.routeOptions.config?.binary === true || address.viaApiSegment) return
    if (!acceptsJson(request.headers.accept)) throw NotAcceptable()
  })
}, { name: 'http' })
