import type { FastifyRequest } from 'fastify'
import { isIPv6 } from 'node:net'
import { isHostPort } from '../../core/content/origin.js'
import { BadRequest } from '../../core/errors.js'

/** How many Host header lines a request carries: Node keeps only the first of several in `headers`. */
function hostLines (rawHeaders: string[]): number {
  let lines = 0
  for (let i = 0; i < rawHeaders.length; i += 2) if (rawHeaders[i].toLowerCase() === 'host') lines++
  return lines
}

/**
 * Refuses (400) a request whose address cannot go into a URL: more than one
 * Host header, or one that is not a valid host[:port] (RFC 9112 §3.2 asks
 * for both); and, where TRUST_PROXY lets them address the answer (Fastify's
 * `request.host` and `request.protocol` apply the trust), an
 * X-Forwarded-Host that is not one either, or an X-Forwarded-Proto that is
 * neither http nor https. Checked for every request, PUBLIC_URL or not: a
 * request that means two hosts at once is malformed whatever answers it.
 */
export function assertAddressable (request: FastifyRequest): void {
  if (hostLines(request.raw.rawHeaders) > 1) throw BadRequest('The request has more than one Host header.')
  const host = request.raw.headers.host
  if (host !== undefined && !isHostPort(host)) throw BadRequest('The Host header is not a host name or IP address with an optional port (RFC 3986).')
  if (request.host !== (host ?? '') && !isHostPort(request.host)) throw BadRequest('X-Forwarded-Host is not a host name or IP address with an optional port (RFC 3986).')
  if (request.protocol !== 'http' && request.protocol !== 'https') throw BadRequest('X-Forwarded-Proto is neither http nor https.')
}

/**
 * `scheme://host[:port]` as the request addresses the service. A request
 * without a Host header (HTTP/1.0 allows it) is addressed by the address it
 * came in on, as a WSGI server's SERVER_NAME and SERVER_PORT would give it.
 */
export function requestOrigin (request: FastifyRequest): string {
  if (request.host !== '') return `${request.protocol}://${request.host}`
  const address = request.socket.localAddress ?? '127.0.0.1'
  return `${request.protocol}://${isIPv6(address) ? `[${address}]` : address}:${request.socket.localPort ?? 80}`
}
