import type { IncomingMessage } from 'node:http'

/**
 * What the URL rewriting learned about a request, kept on the raw request:
 * Plone addresses services relative to content (`/talks/a/@workflow/publish`)
 * while Fastify routes by fixed paths, so the content part of the path is cut
 * off here and the service is routed as `/@workflow/publish`.
 */
export interface AddressInfo {
  /** Path of the context object below the site root: `/` or `/talks/a`. */
  contextPath: string
  /** The service segment (`@search`, `@@download`), or null when the path addresses content. */
  service: string | null
  /** The request came through the `++api++` segment: always JSON. */
  viaApiSegment: boolean
  /** The path was not below SITE_PATH, or names nothing that can exist (a segment with NUL, or not valid percent-encoding). */
  outsideSite: boolean
  /** The URL as the client sent it (for 404 messages and batching links). */
  originalUrl: string
}

const ADDRESS = Symbol('address')
type Addressed = IncomingMessage & { [ADDRESS]?: AddressInfo }

export function addressOf (raw: IncomingMessage): AddressInfo {
  return (raw as Addressed)[ADDRESS] ?? { contextPath: '/', service: null, viaApiSegment: false, outsideSite: false, originalUrl: raw.url ?? '/' }
}

/** A path segment decoded, or null when it is not valid percent-encoded UTF-8. */
function decodeSegment (segment: string): string | null {
  try {
    return decodeURIComponent(segment)
  } catch {
    return null
  }
}

/** Builds Fastify's `rewriteUrl` for a site mounted at `sitePath`. */
export function createUrlRewriter (sitePath: string): (raw: IncomingMessage) => string {
  return raw => {
    const originalUrl = raw.url ?? '/'
    const queryAt = originalUrl.indexOf('?')
    let path = queryAt < 0 ? originalUrl : originalUrl.slice(0, queryAt)
    const query = queryAt < 0 ? '' : originalUrl.slice(queryAt)
    let outsideSite = false
    if (sitePath !== '') {
      if (path === sitePath || path.startsWith(sitePath + '/')) path = path.slice(sitePath.length)
      else outsideSite = true
    }
    const segments = path.split('/').filter(s => s !== '')
    const viaApiSegment = segments.includes('++api++')
    const kept = segments.filter(s => s !== '++api++')
    const serviceAt = kept.findIndex(s => s.startsWith('@'))
    const contentSegments = serviceAt < 0 ? kept : kept.slice(0, serviceAt)
    const decoded = kept.map(decodeSegment)
    const malformed = decoded.includes(null)
    // No content id or service name holds NUL (nor could PostgreSQL store one): such a path names nothing.
    if (malformed || decoded.some(s => s?.includes('\0') === true)) outsideSite = true
    const contextPath = malformed ? '/' : '/' + decoded.slice(0, contentSegments.length).join('/')
    const service = serviceAt < 0 ? null : kept[serviceAt]
    ;(raw as Addressed)[ADDRESS] = { contextPath, service, viaApiSegment, outsideSite, originalUrl }
    // Routed to the site root, so that the 404 passes every hook (the router would refuse the segment itself).
    if (malformed) return '/' + query
    const routed = serviceAt < 0 ? '/' + contentSegments.join('/') : '/' + kept.slice(serviceAt).join('/')
    return routed + query
  }
}
