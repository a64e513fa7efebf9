// Tokens made and re-spelled by hand (not a test file): HS256 over base64url JSON (RFC 7515,
// RFC 7519), signed with the tests' JWT_SECRET, so that the suites trust neither the service's
// JWT library nor its own encoding. The arbitraries generate the ways one signed token can be
// written that a lenient base64url decoder reads as the same bytes, and a few that it does not.
import fc from 'fast-check'
import { createHmac } from 'node:crypto'
import { JWT_SECRET } from '../helper.js'

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'

export const base64url = (text: string): string => Buffer.from(text).toString('base64url')
/** A token over these exact header and payload texts, signed as the service signs. */
export function signed (headerText: string, payloadText: string): string {
  const unsigned = `${base64url(headerText)}.${base64url(payloadText)}`
  return `${unsigned}.${createHmac('sha256', JWT_SECRET).update(unsigned).digest('base64url')}`
}
export const claimsOf = (token: string): Record<string, unknown> => JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString())
export const nowInSeconds = (): number => Math.floor(Date.now() / 1000)

type Respell = (segment: string) => string

/** A generated function that a counterexample shows by what it does, not by its source. */
function described<F extends (...args: never[]) => unknown> (what: string, f: F): F {
  return Object.assign(f, { [fc.toStringMethod]: () => what })
}

/** The last character of a segment carries 2 unused bits when its length is 3 mod 4, 4 when it is 2 mod 4. */
const unusedBits = (segment: string): number => ({ 2: 4, 3: 2 } as Record<number, number>)[segment.length % 4] ?? 0

/** Every value of the unused low bits of the last character (0: as it was). */
const lowBits: fc.Arbitrary<Respell> = fc.nat({ max: 15 }).map(bits => described(`low bits ${bits}`, segment => {
  const unused = unusedBits(segment)
  if (unused === 0) return segment
  const last = ALPHABET.indexOf(segment.at(-1)!)
  const mask = (1 << unused) - 1
  return segment.slice(0, -1) + ALPHABET[(last & ~mask) | (bits & mask)]
}))
/** `=` padding: the right amount, or one more or fewer. */
const padding: fc.Arbitrary<Respell> = fc.integer({ min: -1, max: 1 }).map(off => described(`padding ${off}`, segment =>
  segment + '='.repeat(Math.max(0, (4 - segment.length % 4) % 4 + off))))
/** The standard alphabet's `+` and `/` for `-` and `_`, at some of their places. */
const alphabetSwap: fc.Arbitrary<Respell> = fc.array(fc.boolean(), { minLength: 64, maxLength: 64 }).map(swaps => described('+/ for -_', segment =>
  [...segment].map((c, i) => swaps[i % 64] ? ({ '-': '+', _: '/' } as Record<string, string>)[c] ?? c : c).join('')))
/** Whitespace a header value may carry, inside the segment. */
const whitespace: fc.Arbitrary<Respell> = fc.tuple(fc.nat(), fc.constantFrom(' ', '\t', '\u00a0'), fc.integer({ min: 1, max: 2 }))
  .map(([at, space, n]) => described(`${JSON.stringify(space.repeat(n))} at ${at}`, segment => {
    const i = at % (segment.length + 1)
    return segment.slice(0, i) + space.repeat(n) + segment.slice(i)
  }))
/** One letter in the other case (other bytes: a different token, which must not verify). */
const letterCase: fc.Arbitrary<Respell> = fc.nat().map(at => described(`case at ${at}`, segment => {
  const i = at % segment.length
  const c = segment[i]
  const other = c === c.toLowerCase() ? c.toUpperCase() : c.toLowerCase()
  return segment.slice(0, i) + other + segment.slice(i + 1)
}))

/** A token re-spelled: one to three changes, each to one of its three segments. */
export const respelling: fc.Arbitrary<(token: string) => string> = fc.array(
  fc.tuple(fc.constantFrom(0, 1, 2), fc.oneof(lowBits, lowBits, padding, alphabetSwap, whitespace, letterCase)),
  { minLength: 1, maxLength: 3 }
).map(changes => described(changes.map(([index, respell]) => `segment ${index}: ${fc.stringify(respell)}`).join('; '), (token: string) => {
  const segments = token.split('.')
  for (const [index, respell] of changes) segments[index] = respell(segments[index])
  return segments.join('.')
}))

/**
 * How a request carries a token: an Authorization header with the scheme in any
 * case and whitespace around and between, or a cookie (Plone's `__ac`, or the
 * `auth_token` Volto sets), which this service does not read.
 */
export type Carrier = { scheme: string, before: string, between: string, after: string } | { cookie: string }
const blanks = (minLength: number): fc.Arbitrary<string> => fc.array(fc.constantFrom(' ', '\t'), { minLength, maxLength: 3 }).map(a => a.join(''))
export const carrier: fc.Arbitrary<Carrier> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({
      scheme: fc.array(fc.boolean(), { minLength: 6, maxLength: 6 }).map(upper => [...'bearer'].map((c, i) => upper[i] ? c.toUpperCase() : c).join('')),
      before: blanks(0),
      between: blanks(1),
      after: blanks(0)
    })
  },
  { weight: 1, arbitrary: fc.record({ cookie: fc.constantFrom('auth_token', '__ac') }) }
)
export const BEARER: Carrier = { scheme: 'Bearer', before: '', between: ' ', after: '' }
/** The headers that carry `token`. */
export const carried = (token: string, c: Carrier = BEARER): Record<string, string> =>
  'cookie' in c ? { cookie: `${c.cookie}=${token}` } : { authorization: `${c.before}${c.scheme}${c.between}${token}${c.after}` }

/** Writes an object in some key order and JSON layout. */
export const jsonLayout: fc.Arbitrary<(value: Record<string, unknown>) => string> =
  fc.tuple(fc.array(fc.nat(), { minLength: 16, maxLength: 16 }), fc.constantFrom(0, 1, '\t', ' ')).map(([weights, indent]) =>
    described(`keys ordered by ${weights.join(',')}, indent ${JSON.stringify(indent)}`, (value: Record<string, unknown>) => {
      const keys = Object.keys(value).map((k, i) => ({ k, w: weights[i % 16] })).sort((a, b) => a.w - b.w).map(({ k }) => k)
      return JSON.stringify(Object.fromEntries(keys.map(k => [k, value[k]])), null, indent)
    }))

/** The header the service signs, as it writes it. */
export const SERVICE_HEADER = '{"alg":"HS256","typ":"JWT"}'
/** Headers other than the service's own: other order or layout, another spelling of `typ`, more fields. */
export const otherHeader: fc.Arbitrary<string> = fc.tuple(
  fc.constantFrom('JWT', 'jwt', 'Jwt', 'application/jwt'),
  fc.dictionary(fc.constantFrom('kid', 'cty', 'x', 'zip', 'b64'), fc.oneof(fc.string({ maxLength: 4 }), fc.integer(), fc.boolean()), { maxKeys: 2 }),
  jsonLayout
).map(([typ, extra, layout]) => layout({ alg: 'HS256', typ, ...extra })).filter(text => text !== SERVICE_HEADER)
