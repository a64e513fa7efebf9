import { isIPv6 } from 'node:net'

/**
 * What may stand before a path in the URLs the service writes (`@id`s,
 * `Location`, batching links): the one check of a `Host` header, of
 * `X-Forwarded-Host`, of a virtual-hosting path's host and of PUBLIC_URL.
 */

/**
 * RFC 3986 §3.2.2 reg-name (an IPv4 address is one too): unreserved
 * characters and sub-delimiters, without percent-encodings. Those the RFC
 * allows, but a browser decodes them before it reads the host (WHATWG URL),
 * and `exa%20mple.org` decodes to no host at all: an `@id` holding one could
 * not be followed.
 */
const REG_NAME = /^[A-Za-z0-9._~!$&'()*+,;=-]+$/
/** A host (bracketed or not, split from its port at the last colon outside brackets) and an optional port. */
const HOST_AND_PORT = /^(\[[^\]]*\]|[^:[\]]*)(?::(\d{1,5}))?$/

/**
 * RFC 3986 `host [ ":" port ]` (§3.2.2, §3.2.3): a registered name or IPv4
 * address, or an IPv6 address in brackets; a port of one to five digits, at
 * most 65535. Not an empty host or port (no URL the service writes could hold
 * one), a percent-encoding (above), RFC 3986's IPvFuture or RFC 6874's zone
 * identifiers, which no client addresses this service by.
 */
export function isHostPort (text: string): boolean {
  const match = HOST_AND_PORT.exec(text)
  if (match === null) return false
  const [, host, port] = match
  if (port !== undefined && Number(port) > 65535) return false
  return host.startsWith('[') ? !host.includes('%') && isIPv6(host.slice(1, -1)) : REG_NAME.test(host)
}

/** `http(s)://host[:port]` of a configured public URL (a trailing slash dropped), or null when it is not one. */
export function publicOrigin (url: string): string | null {
  const match = /^(https?):\/\/([^/?#]*)\/?$/i.exec(url)
  return match !== null && isHostPort(match[2]) ? `${match[1].toLowerCase()}://${match[2]}` : null
}
