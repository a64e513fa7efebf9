import jwt from '@fastify/jwt'
import fp from 'fastify-plugin'
import { randomUUID } from 'node:crypto'
import { ExpiredSignature, Unauthorized } from '../../core/errors.js'
import type { Principal } from '../../core/security/roles.js'
import { DeviceCookies } from '../../core/security/device-cookies.js'
import { Sessions, tokenSecret, type TokenClaims, type TokenSubject } from '../../core/security/sessions.js'
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
    /** The Bearer token the caller sent, once verified. */
    token: string | null
  }
}

/**
 * Token authentication: a hook that turns a Bearer token into
 * `request.principal`. An expired token fails ANY request with 400
 * ExpiredSignatureError (the contract's rule); a token that is invalid,
 * revoked, names an unknown user or was issued for an earlier record of its
 * user fails with 401. The routes that log in and out are plugins/routes/login.ts.
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
  const users = new Users(fastify.db)
  users.onChange(id => { sessions.userChanged(id) })
  fastify.decorate('users', users)
  // `jti` makes every token unique: without it a token renewed within the
  // second it was issued is the same string as the old one, and revoking the
  // old one would revoke the new one too.
  fastify.decorate('issueToken', (user: TokenSubject): string =>
    fastify.jwt.sign({ sub: user.id, fullname: user.fullname ?? null, token_key: user.token_key, jti: randomUUID() }))

  fastify.addHook('onRequest', async request => {
    const [scheme, ...credentials] = (request.headers.authorization ?? '').trim().split(/\s+/)
    if (scheme.toLowerCase() !== 'bearer') return // no header, or another scheme (Basic): not ours to judge
    if (credentials.length !== 1) throw Unauthorized('The Authorization header must be "Bearer <token>".')
    const token = credentials[0]
    const known = sessions.known(token)
    if (known !== undefined) {
      request.principal = known
      request.token = token
      return
    }
    let claims: TokenClaims
    try {
      claims = fastify.jwt.verify<TokenClaims>(token)
    } catch (err) {
      if ((err as { code?: string }).code === 'FAST_JWT_EXPIRED') throw ExpiredSignature()
      throw Unauthorized('The authentication token is invalid.')
    }
    request.principal = await sessions.principal(token, claims)
    request.token = token
  })
}, { name: 'auth', dependencies: ['db', 'http'] })
