/** How content is addressed on the wire: absolute URLs and dates as plone.restapi writes them. */

/** Joins a content path to the site's base URL: `/` is the site root itself. */
export function urlOf (baseUrl: string, path: string): string {
  if (path === '/') return baseUrl
  // Nearly every path is of characters encodeURIComponent keeps: then it is its own encoding (every summary of a page asks).
  if (KEPT_AS_THEY_ARE.test(path)) return baseUrl + path
  // `@` names services (`/@users/jane`) and is allowed in a path segment (RFC 3986).
  return baseUrl + path.split('/').map(s => encodeURIComponent(s).replace(/%40/g, '@')).join('/')
}

/** A path whose every character urlOf would write as it is: what encodeURIComponent keeps, `@`, and the `/` between segments. */
const KEPT_AS_THEY_ARE = /^[A-Za-z0-9\-_.!~*'()@/]*$/

/** ISO 8601 with an explicit offset and no milliseconds, as plone.restapi writes dates. */
export function isoDate (value: Date | string | null | undefined): string | null {
  if (value === null || value === undefined) return null
  const date = value instanceof Date ? value : new Date(value)
  if (Number.isNaN(date.getTime())) return null
  const iso = date.toISOString()
  // Years 0 to 9999 (`YYYY-MM-DDTHH:mm:ss.sssZ`) are cut where they end; a year beyond has a sign and more digits.
  return iso.length === 24 ? `${iso.slice(0, 19)}+00:00` : iso.replace(/\.\d{3}Z$/, '+00:00')
}
