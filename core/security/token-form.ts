import { ExpiredSignature, Unauthorized } from '../errors.js'
import { badTextReason } from './untrusted-input.js'

/**
 * The claims of a token of this service, once `sessionClaims` found them
 * well-formed. `jti` names the session: revocation ends it, whichever token
 * text carries it. `token_key` binds the token to the user record it was
 * issued for (infra/migrations/006_token_binding.sql).
 */
export interface TokenClaims { sub: string, fullname: string | null, token_key: string, exp: number, iat: number, jti: string }

/** The one header this service signs (fast-jwt writes `alg` first), base64url-encoded. */
export const TOKEN_HEADER = Buffer.from(JSON.stringify({ alg: 'HS256', typ: 'JWT' })).toString('base64url')

/** Whether a segment is the one base64url spelling of the bytes it decodes to. */
const canonical = (segment: string): boolean => Buffer.from(segment, 'base64url').toString('base64url') === segment

/**
 * Whether a token is spelled exactly as this service spells it. Base64url
 * gives one byte string several spellings (the unused low bits of a last
 * character, `=` padding; Node's decoder also takes `+` and `/` and skips
 * whitespace), and a verifier that decodes the signature before comparing
 * it accepts every spelling of a signed token. Only the spelling that
 * re-encoding gives back is accepted, and only the header this service
 * signs (no other fields, no other order): one signed token, one text.
 */
export function isCanonicalToken (token: string): boolean {
  const segments = token.split('.')
  return segments.length === 3 && segments[0] === TOKEN_HEADER && canonical(segments[1]) && canonical(segments[2])
}

/**
 * How far the clocks of the processes of one site may differ: a token one of
 * them issued is not "from the future" for another whose clock is behind.
 */
const CLOCK_SKEW_SECONDS = 60
/** What `randomUUID()` (jti) and PostgreSQL's `gen_random_uuid()::text` (token_key) write. */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/
/** User ids are at most 100 characters (plugins/routes/users.ts); a lookup key need not be longer. */
const MAX_SUB_LENGTH = 256

const isSeconds = (value: unknown): value is number => Number.isSafeInteger(value) && (value as number) > 0

/**
 * The claims of a token whose signature was checked, if they are claims this
 * service writes: `exp` a whole number of seconds no later than a token issued
 * now would expire, `iat` before it by at most the token lifetime (`JWT_TTL`)
 * and not in the future, `jti` and `token_key` UUIDs, `sub` storable text.
 * Anything else is 401, so that no claim reaches the database that it cannot
 * store. An `exp` that passes and is past is 400 ExpiredSignatureError (the
 * contract's rule for ANY expired token), whatever the other claims are.
 */
export function sessionClaims (payload: Record<string, unknown>, lifetimeSeconds: number, now = Date.now()): TokenClaims {
  const { sub, exp, iat, jti, token_key: tokenKey, fullname } = payload
  const nowSeconds = Math.floor(now / 1000)
  if (!isSeconds(exp) || exp > nowSeconds + lifetimeSeconds + CLOCK_SKEW_SECONDS) {
    throw Unauthorized('The authentication token has no expiry (exp) this service could have written.')
  }
  if (now > exp * 1000) throw ExpiredSignature()
  if (!isSeconds(iat) || iat >= exp || exp - iat > lifetimeSeconds || iat > nowSeconds + CLOCK_SKEW_SECONDS) {
    throw Unauthorized('The authentication token has no time of issue (iat) this service could have written, or lives longer than its tokens do.')
  }
  // Tokens signed before tokens were bound to user records carry no key: they
  // could outlive their user, so they are refused like any other stale token.
  if (tokenKey === undefined) throw Unauthorized('The authentication token is from an older version of the service. Log in again.')
  if (typeof tokenKey !== 'string' || !UUID.test(tokenKey) || typeof jti !== 'string' || !UUID.test(jti)) {
    throw Unauthorized('The authentication token does not name its session (jti) and its user record (token_key) as this service does.')
  }
  if (typeof sub !== 'string' || sub === '' || sub.length > MAX_SUB_LENGTH || badTextReason(sub) !== null) {
    throw Unauthorized('The authentication token names no user (sub) this service could have written.')
  }
  return { sub, exp, iat, jti, token_key: tokenKey, fullname: typeof fullname === 'string' ? fullname : null }
}
