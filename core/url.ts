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
  /** The path was not below SITE_PATH. */
  outsideSite: boolean
  /** The URL as the client sent it (for 404 messages and batching links). */
  originalUrl: string
}

const ADDRESS = Symbol('address')
type Addressed = IncomingMessage & { [ADDRESS]?: AddressInfo }

export function addressOf (raw: IncomingMessage): AddressInfo {
  return (raw as Addressed)[ADDRESS] ?? { contextPath: '/', service: null, viaApiSegment: false, outsideSite: false, originalUrl: raw.url ?? '/' }
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
    let contextPath = '/'
    try {
      contextPath = '/' + contentSegments.map(s => decodeURIComponent(s)).join('/')
    } catch {
      outsideSite = true // undecodable path: answered as not found
    }
    const service = serviceAt < 0 ? null : kept[serviceAt]
    ;(raw as Addressed)[ADDRESS] = { contextPath, service, viaApiSegment, outsideSite, originalUrl }
    const routed = serviceAt < 0 ? '/' + contentSegments.join('/') : '/' + kept.slice(serviceAt).join('/')
    return routed + query
  }
}

/** Joins a content path to the site's base URL: `/` is the site root itself. */
export function urlOf (baseUrl: string, path: string): string {
  // `@` names services (`/@users/jane`) and is allowed in a path segment (RFC 3986).
  return path === '/' ? baseUrl : baseUrl + path.split('/').map(s => encodeURIComponent(s).replace(/%40/g, '@')).join('/')
}

/** Parent path of a content path (`/` for top-level objects). */
export function parentPath (path: string): string {
  const at = path.lastIndexOf('/')
  return at <= 0 ? '/' : path.slice(0, at)
}

/** ISO 8601 with an explicit offset and no milliseconds, as plone.restapi writes dates. */
export function isoDate (value: Date | string | null | undefined): string | null {
  if (value === null || value === undefined) return null
  const date = value instanceof Date ? value : new Date(value)
  if (Number.isNaN(date.getTime())) return null
  return date.toISOString().replace(/\.\d{3}Z$/, '+00:00')
}
