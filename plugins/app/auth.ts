import jwt from '@fastify/jwt'
import type { FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { randomUUID } from 'node:crypto'
import { Unauthorized } from '../../core/errors.js'
import type { Principal } from '../../core/security/roles.js'
import { DeviceCookies } from '../../core/security/device-cookies.js'
import { Sessions, tokenSecret, type TokenSubject } from '../../core/security/sessions.js'
import { isCanonicalToken, sessionClaims, type TokenClaims } from '../../core/security/token-form.js'
import { Users } from '../../core/security/users.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** Logins, the principals of tokens, revocation. */
    sessions: Sessions
    users: Users
    /** Signs a token for a user. */
    issueToken: (subject: TokenSubject) => string
  }
  interface FastifyRequest {
    /** The authenticated caller, or anonymous (set by plugins/app/http.ts, then here). */
    principal: Principal
    /** The claims of the Bearer token the caller sent, once verified: its session (`jti`), user and expiry. */
    token: TokenClaims | null
  }
}

/**
 * Token authentication: a hook that turns a Bearer token into
 * `request.principal`. An expired token fails ANY request with 400
 * ExpiredSignatureError (the contract's rule); a token that is invalid, not
 * spelled as this service spells it, carries claims this service does not
 * write, was revoked, names an unknown user or was issued for an earlier
 * record of its user fails with 401. The routes that log in and out are plugins/routes/login.ts.
 */
export default fp(async fastify => {
  const { JWT_TTL, JWT_SECRET, LOGIN_MAX_FAILURES, LOGIN_MAX_FAILURES_PER_IP, LOGIN_THROTTLE_WINDOW, LOGIN_DEVICE_COOKIE_TTL } = fastify.config
  const secret = await tokenSecret(fastify.db, JWT_SECRET)
  await fastify.register(jwt, {
    secret,
    // @fastify/jwt reads a number as seconds.
    sign: { algorithm: 'HS256', expiresIn: JWT_TTL },
    verify: { algorithms: ['HS256'] }
  })
  const sessions = new Sessions(fastify.db, { perUser: LOGIN_MAX_FAILURES, perAddress: LOGIN_MAX_FAILURES_PER_IP, windowSeconds: LOGIN_THROTTLE_WINDOW },
    new DeviceCookies(secret, LOGIN_DEVICE_COOKIE_TTL))
  fastify.decorate('sessions', sessions)
  fastify.caches.set('principals', () => sessions.principalFigures())
  const users = new Users(fastify.db)
  users.onChange(id => { sessions.userChanged(id) })
  fastify.decorate('users', users)
  // `jti` names the session: revocation ends it, whatever text carries it. A
  // new one for each token, so that a token renewed within the second it was
  // issued is a new session, not the one its renewal revoked.
  fastify.decorate('issueToken', (user: TokenSubject): string =>
    fastify.jwt.sign({ sub: user.id, fullname: user.fullname ?? null, token_key: user.token_key, jti: randomUUID() }))

  /**
   * The token of a Bearer Authorization header; null without one, or with
   * another scheme (Basic): not ours to judge. The scheme is matched in any
   * case (RFC 9110 §11.1); the token is taken as sent, so that every other
   * spelling of it fails verification.
   */
  function bearerToken (request: FastifyRequest): string | null {
    const { authorization } = request.headers
    if (authorization === undefined) return null
    // Node keeps the first of several Authorization headers and drops the rest;
    // a proxy in front may have judged another one. Two credentials are none.
    if (typeof authorization !== 'string' || countHeader(request.raw.rawHeaders, 'authorization') > 1) {
      throw Unauthorized('A request carries one Authorization header at most.')
    }
    const [scheme, ...credentials] = authorization.trim().split(/\s+/)
    if (scheme.toLowerCase() !== 'bearer') return null
    if (credentials.length !== 1) throw Unauthorized('The Authorization header must be "Bearer <token>".')
    return credentials[0]
  }

  /** The claims of a token this service signed, in its one spelling, with claims it writes: else 401 (400 when expired). */
  function verifiedClaims (token: string): TokenClaims {
    if (!isCanonicalToken(token)) throw Unauthorized('The authentication token is invalid.')
    let payload: Record<string, unknown>
    try {
      payload = fastify.jwt.verify(token)
    } catch (err) {
      if ((err as { code?: string }).code !== 'FAST_JWT_EXPIRED') throw Unauthorized('The authentication token is invalid.')
      // fast-jwt checks the expiry after the signature: the token is ours, and
      // its claims decide between expired (400) and not ours to have written (401).
      payload = fastify.jwt.decode(token)!
    }
    return sessionClaims(payload, JWT_TTL)
  }

  fastify.addHook('onRequest', async request => {
    const token = bearerToken(request)
    if (token === null) return
    const known = sessions.known(token)
    if (known !== undefined) {
      request.principal = known.principal
      request.token = known.claims
      return
    }
    const claims = verifiedClaims(token)
    request.principal = await sessions.principal(token, claims)
    request.token = claims
  })
}, { name: 'auth', dependencies: ['db', 'http', 'caches'] })

function countHeader (rawHeaders: string[], name: string): number {
  let count = 0
  for (let i = 0; i < rawHeaders.length; i += 2) if (rawHeaders[i].toLowerCase() === name) count++
  return count
}
