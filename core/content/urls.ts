/** How content is addressed on the wire: absolute URLs and dates as plone.restapi writes them. */

/** Joins a content path to the site's base URL: `/` is the site root itself. */
export function urlOf (baseUrl: string, path: string): string {
  // `@` names services (`/@users/jane`) and is allowed in a path segment (RFC 3986).
  return path === '/' ? baseUrl : baseUrl + path.split('/').map(s => encodeURIComponent(s).replace(/%40/g, '@')).join('/')
}

/** ISO 8601 with an explicit offset and no milliseconds, as plone.restapi writes dates. */
export function isoDate (value: Date | string | null | undefined): string | null {
  if (value === null || value === undefined) return null
  const date = value instanceof Date ? value : new Date(value)
  if (Number.isNaN(date.getTime())) return null
  return date.toISOString().replace(/\.\d{3}Z$/, '+00:00')
}
