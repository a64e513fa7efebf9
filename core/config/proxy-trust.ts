import { isIP } from 'node:net'

/**
 * Which peers may speak for the client through `X-Forwarded-For`, `-Proto` and `-Host`, in the
 * forms Fastify's `trustProxy` takes: none, all, the peer and the hops before it up to a count,
 * or the peers at these addresses and ranges.
 */
export type ProxyTrust = boolean | string[] | ((address: string, hop: number) => boolean)

// The named ranges @fastify/proxy-addr knows.
const NAMED_RANGES = new Set(['loopback', 'linklocal', 'uniquelocal'])

function isAddressOrRange (entry: string): boolean {
  if (NAMED_RANGES.has(entry)) return true
  const [address, prefix, ...rest] = entry.split('/')
  const family = isIP(address)
  if (family === 0 || rest.length > 0) return false
  return prefix === undefined || (/^\d{1,3}$/.test(prefix) && Number(prefix) <= (family === 4 ? 32 : 128))
}

/**
 * TRUST_PROXY (docs/configuration.md) as Fastify's `trustProxy`: `false`, `true`, a hop count, or
 * a comma-separated list of proxy addresses, CIDR ranges and the names `loopback`, `linklocal`,
 * `uniquelocal`; undefined for anything else (the configuration refuses it).
 */
export function proxyTrust (setting: string): ProxyTrust | undefined {
  const value = setting.trim().toLowerCase()
  if (value === 'false') return false
  if (value === 'true') return true
  if (/^\d{1,3}$/.test(value)) {
    const hops = Number(value)
    // Fastify ignores a bare number (it cannot tell a proxy from a client that sends the
    // header itself); a count is the operator's statement that every request comes through
    // that many proxies, so the peer and the hops before it up to the count are trusted.
    return hops === 0 ? false : (_address, hop) => hop < hops
  }
  const entries = value.split(',').map(entry => entry.trim())
  return entries.every(isAddressOrRange) ? entries : undefined
}
