import { randomBytes, scrypt as scryptCallback, timingSafeEqual } from 'node:crypto'
import { promisify } from 'node:util'

const scryptAsync = promisify(scryptCallback) as (password: string, salt: Buffer, keylen: number, options: { N: number, r: number, p: number, maxmem: number }) => Promise<Buffer>

/**
 * One password hash at a time per process. A hash is slow on purpose (tens
 * of milliseconds of a core, 32 MiB): a flood of logins must not occupy every
 * core and thread of the pool the rest of the service needs — they queue
 * here instead, and reads go on.
 */
const MAX_CONCURRENT_HASHES = 1
let running = 0
const waiting: Array<() => void> = []

async function scrypt (...args: Parameters<typeof scryptAsync>): Promise<Buffer> {
  if (running >= MAX_CONCURRENT_HASHES) await new Promise<void>(resolve => { waiting.push(resolve) })
  else running++
  try {
    return await scryptAsync(...args)
  } finally {
    // The slot passes to the next in line (running stays as it is), or is freed.
    const next = waiting.shift()
    if (next !== undefined) next()
    else running--
  }
}

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
