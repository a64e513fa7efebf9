import { createHash, timingSafeEqual } from 'node:crypto'
import bcrypt from 'bcryptjs'
import { dummyHash, hashPassword, verifyPassword } from './passwords.js'

/**
 * Password hashes of users brought from a Plone site (core/exchange/principals.ts),
 * as Zope's AuthEncoding writes them: `{SSHA}` base64(sha1(password + salt) + salt),
 * Plone's default from Plone 2 to 6; `{SHA}` base64(sha1(password)), older
 * still; `{SSHA512}` the same with SHA-512. They are verified at the user's
 * first login and then replaced by the service's own (core/security/passwords.ts).
 * `{BCRYPT}` (Plone 6 with the bcrypt package installed) through bcryptjs:
 * node:crypto has no bcrypt, and bcryptjs is plain JavaScript, no native build.
 */
const SCHEMES: Record<string, { algorithm: string, digestBytes: number, salted: boolean }> = {
  '{SSHA}': { algorithm: 'sha1', digestBytes: 20, salted: true },
  '{SHA}': { algorithm: 'sha1', digestBytes: 20, salted: false },
  '{SSHA512}': { algorithm: 'sha512', digestBytes: 64, salted: true }
}

const BCRYPT = '{BCRYPT}'
/** A bcrypt hash: its version, a cost of at most 14 (2^14 rounds, some hundreds of ms: a stored hash must not make a login cost more), salt and hash. */
const BCRYPT_HASH = /^\$2[abxy]\$(0[4-9]|1[0-4])\$[./A-Za-z0-9]{53}$/

/** The schemes an import keeps (the users of the others are reported). */
export const KNOWN_SCHEMES = [...Object.keys(SCHEMES), BCRYPT]

/** Base64 as AuthEncoding writes it (with line breaks, at times); at most this long: a hash is short. */
const BASE64 = /^[A-Za-z0-9+/=\s]{1,2000}$/

/** Whether `password` is the one `stored` (a legacy hash) was made from; false for any other form. */
export async function verifyLegacyHash (password: string, stored: string): Promise<boolean> {
  if (stored.startsWith(BCRYPT)) {
    const hash = stored.slice(BCRYPT.length)
    return BCRYPT_HASH.test(hash) && await bcrypt.compare(password, hash)
  }
  const scheme = Object.keys(SCHEMES).find(s => stored.startsWith(s))
  if (scheme === undefined) return false
  const { algorithm, digestBytes, salted } = SCHEMES[scheme]
  const encoded = stored.slice(scheme.length)
  if (!BASE64.test(encoded)) return false
  const decoded = Buffer.from(encoded.replace(/\s/g, ''), 'base64')
  if (decoded.length < digestBytes || (!salted && decoded.length !== digestBytes)) return false
  const expected = decoded.subarray(0, digestBytes)
  const computed = createHash(algorithm).update(Buffer.from(password, 'utf8')).update(decoded.subarray(digestBytes)).digest()
  return timingSafeEqual(computed, expected)
}

/**
 * Verifies a password against what a user has stored, the service's hash or
 * a legacy one; for a legacy one that matches, answers the service's hash to
 * store instead (`rehashed`). A legacy check is fast: a scrypt is spent
 * beside it all the same, so that its answer takes as long as any other.
 */
export async function verifyStoredPassword (password: string, stored: string): Promise<{ ok: boolean, rehashed: string | null }> {
  if (!stored.startsWith('{')) return { ok: await verifyPassword(password, stored), rehashed: null }
  await verifyPassword(password, await dummyHash())
  const ok = await verifyLegacyHash(password, stored)
  return { ok, rehashed: ok ? await hashPassword(password) : null }
}
