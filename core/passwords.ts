import { randomBytes, scrypt as scryptCallback, timingSafeEqual } from 'node:crypto'
import { promisify } from 'node:util'

const scrypt = promisify(scryptCallback) as (password: string, salt: Buffer, keylen: number, options: { N: number, r: number, p: number, maxmem: number }) => Promise<Buffer>

// scrypt with N=2^15, r=8, p=1: OWASP's minimum for scrypt, about 50 ms here.
const N = 32768
const r = 8
const p = 1
const KEY_LENGTH = 32
const maxmem = 128 * N * r * 2

/** A salted, slow hash in a self-describing form: `scrypt$N$r$p$salt$hash`. */
export async function hashPassword (password: string): Promise<string> {
  const salt = randomBytes(16)
  const key = await scrypt(password, salt, KEY_LENGTH, { N, r, p, maxmem })
  return ['scrypt', N, r, p, salt.toString('base64'), key.toString('base64')].join('$')
}

export async function verifyPassword (password: string, stored: string): Promise<boolean> {
  const [scheme, n, rr, pp, salt, hash] = stored.split('$')
  if (scheme !== 'scrypt' || hash === undefined) return false
  const expected = Buffer.from(hash, 'base64')
  const key = await scrypt(password, Buffer.from(salt, 'base64'), expected.length,
    { N: Number(n), r: Number(rr), p: Number(pp), maxmem: 128 * Number(n) * Number(rr) * 2 })
  return timingSafeEqual(key, expected)
}

let dummy: Promise<string> | undefined
/** A hash to compare against when the login is unknown, so that both failures take as long. */
export function dummyHash (): Promise<string> {
  dummy ??= hashPassword(randomBytes(12).toString('base64'))
  return dummy
}

export function randomPassword (): string {
  return randomBytes(15).toString('base64url')
}
