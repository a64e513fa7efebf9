import fp from 'fastify-plugin'
import Type from 'typebox'
import { Unauthorized } from '../../core/errors.js'
import type { DeviceCookie } from '../../core/security/device-cookies.js'

const TokenResponse = Type.Object({ token: Type.String({ description: 'JWT (HS256) with sub, fullname, iat, exp, jti, token_key' }) })
/**
 * The device cookie (core/security/device-cookies.ts) for the whole origin, out of reach of
 * scripts and of other sites' requests; `Secure` when the client reached the service over
 * https (its own connection, a trusted proxy's X-Forwarded-Proto, or Zope's virtual hosting).
 */
const deviceCookieHeader = ({ name, value, maxAgeSeconds }: DeviceCookie, https: boolean): string =>
  `${name}=${value}; Max-Age=${maxAgeSeconds}; Path=/; HttpOnly; SameSite=Strict${https ? '; Secure' : ''}`

const errors = { 400: { $ref: 'Error#' }, 401: { $ref: 'Error#' }, 429: { $ref: 'Error#' } }

/** `@login`, `@login-renew`, `@logout` (plone.restapi's token authentication). */
export default fp(async fastify => {
  const { sessions } = fastify

  fastify.post('/@login', {
    schema: {
      summary: 'Log in with a login name and a password; returns a token and sets a device cookie',
      tags: ['auth'],
      body: Type.Object({ login: Type.String({ minLength: 1 }), password: Type.String({ minLength: 1 }) }),
      response: { 200: TokenResponse, ...errors }
    }
  }, async (request, reply) => {
    const { login, password } = request.body as { login: string, password: string }
    const { subject, deviceCookie } = await sessions.login({ login, password, address: request.ip, cookieHeader: request.headers.cookie })
    void reply.header('set-cookie', deviceCookieHeader(deviceCookie, request.baseUrl.startsWith('https:')))
    return { token: fastify.issueToken(subject) }
  })

  fastify.post('/@login-renew', {
    schema: { summary: 'Exchange a valid token for a fresh one (the old one is revoked)', tags: ['auth'], security: [{ bearer: [] }], response: { 200: TokenResponse, ...errors } }
  }, async request => {
    const { principal, token } = request
    if (principal.userId === null || token === null) throw Unauthorized('The authentication token is invalid or expired.')
    // Revoked before the new token is issued: of two renewals (or a renewal and
    // a logout) of one session, only the one that revokes it gets a token.
    await sessions.revoke(token)
    // The auth hook has checked that the token's key is its user's current one.
    return { token: fastify.issueToken({ id: principal.userId, fullname: principal.fullname, token_key: token.token_key }) }
  })

  fastify.post('/@logout', {
    schema: { summary: 'Revoke the token the request carries', tags: ['auth'], security: [{ bearer: [] }], response: { 204: Type.Null(), ...errors } }
  }, async (request, reply) => {
    const { token } = request
    if (token === null) throw Unauthorized('Log out needs the token to revoke.')
    await sessions.revoke(token)
    return reply.code(204).send()
  })
}, { name: 'login', dependencies: ['auth'] })
