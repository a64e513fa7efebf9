import jwt from '@fastify/jwt'
import fp from 'fastify-plugin'
import { createHash, randomBytes, randomUUID } from 'node:crypto'
import Type from 'typebox'
import { ExpiredSignature, TooManyRequests, Unauthorized } from '../../core/errors.js'
import { dummyHash, verifyPassword } from '../../core/passwords.js'
import { FailureThrottle } from '../../core/throttle.js'
import type { Principal } from '../../core/security.js'

interface TokenClaims { sub: string, fullname: string | null, exp: number, iat: number, jti: string }

const tokenHash = (token: string): string => createHash('sha256').update(token).digest('hex')

const TokenResponse = Type.Object({ token: Type.String({ description: 'JWT (HS256) with sub, fullname, iat, exp, jti' }) })
const errors = { 400: { $ref: 'Error#' }, 401: { $ref: 'Error#' }, 429: { $ref: 'Error#' } }

/** The JWT secret: JWT_SECRET, else one generated at first start and kept in the database. */
async function loadSecret (fastify: import('fastify').FastifyInstance): Promise<string> {
  if (fastify.config.JWT_SECRET !== '') return fastify.config.JWT_SECRET
  await fastify.db.query(`INSERT INTO settings (key, value) VALUES ('jwt_secret', $1) ON CONFLICT (key) DO NOTHING`,
    [JSON.stringify(randomBytes(48).toString('base64url'))])
  const { rows } = await fastify.db.query<{ value: string }>(`SELECT value FROM settings WHERE key = 'jwt_secret'`)
  return rows[0].value
}

/**
 * Token authentication (API.md §3): `@login`, `@login-renew`, `@logout`, and
 * the hook that turns a Bearer token into `request.principal`. An expired
 * token fails ANY request with 400 ExpiredSignatureError (the seed's rule);
 * a token that is invalid, revoked or names an unknown user fails with 401.
 */
export default fp(async fastify => {
  const { JWT_TTL, LOGIN_MAX_FAILURES, LOGIN_MAX_FAILURES_PER_IP, LOGIN_THROTTLE_WINDOW } = fastify.config
  await fastify.register(jwt, {
    secret: await loadSecret(fastify),
    // @fastify/jwt reads a number as seconds.
    sign: { algorithm: 'HS256', expiresIn: JWT_TTL },
    verify: { algorithms: ['HS256'] }
  })
  const byLogin = new FailureThrottle(LOGIN_MAX_FAILURES, LOGIN_THROTTLE_WINDOW * 1000)
  const byAddress = new FailureThrottle(LOGIN_MAX_FAILURES_PER_IP, LOGIN_THROTTLE_WINDOW * 1000)

  // `jti` makes every token unique: without it a token renewed within the
  // second it was issued is the same string as the old one, and revoking the
  // old one would revoke the new one too.
  const issue = (user: { id: string, fullname: string | null }): string =>
    fastify.jwt.sign({ sub: user.id, fullname: user.fullname ?? null, jti: randomUUID() })

  const revoke = async (token: string, exp: number): Promise<void> => {
    await fastify.db.query(`INSERT INTO revoked_tokens (token_hash, expires_at) VALUES ($1, to_timestamp($2))
      ON CONFLICT (token_hash) DO NOTHING`, [tokenHash(token), exp])
    await fastify.db.query('DELETE FROM revoked_tokens WHERE expires_at < now()')
  }

  fastify.addHook('onRequest', async request => {
    const [scheme, ...credentials] = (request.headers.authorization ?? '').trim().split(/\s+/)
    if (scheme.toLowerCase() !== 'bearer') return // no header, or another scheme (Basic): not ours to judge
    if (credentials.length !== 1) throw Unauthorized('The Authorization header must be "Bearer <token>".')
    const token = credentials[0]
    let claims: TokenClaims
    try {
      claims = fastify.jwt.verify<TokenClaims>(token)
    } catch (err) {
      if ((err as { code?: string }).code === 'FAST_JWT_EXPIRED') throw ExpiredSignature()
      throw Unauthorized('The authentication token is invalid.')
    }
    const { rows } = await fastify.db.query<{ id: string, fullname: string | null, roles: string[], revoked: boolean }>(
      `SELECT id, fullname, roles, EXISTS (SELECT 1 FROM revoked_tokens WHERE token_hash = $2) AS revoked
       FROM users WHERE id = $1`, [claims.sub, tokenHash(token)])
    const user = rows[0]
    if (user === undefined) throw Unauthorized('The authentication token names an unknown user.')
    if (user.revoked) throw Unauthorized('The authentication token has been revoked (logged out).')
    request.principal = { userId: user.id, fullname: user.fullname, roles: user.roles } satisfies Principal
    request.token = token
  })

  fastify.post('/@login', {
    schema: {
      summary: 'Log in with a login name and a password; returns a token',
      tags: ['auth'],
      body: Type.Object({ login: Type.String({ minLength: 1 }), password: Type.String({ minLength: 1 }) }),
      response: { 200: TokenResponse, ...errors }
    }
  }, async (request) => {
    const { login, password } = request.body as { login: string, password: string }
    const loginKey = login.toLowerCase()
    const wait = Math.max(byLogin.retryAfter(loginKey), byAddress.retryAfter(request.ip))
    if (wait > 0) throw TooManyRequests(wait)
    const { rows } = await fastify.db.query<{ id: string, fullname: string | null, password_hash: string }>(
      'SELECT id, fullname, password_hash FROM users WHERE lower(id) = $1 OR lower(email) = $1 ORDER BY (lower(id) = $1) DESC LIMIT 1', [loginKey])
    const user = rows[0]
    const ok = await verifyPassword(password, user?.password_hash ?? await dummyHash())
    if (user === undefined || !ok) {
      byLogin.fail(loginKey)
      byAddress.fail(request.ip)
      throw Unauthorized('Wrong login and/or password.')
    }
    byLogin.reset(loginKey)
    return { token: issue(user) }
  })

  fastify.post('/@login-renew', {
    schema: { summary: 'Exchange a valid token for a fresh one (the old one is revoked)', tags: ['auth'], security: [{ bearer: [] }], response: { 200: TokenResponse, ...errors } }
  }, async (request) => {
    const { principal, token } = request
    if (principal.userId === null || token === null) throw Unauthorized('The authentication token is invalid or expired.')
    const renewed = issue({ id: principal.userId, fullname: principal.fullname })
    await revoke(token, fastify.jwt.decode<TokenClaims>(token)!.exp)
    return { token: renewed }
  })

  fastify.post('/@logout', {
    schema: { summary: 'Revoke the token the request carries', tags: ['auth'], security: [{ bearer: [] }], response: { 204: Type.Null(), ...errors } }
  }, async (request, reply) => {
    const { token } = request
    if (token === null) throw Unauthorized('Log out needs the token to revoke.')
    await revoke(token, fastify.jwt.decode<TokenClaims>(token)!.exp)
    return reply.code(204).send()
  })
}, { name: 'auth', dependencies: ['db', 'http'] })
