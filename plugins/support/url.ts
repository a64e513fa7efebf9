import type { IncomingMessage } from 'node:http'
import { isHostPort } from '../../core/content/origin.js'

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
  /** The URL as the client sees it, below its origin (for 404 messages and batching links); under virtual hosting, the virtual one. */
  originalUrl: string
  /** Zope virtual hosting: the origin and site path that URLs are built from, as the path gave them. */
  virtual?: { origin: string, sitePath: string }
}

/** Views addressed by a plain last segment, as Plone traverses to them. */
const VIEWS_WITHOUT_AT = new Set(['ics_view'])

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

/** `<scheme>` of a virtual-hosting path; its `<host>:<port>` is checked as every host (core/content/origin.ts). */
const SCHEME = /^https?$/
const DEFAULT_PORT: Record<string, string> = { http: ':80', https: ':443' }

/**
 * Zope's virtual hosting, as Volto's proxy addresses the API:
 * `/VirtualHostBase/<scheme>/<host>:<port>/<physical path>/VirtualHostRoot/_vh_<x>/…/<path>`.
 * The physical part may hold `++api++` and must lead to the site (it may end
 * above it: then the site's own path follows in `<path>`); `_vh_` segments
 * prefix every URL. Returns the path to route (physical, from the server's
 * root) and the origin and site path URLs are built from, or null when the
 * path cannot name this site. The host only ever goes into URLs the answer
 * holds, never into an access decision (docs/api.md).
 */
export function virtualHost (path: string, sitePath: string): { path: string, viaApiSegment: boolean, virtualPath: string, origin: string, sitePath: string } | null {
  const segments = path.split('/').filter(s => s !== '')
  const [, scheme, hostPort] = segments
  if (scheme === undefined || hostPort === undefined || !SCHEME.test(scheme) || !isHostPort(hostPort)) return null
  const rootAt = segments.indexOf('VirtualHostRoot', 3)
  // Without VirtualHostRoot only the origin changes: the whole path is physical and virtual at once.
  let physical = rootAt < 0 ? [] : segments.slice(3, rootAt)
  let after = rootAt < 0 ? segments.slice(3) : segments.slice(rootAt + 1)
  const prefix: string[] = []
  while (after[0]?.startsWith('_vh_') === true) { prefix.push(after[0].slice(4)); after = after.slice(1) }
  const viaApiSegment = physical.includes('++api++')
  physical = physical.filter(s => s !== '++api++')
  const site = sitePath.split('/').filter(s => s !== '')
  if (physical.length > site.length || physical.some((s, i) => s !== site[i])) return null
  const port = DEFAULT_PORT[scheme] !== undefined && hostPort.endsWith(DEFAULT_PORT[scheme]) ? hostPort.slice(0, -DEFAULT_PORT[scheme].length) : hostPort
  const join = (parts: string[]): string => parts.length === 0 ? '' : '/' + parts.join('/')
  return {
    path: join([...physical, ...after]) || '/',
    viaApiSegment,
    virtualPath: join([...prefix, ...after]) || '/',
    origin: `${scheme}://${port}`,
    sitePath: join([...prefix, ...site.slice(physical.length)])
  }
}

/** Builds Fastify's `rewriteUrl` for a site mounted at `sitePath`. */
export function createUrlRewriter (sitePath: string): (raw: IncomingMessage) => string {
  return raw => {
    let originalUrl = raw.url ?? '/'
    const queryAt = originalUrl.indexOf('?')
    let path = queryAt < 0 ? originalUrl : originalUrl.slice(0, queryAt)
    const query = queryAt < 0 ? '' : originalUrl.slice(queryAt)
    let outsideSite = false
    let virtual: AddressInfo['virtual']
    let virtualApi = false
    if (path === '/VirtualHostBase' || path.startsWith('/VirtualHostBase/')) {
      const hosted = virtualHost(path, sitePath)
      if (hosted === null) outsideSite = true
      else {
        path = hosted.path
        virtualApi = hosted.viaApiSegment
        originalUrl = hosted.virtualPath + query
        virtual = { origin: hosted.origin, sitePath: hosted.sitePath }
      }
    }
    if (sitePath !== '') {
      if (path === sitePath || path.startsWith(sitePath + '/')) path = path.slice(sitePath.length)
      else outsideSite = true
    }
    const segments = path.split('/').filter(s => s !== '')
    const viaApiSegment = virtualApi || segments.includes('++api++')
    const kept = segments.filter(s => s !== '++api++')
    // Views Plone's clients address without `@@` (Volto links an event's `ics_view`) are services when they end the path.
    if (kept.length > 0 && VIEWS_WITHOUT_AT.has(kept[kept.length - 1])) kept[kept.length - 1] = `@@${kept[kept.length - 1]}`
    const serviceAt = kept.findIndex(s => s.startsWith('@'))
    const contentSegments = serviceAt < 0 ? kept : kept.slice(0, serviceAt)
    const decoded = kept.map(decodeSegment)
    const malformed = decoded.includes(null)
    // No content id or service name holds NUL (nor could PostgreSQL store one): such a path names nothing.
    if (malformed || decoded.some(s => s?.includes('\0') === true)) outsideSite = true
    const contextPath = malformed ? '/' : '/' + decoded.slice(0, contentSegments.length).join('/')
    const service = serviceAt < 0 ? null : kept[serviceAt]
    ;(raw as Addressed)[ADDRESS] = { contextPath, service, viaApiSegment, outsideSite, originalUrl, ...(virtual !== undefined ? { virtual } : {}) }
    // Routed to the site root, so that the 404 passes every hook (the router would refuse the segment itself).
    if (malformed) return '/' + query
    const routed = serviceAt < 0 ? '/' + contentSegments.join('/') : '/' + kept.slice(serviceAt).join('/')
    return routed + query
  }
}

const BEYOND_ASCII = /[\u0080-\uffff]/

/**
 * The query of a request URL, as `new URL(url, base).searchParams` reads it
 * (what follows `?`, up to a `#`), without parsing the rest of the URL: every
 * GET of an object and every search asks.
 */
export function queryOf (url: string): URLSearchParams {
  const hash = url.indexOf('#')
  const end = hash < 0 ? url.length : hash
  const start = url.indexOf('?')
  // No `?`, or only the fragment's.
  if (start < 0 || start > end) return new URLSearchParams()
  const query = url.slice(start + 1, end)
  // Characters beyond ASCII next to a broken escape (`%aaé`) are decoded otherwise by the constructor than by the URL parser: the parser then.
  if (BEYOND_ASCII.test(query)) return new URL(url, 'http://x').searchParams
  // The constructor drops a leading `?` of its text, which the URL parser keeps as a name's; an empty `&` part is skipped by both.
  return new URLSearchParams(query.startsWith('?') ? `&${query}` : query)
}
