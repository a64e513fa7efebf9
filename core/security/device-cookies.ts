import { createHmac, hkdfSync, randomBytes, timingSafeEqual } from 'node:crypto'

/** The user a device cookie is issued for: its id and the key of its current record. */
export interface DeviceHolder { id: string, token_key: string }

/** A device cookie to send with `Set-Cookie` (the web layer adds the attributes). */
export interface DeviceCookie { name: string, value: string, maxAgeSeconds: number }

const NAME_PREFIX = 'talks_device_'
// `<expiry in seconds>.<nonce>.<MAC>`, each in the one spelling `issue` writes.
const VALUE = /^(\d{1,12})\.([A-Za-z0-9_-]{22})\.([A-Za-z0-9_-]{43})$/

/**
 * Device cookies (OWASP, "Slow Down Online Guessing Attacks with Device Cookies"): a browser
 * that logged in as a user gets a cookie proving it, and its later login attempts as that user
 * spend its own budget instead of the budgets every unknown client shares
 * (core/security/sessions.ts `login`).
 *
 * A cookie is `<expiry>.<nonce>.<MAC>`, the MAC an HMAC-SHA256 over the user id, the user's
 * record key, the expiry and the nonce. Its key is derived from the token secret for this one
 * purpose (HKDF), so a device cookie is never a valid token signature and a token never a valid
 * device cookie; and the record key ends every device cookie of a user whose password changed or
 * who was re-created. Each user has its own cookie name (a MAC of its id), so that one browser
 * can be a known device of several users without one cookie replacing another.
 */
export class DeviceCookies {
  private readonly key: Buffer

  constructor (tokenSecret: string, private readonly lifetimeSeconds: number) {
    this.key = Buffer.from(hkdfSync('sha256', tokenSecret, 'plone-talks-service', 'login device cookie', 32))
  }

  /** A new cookie for a device the user just logged in from. */
  issue (user: DeviceHolder, now: Date): DeviceCookie {
    const expires = Math.floor(now.getTime() / 1000) + this.lifetimeSeconds
    const nonce = randomBytes(16).toString('base64url')
    return { name: this.nameFor(user.id), value: `${expires}.${nonce}.${this.mac('device', user.id, user.token_key, expires, nonce)}`, maxAgeSeconds: this.lifetimeSeconds }
  }

  /**
   * The device (its nonce) of a valid, unexpired cookie for this user among those the `Cookie`
   * header carries, or undefined. Every cookie of the user's name counts: a cookie of the same
   * name set for a parent domain cannot hide the one this service set.
   */
  deviceOf (user: DeviceHolder, cookieHeader: string | undefined, now: Date): string | undefined {
    const name = this.nameFor(user.id)
    for (const value of cookieValues(cookieHeader ?? '', name)) {
      const parts = VALUE.exec(value)
      if (parts === null) continue
      const [, expires, nonce, mac] = parts
      if (Number(expires) * 1000 <= now.getTime()) continue
      if (sameText(mac, this.mac('device', user.id, user.token_key, Number(expires), nonce))) return nonce
    }
    return undefined
  }

  private nameFor (userId: string): string {
    return NAME_PREFIX + this.mac('name', userId).slice(0, 16)
  }

  // JSON keeps the fields apart: no two field lists give the same text.
  private mac (...fields: Array<string | number>): string {
    return createHmac('sha256', this.key).update(JSON.stringify(fields)).digest('base64url')
  }
}

/** The values of every cookie called `name` in a `Cookie` header (RFC 6265 §5.4). */
function cookieValues (header: string, name: string): string[] {
  const values: string[] = []
  for (const pair of header.split(';')) {
    const equals = pair.indexOf('=')
    if (equals !== -1 && pair.slice(0, equals).trim() === name) values.push(pair.slice(equals + 1).trim())
  }
  return values
}

function sameText (a: string, b: string): boolean {
  return a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b))
}
