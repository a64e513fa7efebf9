import t from 'tap'
import fc from 'fast-check'
import { randomUUID } from 'node:crypto'
import { loadConfig } from '../../core/config/config.js'
import { build } from '../helper.js'
import { SERVICE_HEADER, nowInSeconds, signed } from './token-spelling.js'

/**
 * Every claim the service relies on (sub, exp, iat, jti, token_key) is present,
 * of its type and within the range the service writes, or the token is refused
 * with 401 — on every request, @logout and @login-renew included, which never
 * answer 500 (issue 22, finding 9). Only a holder of the secret can sign such
 * a token: the tests sign them with the tests' JWT_SECRET. A token whose claims
 * are well-formed and whose expiry has passed is 400 ExpiredSignatureError.
 */
const LIFETIME = 43200 // JWT_TTL's default, which build() keeps
const service = await build(t)
await service.tokenFor('sam')
const { rows: [{ token_key: tokenKey }] } = await service.app.db.query<{ token_key: string }>("SELECT token_key FROM users WHERE id = 'sam'")

/** Claims as the service writes them, issued `age` seconds ago. */
const goodClaims = (age = 10): Record<string, unknown> => {
  const iat = nowInSeconds() - age
  return { sub: 'sam', fullname: 'User sam', token_key: tokenKey, iat, exp: iat + LIFETIME, jti: randomUUID() }
}
const mint = (claims: Record<string, unknown>): string => signed(SERVICE_HEADER, JSON.stringify(claims))

async function answers (token: string): Promise<Array<{ request: string, statusCode: number, type: string }>> {
  const requests = [['GET', '/@users/sam'], ['GET', '/talks'], ['POST', '/@logout'], ['POST', '/@login-renew']] as const
  return await Promise.all(requests.map(async ([method, url]) => {
    const res = await service.call(method, url, undefined, token)
    return { request: `${method} ${url}`, statusCode: res.statusCode, type: String(res.json().type) }
  }))
}

/** Values of no JSON type a claim of this service has, and numbers of no range. */
const anyJson = fc.oneof(fc.string({ maxLength: 8 }), fc.double({ noNaN: true }), fc.boolean(), fc.constant(null), fc.array(fc.integer(), { maxLength: 2 }), fc.dictionary(fc.string({ maxLength: 3 }), fc.integer(), { maxKeys: 2 }))
const notWholeSeconds = fc.oneof(anyJson.filter(v => !Number.isSafeInteger(v)), fc.constantFrom(1e20, -1e20, 2 ** 53, -1, 0, 1.5, Number.MAX_VALUE))
const notUuid = fc.oneof(anyJson, fc.constantFrom('', 'x'.repeat(10_000), randomUUID().toUpperCase(), `${randomUUID()} `, randomUUID().replaceAll('-', '')))

interface Defect { claim: string, name: string, apply: (claims: Record<string, unknown>) => void }
const set = (claim: string) => (v: unknown): Defect => ({ claim, name: `${claim} ${String(JSON.stringify(v)).slice(0, 40)}`, apply: c => { c[claim] = v } })
/** One defect of one claim: missing, of another type, or outside the range the service writes (and not past: that is an expired token). */
const defect: fc.Arbitrary<Defect> = fc.oneof(
  fc.constantFrom('sub', 'exp', 'iat', 'jti', 'token_key').map((claim): Defect => ({ claim, name: `no ${claim}`, apply: c => { delete c[claim] } })),
  notWholeSeconds.map(set('exp')),
  notWholeSeconds.map(set('iat')),
  fc.integer({ min: 1, max: 10 ** 9 }).map((more): Defect => ({ claim: 'exp', name: `exp ${more} s beyond a lifetime from iat`, apply: c => { c.exp = Number(c.iat) + LIFETIME + more } })),
  // Within the clocks' tolerance of a minute, so that only the order of iat and exp is wrong.
  fc.integer({ min: 0, max: 25 }).map((back): Defect => ({ claim: 'iat', name: `exp ${back} s before iat`, apply: c => { c.iat = nowInSeconds() + 30; c.exp = Number(c.iat) - back } })),
  fc.integer({ min: 3600, max: 10 ** 9 }).map((ahead): Defect => ({ claim: 'iat', name: `issued ${ahead} s in the future`, apply: c => { c.iat = nowInSeconds() + ahead; c.exp = Number(c.iat) + 60 } })),
  notUuid.map(set('jti')),
  notUuid.map(set('token_key')),
  fc.oneof(anyJson.filter(v => typeof v !== 'string'), fc.constantFrom('', 'sam\u0000', '\ud800sam', 's'.repeat(300))).map(set('sub'))
)

t.test('claims are judged by their form: as the service writes them, 200; one defect, 401 everywhere; well-formed and past, 400', async t => {
  // The oracle's control: what the service writes is accepted, so the 401s below are the defects'.
  const control = mint(goodClaims())
  t.equal((await service.call('GET', '/@users/sam', undefined, control)).statusCode, 200)
  t.equal((await service.call('POST', '/@logout', undefined, control)).statusCode, 204)

  const seen = new Set<string>()
  await fc.assert(fc.asyncProperty(defect, async ({ claim, name, apply }) => {
    const claims = goodClaims()
    apply(claims)
    seen.add(claim)
    const wrong = (await answers(mint(claims))).filter(a => a.statusCode !== 401 || a.type !== 'Unauthorized')
    if (wrong.length > 0) throw new Error(`${name}: ${wrong.map(a => `${a.request} ${a.statusCode} ${a.type}`).join(', ')}`)
  }), { numRuns: 300 })
  t.same([...seen].sort(), ['exp', 'iat', 'jti', 'sub', 'token_key'], 'a defect of every claim was tried')

  // The contract's rule for ANY expired token stands, whatever else the token lacks, as long as its expiry is one the service writes.
  await fc.assert(fc.asyncProperty(fc.integer({ min: 1, max: 10 ** 8 }), fc.constantFrom('sub', 'jti', 'token_key', 'fullname', 'none'), async (ago, dropped) => {
    const claims = goodClaims(LIFETIME + ago)
    delete claims[dropped]
    const wrong = (await answers(mint(claims))).filter(a => a.statusCode !== 400 || a.type !== 'ExpiredSignatureError')
    if (wrong.length > 0) throw new Error(`expired ${ago} s ago, without ${dropped}: ${wrong.map(a => `${a.request} ${a.statusCode}`).join(', ')}`)
  }), { numRuns: 40 })
})

t.test('JWT_TTL is bounded (a year), so that every expiry the service writes is one PostgreSQL stores', async t => {
  t.equal(loadConfig({ JWT_TTL: '31536000' }).JWT_TTL, 31536000)
  t.throws(() => loadConfig({ JWT_TTL: '31536001' }), /JWT_TTL/)
})
