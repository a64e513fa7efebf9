import { createHash, randomBytes } from 'node:crypto'
import type { Db } from '../db/db.js'
import type { CacheFigures } from '../kept.js'
import { TooManyRequests, Unauthorized, type ApiError } from '../errors.js'
import { dummyHash } from './passwords.js'
import { verifyStoredPassword } from './legacy-hashes.js'
import type { Principal } from './roles.js'
import type { TokenClaims } from './token-form.js'
import { PrincipalCache, TOKEN_REVOKED, type KnownSession } from './principal-cache.js'
import { type DeviceCookie, type DeviceCookies } from './device-cookies.js'
import { type Budget, FailureCounts } from './throttle.js'

/** Who a token is issued for. */
export interface TokenSubject { id: string, fullname: string | null, token_key: string }

export interface ThrottleLimits {
  /** Failed logins in the window per account (or unknown login string) from unknown clients, and per known device. */
  perUser: number
  /** Failed logins in the window per client address from unknown clients. */
  perAddress: number
  windowSeconds: number
}

/** A login attempt as it reached the service. */
export interface LoginAttempt {
  login: string
  password: string
  /** The client's address (with TRUST_PROXY, as the trusted proxies reported it). */
  address: string
  /** The request's `Cookie` header: a device cookie there makes the client a known device. */
  cookieHeader?: string
}

/** A successful login: who logged in, and the device cookie to give the client. */
export interface LoggedIn { subject: TokenSubject, deviceCookie: DeviceCookie }

/**
 * Logins and the sessions they open: checking a password (throttled), the
 * principal a verified token stands for, and revocation. Signing and
 * verifying tokens is the web layer's (plugins/app/auth.ts): this module
 * trusts claims it is given only once their signature was checked.
 */
export class Sessions {
  private readonly failures: FailureCounts
  private readonly principals: PrincipalCache
  /** Logins since start, by outcome (throttled: refused before the password was checked), for the metrics. */
  readonly logins = { succeeded: 0, failed: 0, throttled: 0 }

  constructor (private readonly db: Db, private readonly limits: ThrottleLimits, private readonly devices: DeviceCookies) {
    this.failures = new FailureCounts(db, limits.windowSeconds * 1000)
    this.principals = new PrincipalCache(db.notifications)
  }

  /**
   * The user a login string and password name, with a new device cookie for the client; or 401
   * (one message for an unknown login and a wrong password, which take the same time); or 429
   * with the seconds to wait while the attempt's budget is spent, even with the right password.
   *
   * OWASP's device cookies (core/security/device-cookies.ts): an attempt carrying a valid device
   * cookie of the user it names spends only that device's budget (`perUser` failures). Any other
   * attempt spends the budgets every unknown client shares: its account's (`perUser`; the user's
   * name and e-mail address share one, an unknown login string has its own) and its address's
   * (`perAddress`). So an attacker who spends the account's or the address's budget throttles
   * unknown clients only, never the browsers the user logged in with.
   */
  async login ({ login, password, address, cookieHeader }: LoginAttempt, now = new Date()): Promise<LoggedIn> {
    const loginKey = login.toLowerCase()
    // User names and e-mail addresses share one namespace (core/security/users.ts),
    // so a login string names one user at most; the order only decides for
    // collisions created before that rule (the user name wins).
    const { rows } = await this.db.query<TokenSubject & { password_hash: string }>(
      'SELECT id, fullname, token_key, password_hash FROM users WHERE lower(id) = $1 OR lower(email) = $1 ORDER BY (lower(id) = $1) DESC LIMIT 1', [loginKey])
    const user = rows[0]
    const device = user === undefined ? undefined : this.devices.deviceOf(user, cookieHeader, now)
    // Prefixes keep the kinds of key apart; an unknown login string is kept as its hash,
    // so that a megabyte of login costs no more room than a name.
    const budgets: Budget[] = device !== undefined
      ? [{ key: `device:${device}`, limit: this.limits.perUser }]
      : [{ key: user !== undefined ? `user:${user.id}` : `unknown:${createHash('sha256').update(loginKey).digest('base64url')}`, limit: this.limits.perUser },
          { key: `address:${address}`, limit: this.limits.perAddress }]
    const reservation = await this.failures.reserve(budgets, now)
    if ('retryAfter' in reservation) {
      this.logins.throttled++
      throw TooManyRequests(reservation.retryAfter)
    }
    const { ok, rehashed } = await verifyStoredPassword(password, user?.password_hash ?? await dummyHash())
    // A hash brought from Plone (core/security/legacy-hashes.ts) gives way to the service's at its first success; the password is the same, so its tokens stay valid.
    if (user !== undefined && rehashed !== null) await this.db.query('UPDATE users SET password_hash = $2 WHERE id = $1 AND password_hash = $3', [user.id, rehashed, user.password_hash])
    // A failure keeps its reservation: it was counted before the check.
    if (user === undefined || !ok) {
      this.logins.failed++
      throw Unauthorized('Wrong login and/or password.')
    }
    this.logins.succeeded++
    await this.failures.refund(reservation)
    return { subject: { id: user.id, fullname: user.fullname, token_key: user.token_key }, deviceCookie: this.devices.issue(user, now) }
  }

  /**
   * The principal of a token whose signature and claims were checked
   * (core/security/token-form.ts) and that `known` did not know: 401 when it
   * names no user, was issued for an earlier record of its user (re-created,
   * or its password changed since), or its session was revoked; else kept for
   * `known` until the token expires.
   */
  async principal (token: string, claims: TokenClaims): Promise<Principal> {
    const generation = this.principals.generation
    // The user's groups and the roles they give, in the same statement (core/security/groups.ts).
    const { rows } = await this.db.query<{ id: string, fullname: string | null, roles: string[], groups: string[], group_roles: string[], current: boolean, revoked: boolean }>(
      `SELECT id, fullname, roles, token_key = $3 AS current, EXISTS (SELECT 1 FROM revoked_sessions WHERE jti = $2) AS revoked,
         ARRAY(SELECT group_id FROM group_members WHERE user_id = users.id ORDER BY group_id) AS groups,
         ARRAY(SELECT DISTINCT unnest(groups.roles) FROM group_members JOIN groups ON groups.id = group_id WHERE user_id = users.id) AS group_roles
       FROM users WHERE id = $1`, [claims.sub, claims.jti, claims.token_key])
    const user = rows[0]
    if (user === undefined) throw Unauthorized('The authentication token names an unknown user.')
    if (!user.current) throw Unauthorized('The authentication token was issued before its user was re-created or changed password. Log in again.')
    if (user.revoked) throw SessionEnded()
    const principal = { userId: user.id, fullname: user.fullname, roles: [...new Set([...user.roles, ...user.group_roles])], groups: user.groups }
    this.principals.set(token, { principal, claims }, generation)
    return principal
  }

  /**
   * The session of a token this process verified and resolved before,
   * unexpired and not revoked since: no signature check or query
   * (undefined: verify the token, then ask `principal`).
   */
  known (token: string): KnownSession | undefined {
    return this.principals.get(token)
  }

  /** The cache of verified tokens' principals: its entries and look-ups, for the metrics. */
  principalFigures (): CacheFigures {
    return this.principals.figures()
  }

  /** A user changed or went: the principals of its tokens are read anew (core/security/users.ts notifies other processes). */
  userChanged (userId: string): void {
    this.principals.dropUser(userId)
  }

  /** A group changed or went: every principal is read anew (core/security/groups.ts notifies other processes). */
  groupsChanged (): void {
    this.principals.dropAll()
  }

  /**
   * Ends a session (logout, renewal) — every token that carries its `jti` —
   * until its token would have expired anyway. 401 when it has ended already:
   * of two requests that end one session at once (a logout and a renewal, two
   * renewals), one does, so that a session never forks into two.
   */
  async revoke (claims: TokenClaims): Promise<void> {
    const revoked = await this.db.transaction(async tx => {
      const { rowCount } = await tx.query(`INSERT INTO revoked_sessions (jti, expires_at) VALUES ($1, to_timestamp($2))
        ON CONFLICT (jti) DO NOTHING`, [claims.jti, claims.exp])
      if (rowCount > 0) await this.db.notifications.notify(tx, TOKEN_REVOKED, claims.jti)
      return rowCount > 0
    })
    this.principals.dropSession(claims.jti)
    if (!revoked) throw SessionEnded()
    await this.db.query('DELETE FROM revoked_sessions WHERE expires_at < now()')
  }
}

const SessionEnded = (): ApiError => Unauthorized('The authentication token has been revoked (logged out).')

/** The secret tokens are signed with: the configured one, else one generated at first start and kept in the database. */
export async function tokenSecret (db: Db, configured: string): Promise<string> {
  if (configured !== '') return configured
  await db.query('INSERT INTO settings (key, value) VALUES (\'jwt_secret\', $1) ON CONFLICT (key) DO NOTHING',
    [JSON.stringify(randomBytes(48).toString('base64url'))])
  const { rows } = await db.query<{ value: string }>('SELECT value FROM settings WHERE key = \'jwt_secret\'')
  return rows[0].value
}
