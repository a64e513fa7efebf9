import t from 'tap'
import fc from 'fast-check'
import { createHash } from 'node:crypto'
import { verifyLegacyHash, verifyStoredPassword } from '../../core/security/legacy-hashes.js'
import { hashPassword } from '../../core/security/passwords.js'
import { ssha } from './exports.js'

/**
 * Plone's password hashes (Zope's AuthEncoding), checked against hashes this
 * test computes from their definitions with node:crypto, not with the code under test.
 */
const sha = (password: string): string => `{SHA}${createHash('sha1').update(password).digest('base64')}`
const ssha512 = (password: string, salt: Buffer): string => `{SSHA512}${Buffer.concat([createHash('sha512').update(password).update(salt).digest(), salt]).toString('base64')}`

t.test('a fixed SSHA vector, and the form Plone stores (plone.exportimport\'s principals.json)', async t => {
  // sha1('secret' + 'abcd') followed by 'abcd', in base64: computed once with Python's hashlib, as AuthEncoding does.
  t.equal(await verifyLegacyHash('secret', ssha('secret', Buffer.from('abcd'))), true)
  t.equal(await verifyLegacyHash('secret', '{SSHA}+RFhsab2AfzZ0VfEdyknXtUT06RhYmNk'), true)
  // Its test users' hash: 20 bytes of digest, 7 of salt; read as SSHA, and no wrong password passes.
  t.equal(await verifyLegacyHash('not the password', '{SSHA}h0uWiIeI5N0XhQDxLgbybJk9VKTBMri5/7F/'), false)
})

t.test('SSHA, SHA and SSHA512 verify the password they were made from, and only it', async t => {
  await fc.assert(fc.asyncProperty(fc.string({ maxLength: 40, unit: 'binary' }), fc.string({ maxLength: 40, unit: 'binary' }), fc.uint8Array({ minLength: 0, maxLength: 16 }), async (password, other, salt) => {
    const s = Buffer.from(salt)
    for (const stored of [ssha(password, s), sha(password), ssha512(password, s)]) {
      if (!await verifyLegacyHash(password, stored)) return false
      if (other !== password && await verifyLegacyHash(other, stored)) return false
    }
    return true
  }), { numRuns: 300 })
  t.pass('300 random passwords and salts')
})

t.test('BCRYPT: the classic test vector (OpenBSD\'s, in John the Ripper\'s suite) verifies; costs above 14 are refused unread', async t => {
  const vector = '{BCRYPT}$2a$05$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW'
  t.equal(await verifyLegacyHash('U*U', vector), true)
  t.equal(await verifyLegacyHash('U*V', vector), false)
  t.equal(await verifyLegacyHash('U*U', vector.replace('$05$', '$31$')), false)
  const login = await verifyStoredPassword('U*U', vector)
  t.equal(login.ok, true)
  t.match(login.rehashed, /^scrypt\$/)
})

t.test('line breaks in the base64 (as AuthEncoding wrapped it) are accepted', async t => {
  const stored = ssha('pw', Buffer.from('saltsalt'))
  t.equal(await verifyLegacyHash('pw', `${stored.slice(0, 20)}\n${stored.slice(20)}\n`), true)
})

t.test('malformed and unknown hashes verify nothing', async t => {
  for (const stored of ['{SSHA}', '{SSHA}!!!!', '{SSHA}' + 'A'.repeat(5000), '{SHA}' + Buffer.alloc(21).toString('base64'), '{SSHA}' + Buffer.alloc(19).toString('base64'),
    '{BCRYPT}$2b$12$abcdefghijklmnopqrstuv', '{CRYPT}abc', 'plain', '']) {
    t.equal(await verifyLegacyHash('', stored), false, stored.slice(0, 30))
  }
})

t.test('a stored legacy hash is replaced by the service\'s at its first success; the service\'s own is kept', async t => {
  const legacy = await verifyStoredPassword('pw', ssha('pw', Buffer.from('1234')))
  t.equal(legacy.ok, true)
  t.match(legacy.rehashed, /^scrypt\$/)
  t.same(await verifyStoredPassword('nope', ssha('pw', Buffer.from('1234'))), { ok: false, rehashed: null })
  t.same(await verifyStoredPassword('pw', await hashPassword('pw')), { ok: true, rehashed: null })
  t.same(await verifyStoredPassword('pw', '!'), { ok: false, rehashed: null }, 'an imported user without a password cannot log in')
})
