import t from 'tap'
import fc from 'fast-check'
import { connect } from 'node:net'
import { build } from '../helper.js'
import { BEARER, SERVICE_HEADER, carried, carrier, claimsOf, jsonLayout, otherHeader, respelling, signed, type Carrier } from './token-spelling.js'

/**
 * One session, one token (issue 22, finding 1; docs/api.md, Security): every
 * way of writing a token that the verifier might read as the same token —
 * another spelling of its base64url, a header with other fields or order, the
 * same claims in another JSON layout, the scheme in another case, whitespace,
 * another address of the same resource — is either refused (401) or the same
 * session: after a logout or a renewal through any spelling, every spelling
 * is refused. The oracle is the HTTP answers alone.
 */
const service = await build(t)
const { call, inject, tokenFor } = service
await tokenFor('sam')

const { rows: [sam] } = await service.app.db.query<{ token_key: string }>("SELECT token_key FROM users WHERE id = 'sam'")
/** A new session of sam's: what @login answers after the password check (which costs a slow hash, hundreds of times). */
const login = async (): Promise<string> => service.app.issueToken({ id: 'sam', fullname: 'User sam', token_key: sam.token_key })
const send = async (method: 'GET' | 'POST', url: string, headers: Record<string, string>): Promise<{ statusCode: number, token?: string, type?: string }> => {
  const res = await inject({ method, url, headers: { accept: 'application/json', ...headers } })
  const body = res.body === '' ? {} : res.json()
  return { statusCode: res.statusCode, token: body.token, type: body.type }
}
function expect (condition: boolean, message: string): void {
  if (!condition) throw new Error(message)
}

/** The addresses of one resource: plain, under ++api++, and behind Zope's virtual hosting. */
const addresses = ['/@users/sam', '/++api++/@users/sam', '/VirtualHostBase/https/example.org:443/++api++/VirtualHostRoot/@users/sam']
/** The four spellings of a signature's last character (it carries 2 unused bits). */
const signatureSpellings = (token: string): string[] => {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'
  const last = alphabet.indexOf(token.at(-1)!) & ~3
  return [0, 1, 2, 3].map(bits => token.slice(0, -1) + alphabet[last | bits])
}

const tally = { accepted: 0, refused: 0 }
/**
 * The property: the spelling is refused, or it is the session of `original`.
 * The session is ended (logout or renewal) through the spelling when it was
 * accepted and `throughSpelling`, else through the original; then the
 * original, the spelling and every spelling of the original's signature are
 * refused, wherever they are sent, and a renewal's fresh token works.
 */
async function refusedOrSameSession (original: string, spelled: string, c: Carrier, address: string, end: 'logout' | 'renew', throughSpelling: boolean): Promise<void> {
  const headers = carried(spelled, c)
  const first = await send('GET', address, headers)
  expect(first.statusCode === 200 || (first.statusCode === 401 && first.type === 'Unauthorized'), `GET ${address} with ${JSON.stringify(headers)}: ${first.statusCode} ${String(first.type)}`)
  tally[first.statusCode === 200 ? 'accepted' : 'refused']++
  const ender = first.statusCode === 200 && throughSpelling ? headers : carried(original)
  const ended = await send('POST', end === 'logout' ? '/@logout' : '/@login-renew', ender)
  expect(ended.statusCode === (end === 'logout' ? 204 : 200), `${end} with ${JSON.stringify(ender)}: ${ended.statusCode}`)
  const refused = async (method: 'GET' | 'POST', at: string, after: Record<string, string>): Promise<void> => {
    const res = await send(method, at, after)
    expect(res.statusCode === 401, `after ${end} through ${JSON.stringify(ender)}: ${method} ${at} with ${JSON.stringify(after)} answered ${res.statusCode}`)
  }
  for (const after of [headers, carried(original, c)]) {
    for (const at of addresses) await refused('GET', at, after)
    await refused('POST', '/@login-renew', after)
  }
  for (const spelling of signatureSpellings(original)) await refused('GET', address, carried(spelling))
  if (ended.token !== undefined) expect((await send('GET', address, carried(ended.token))).statusCode === 200, 'the renewed token works')
}

const ending = fc.constantFrom<'logout' | 'renew'>('logout', 'renew')

t.test('every re-spelling of a token (base64url, whitespace, case, scheme, address) is refused or the same session', async t => {
  await fc.assert(fc.asyncProperty(respelling, carrier, fc.constantFrom(...addresses), ending, fc.boolean(),
    async (respell, c, address, end, through) => {
      const original = await login()
      await refusedOrSameSession(original, respell(original), c, address, end, through)
    }), { numRuns: 120 })
  t.ok(tally.refused > 0, `refused spellings: ${tally.refused}, accepted (the token as sent, in another carrier): ${tally.accepted}`)
})

t.test('tokens re-signed with another header, or the same claims in another layout, are refused or the same session', async t => {
  const serviceHeader = { accepted: 0 }
  await fc.assert(fc.asyncProperty(fc.oneof(otherHeader, fc.constant(SERVICE_HEADER)), jsonLayout, ending, fc.boolean(),
    async (header, layout, end, through) => {
      const original = await login()
      const resigned = signed(header, layout(claimsOf(original)))
      const before = tally.accepted
      await refusedOrSameSession(original, resigned, BEARER, addresses[0], end, through)
      if (header === SERVICE_HEADER) serviceHeader.accepted += tally.accepted - before
      else expect(tally.accepted === before, `a token with the header ${header} was accepted`)
    }), { numRuns: 80 })
  t.ok(serviceHeader.accepted > 0, 'the service\'s own header over the same claims in another layout is accepted (as the same session)')
})

t.test('the issue\'s reproduction: the other three spellings of a signature are refused, before and after logout', async t => {
  const original = (await call('POST', '/@login', { login: 'sam', password: 'sam-password' })).json().token as string
  const [spellings, others] = [signatureSpellings(original), signatureSpellings(original).filter(s => s !== original)]
  t.equal(spellings.filter(s => s === original).length, 1)
  t.equal((await send('GET', '/@users/sam', carried(original))).statusCode, 200)
  for (const other of others) t.equal((await send('GET', '/@users/sam', carried(other))).statusCode, 401, `${other.slice(-3)} instead of ${original.slice(-3)}`)
  t.equal((await send('POST', '/@logout', carried(original))).statusCode, 204)
  for (const spelling of spellings) {
    t.equal((await send('GET', '/@users/sam', carried(spelling))).statusCode, 401, `after logout: ${spelling.slice(-3)}`)
    t.equal((await send('POST', '/@login-renew', carried(spelling))).statusCode, 401, `after logout: renewing ${spelling.slice(-3)}`)
  }
})

t.test('two Authorization headers are refused, whichever comes first (Node keeps the first, a proxy may judge another)', async t => {
  await service.app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = service.app.server.address() as { port: number }
  const [live, ended] = [await login(), await login()]
  t.equal((await send('POST', '/@logout', carried(ended))).statusCode, 204)
  const statusOf = async (headers: string[]): Promise<number> => await new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => {
      socket.write(['GET /@users/sam HTTP/1.1', 'Host: 127.0.0.1', 'Accept: application/json', ...headers, 'Connection: close', '', ''].join('\r\n'))
    })
    let answer = ''
    socket.on('data', chunk => { answer += String(chunk) })
    socket.on('end', () => { resolve(Number(answer.split(' ')[1])) })
    socket.on('error', reject)
  })
  t.equal(await statusOf([`Authorization: Bearer ${live}`]), 200, 'one header: as usual')
  t.equal(await statusOf([`Authorization: Bearer ${live}`, `Authorization: Bearer ${ended}`]), 401, 'the live token first')
  t.equal(await statusOf([`Authorization: Bearer ${ended}`, `authorization: Bearer ${live}`]), 401, 'the ended token first')
  t.equal(await statusOf([`Authorization: Bearer ${live}`, `Authorization: Bearer ${live}`]), 401, 'the same token twice')
})

t.test('requests that end one session at once: exactly one of them does, so a session never forks', async t => {
  for (let round = 0; round < 8; round++) {
    const original = await login()
    const header = carried(original)
    const answers = await Promise.all([send('POST', '/@logout', header), send('POST', '/@login-renew', header), send('POST', '/@login-renew', header)])
    const succeeded = answers.filter(a => a.statusCode === 200 || a.statusCode === 204)
    t.equal(succeeded.length, 1, `round ${round}: ${answers.map(a => a.statusCode).join(' ')}`)
    t.ok(answers.every(a => [200, 204, 401].includes(a.statusCode)), 'the others are 401')
    t.equal((await send('GET', '/@users/sam', header)).statusCode, 401)
  }
})
