/**
 * plone.exportimport's format as this service reads and writes it: UIDs
 * (Plone's 32 hexadecimal digits, the service's UUIDs), links by UID in
 * blocks and rich text, and JSON written so that the same content gives the
 * same bytes (keys sorted, two spaces, a newline at the end).
 */

/** The folder and parent UID plone.exportimport gives the site root. */
export const SITE_ROOT_UID = 'plone_site_root'

export const isObject = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value)

/** A UID as the service stores it (a UUID), from Plone's 32 hexadecimal digits or a UUID; null when it is neither. */
export function dashedUid (uid: string): string | null {
  const hex = uid.toLowerCase().replace(/^([0-9a-f]{8})-([0-9a-f]{4})-([0-9a-f]{4})-([0-9a-f]{4})-([0-9a-f]{12})$/, '$1$2$3$4$5')
  return /^[0-9a-f]{32}$/.test(hex) ? `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}` : null
}

/** A UID as Plone writes it. */
export const ploneUid = (uid: string): string => uid.replace(/-/g, '')

/**
 * A value with its `resolveuid/<uid>` links in the service's spelling
 * (core/content/links.ts keeps links by UUID), so that blocks and rich text
 * keep linking by UID; `ploneLinks` turns them back.
 */
export const uidLinksDashed = (value: unknown): unknown => mapStrings(value, text => text.replace(/(resolveuid\/)([0-9a-fA-F]{32})(?![0-9a-fA-F])/g, (_, prefix: string, uid: string) => prefix + dashedUid(uid)!))
export const uidLinksPlone = (value: unknown): unknown => mapStrings(value, text => text.replace(/(resolveuid\/)([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})/g, (_, prefix: string, uid: string) => prefix + ploneUid(uid).toLowerCase()))

/** A copy of a JSON value (trusted to be shallow: checked on reading, or the service's own) with every string mapped. */
function mapStrings (value: unknown, map: (text: string) => string): unknown {
  if (typeof value === 'string') return value.includes('resolveuid/') ? map(value) : value
  if (Array.isArray(value)) return value.map(item => mapStrings(item, map))
  if (isObject(value)) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, mapStrings(v, map)]))
  return value
}

/** JSON with every object's keys sorted: a second export of the same content is byte-equal. */
export function stableJson (value: unknown): string {
  return `${JSON.stringify(value, (_key, v: unknown) => isObject(v) ? Object.fromEntries(Object.keys(v).sort().map(k => [k, v[k]])) : v, 2)}\n`
}
