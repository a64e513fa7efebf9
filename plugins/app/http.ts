import type { FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { publicOrigin } from '../../core/content/origin.js'
import { BadRequest, NotAcceptable, NotFound } from '../../core/errors.js'
import { ANONYMOUS } from '../../core/security/roles.js'
import { assertPlainName } from '../../core/security/untrusted-input.js'
import { assertAddressable, requestOrigin } from '../support/origin.js'
import { addressOf } from '../support/url.js'

declare module 'fastify' {
  interface FastifyRequest {
    /** `{base_url}` as this client sees it. */
    readonly baseUrl: string
    /** Path of the content object the request addresses (`/` = site root). */
    readonly contextPath: string
    absoluteUrl: (url: string) => string
  }
  interface FastifyContextConfig {
    /** The route answers with something other than JSON (downloads, the OpenAPI page). */
    binary?: boolean
  }
}

/**
 * What no route should meet in a query string, refused once for all of them
 * (Fastify builds `request.query` from every request's parameters):
 * parameter names that reach a prototype, in any part of Zope's
 * `name.key:flag` syntax, and NUL, which PostgreSQL cannot store. Routes that
 * parse their own query (core/query/zope.ts) check again, for their own sake.
 */
function checkQueryString (query: string): void {
  if (/%00/.test(query)) throw BadRequest('The query string contains a NUL character (%00).')
  for (const name of new URLSearchParams(query).keys()) {
    for (const part of name.split(/[.:]/)) assertPlainName(part, name)
  }
}

/** Accept headers that a JSON answer satisfies. */
function acceptsJson (accept: string | undefined): boolean {
  if (accept === undefined || accept.trim() === '') return true
  return accept.split(',').some(part => {
    const type = part.split(';')[0].trim().toLowerCase()
    return type === '*/*' || type === 'application/*' || type === 'application/json' || type.endsWith('+json')
  })
}

/**
 * Addresses and negotiation (docs/api.md, "Addresses"): `{base_url}` as the client sees it,
 * the context path, JSON for `Accept: application/json`, a missing Accept,
 * `*\/*` and anything under `++api++`; 406 for a client that accepts only
 * something else.
 */
export default fp(async fastify => {
  const sitePath = fastify.config.SITE_PATH
  // A reference type cannot be a request decorator's default; the onRequest hook sets it.
  fastify.decorateRequest('principal', null as unknown as typeof ANONYMOUS)
  fastify.decorateRequest('token', null)
  // Where URLs point (docs/api.md, "Addresses"): a virtual-hosting path names the origin and the
  // site's path (plugins/support/url.ts); else PUBLIC_URL, when set; else the request's own address.
  const configuredOrigin = fastify.config.PUBLIC_URL === '' ? null : publicOrigin(fastify.config.PUBLIC_URL)
  const originOf = (request: FastifyRequest): string => addressOf(request.raw).virtual?.origin ?? configuredOrigin ?? requestOrigin(request)
  fastify.decorateRequest('absoluteUrl', function (url: string) {
    return `${originOf(this)}${url}`
  })
  fastify.decorateRequest('baseUrl', {
    getter () {
      const { virtual } = addressOf(this.raw)
      return virtual !== undefined ? virtual.origin + virtual.sitePath : `${originOf(this)}${sitePath}`
    }
  })
  fastify.decorateRequest('contextPath', {
    getter () { return addressOf(this.raw).contextPath }
  })

  fastify.addHook('onRequest', async (request, reply) => {
    request.principal = ANONYMOUS
    // The id that a 500's message asks the client to quote, on every answer.
    void reply.header('x-request-id', request.id)
    // Before anything could write the request's host into a URL (and before authentication: it is malformed whoever sends it).
    assertAddressable(request)
  })

  // After authentication (an onRequest hook), so that an expired or invalid
  // token is reported whatever the request addresses (docs/api.md, "Decisions").
  fastify.addHook('preParsing', async request => {
    const address = addressOf(request.raw)
    const queryAt = address.originalUrl.indexOf('?')
    if (queryAt >= 0) checkQueryString(address.originalUrl.slice(queryAt + 1))
    // A service that no route serves fell through to the content routes: it is not the content it was called on.
    const unknownService = address.service !== null && request.routeOptions.url?.startsWith('/@') !== true
    if (address.outsideSite || unknownService) throw NotFound(request.absoluteUrl(address.originalUrl))
    if (request.routeOptions.config?.binary === true || address.viaApiSegment) return
    if (!acceptsJson(request.headers.accept)) throw NotAcceptable()
  })
}, { name: 'http' })
