import fc from 'fast-check'
import t from 'tap'
import { build, talkBody, type TestApp } from '../helper.js'

/**
 * Versions against an oracle: random edits, reverts and transitions by random
 * users through two processes of one site, each answered as the oracle
 * expects (who may, in which state), every kept version answering exactly
 * what its write left, retention honoured. Then concurrent edits of one
 * object through both processes: one version each, no id twice.
 */
const KEPT = 4

/** Who may change a talk in each state of the simple publication workflow (its role map, read from the docs). */
const MAY_CHANGE: Record<string, string[]> = {
  private: ['admin', 'olga', 'edith'],
  pending: ['admin', 'rita'],
  published: ['admin', 'olga', 'edith']
}
/** The transitions a Manager may take, and where they lead. */
const TRANSITIONS: Record<string, Record<string, string>> = {
  private: { submit: 'pending', publish: 'published' },
  pending: { publish: 'published', reject: 'private', retract: 'private' },
  published: { retract: 'private', reject: 'private' }
}
const USERS = ['admin', 'olga', 'edith', 'rita', 'mia']

interface Version { id: number, title: string, description: string, comment: string, actor: string }
type Op =
  | { kind: 'edit', user: string, title: string, description: string, note: string, via: number }
  | { kind: 'revert', user: string, pick: number, via: number }
  | { kind: 'transition', name: string, via: number }

const text = fc.string({ minLength: 1, maxLength: 12 }).map(s => s.replace(/[\r\n\0]/g, ' ').trim() || 'x')
const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ kind: fc.constant('edit' as const), user: fc.constantFrom(...USERS), title: text, description: fc.string({ maxLength: 20 }), note: fc.string({ maxLength: 20 }), via: fc.nat(1) }),
  fc.record({ kind: fc.constant('revert' as const), user: fc.constantFrom(...USERS), pick: fc.nat(KEPT + 1), via: fc.nat(1) }),
  fc.record({ kind: fc.constant('transition' as const), name: fc.constantFrom('submit', 'publish', 'retract', 'reject'), via: fc.nat(1) })
)

t.test('versions against an oracle, through two processes', async t => {
  const env = { VERSIONS_KEPT: String(KEPT) }
  const first = await build(t, { env })
  const second = await build(t, { env, databaseUrl: first.databaseUrl })
  const apps: TestApp[] = [first, second]
  const tokens: Record<string, string[]> = {}
  for (const user of USERS) {
    const roles = user === 'edith' ? ['Member', 'Editor'] : user === 'rita' ? ['Member', 'Reviewer'] : ['Member']
    tokens[user] = [await first.tokenFor(user, roles), await second.tokenFor(user, roles)]
  }

  await t.test('random edits, reverts and transitions', async t => {
    let run = 0
    await fc.assert(fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 10 }), async ops => {
      const created = await first.call('POST', '/talks', talkBody({ title: `Run ${run}`, description: '' }), tokens.olga[0])
      const path = new URL(created.json()['@id']).pathname
      run++
      let state = 'private'
      const current = { title: `Run ${run - 1}`, description: '' }
      let versions: Version[] = [{ id: 0, ...current, comment: 'Initial version', actor: 'olga' }]
      const keep = (version: Version): void => { versions = [...versions, version].slice(-KEPT) }
      for (const step of ops) {
        const { call } = apps[step.via]
        if (step.kind === 'edit') {
          const res = await call('PATCH', path, { title: step.title, description: step.description, changeNote: step.note }, tokens[step.user][step.via])
          const allowed = MAY_CHANGE[state].includes(step.user)
          if (res.statusCode !== (allowed ? 204 : 403)) return false
          if (allowed) {
            // What the write stored (the service normalises some values: a blank description is ''), as the writer reads it back.
            const written = (await call('GET', path, undefined, tokens.admin[step.via])).json()
            if (written.title !== step.title) return false
            Object.assign(current, { title: written.title, description: written.description })
            keep({ id: versions[versions.length - 1].id + 1, ...current, comment: step.note, actor: step.user })
          }
        } else if (step.kind === 'revert') {
          // A kept version, or one retention deleted (or never was).
          const target = step.pick < versions.length ? versions[step.pick].id : versions[0].id - 1 - step.pick
          const res = await call('PATCH', `${path}/@history`, { version: target }, tokens[step.user][step.via])
          const allowed = MAY_CHANGE[state].includes(step.user)
          const kept = versions.find(v => v.id === target)
          // The body's schema is checked before anything else.
          const expected = target < 0 ? 400 : !allowed ? 403 : kept === undefined ? 404 : 200
          if (res.statusCode !== expected) return false
          if (expected === 200) {
            Object.assign(current, { title: kept!.title, description: kept!.description })
            keep({ id: versions[versions.length - 1].id + 1, ...current, comment: `Reverted to revision ${target}`, actor: step.user })
          }
        } else {
          const to = TRANSITIONS[state][step.name]
          const res = await call('POST', `${path}/@workflow/${step.name}`, {}, tokens.admin[step.via])
          if (res.statusCode !== (to === undefined ? 400 : 200)) return false
          if (to !== undefined) state = to
        }
      }
      // The other process may not have heard of the last write yet: every read below is of the database (a version, @history) or checked through the writer.
      const listed = (await first.call('GET', `${path}/@history`, undefined, tokens.admin[0])).json() as Array<Record<string, unknown>>
      const listedVersions = listed.filter(e => e.type === 'versioning')
      t.same(listedVersions.map(v => [v.version, v.comments, (v.actor as { id: string }).id]), [...versions].reverse().map(v => [v.id, v.comment, v.actor]), 'the kept versions, newest first')
      for (const version of versions) {
        const read = (await apps[version.id % 2].call('GET', `${path}/@history/${version.id}`, undefined, tokens.admin[version.id % 2])).json()
        if (read.title !== version.title || read.description !== version.description || read.version !== String(version.id)) return false
      }
      return versions.length <= KEPT
    }), { numRuns: 12 })
  })

  await t.test('concurrent edits of one object through two processes: one version each, no id twice', async t => {
    const created = await first.call('POST', '/talks', talkBody({ title: 'Contended' }), tokens.olga[0])
    const path = new URL(created.json()['@id']).pathname
    const edits = 20
    const answers = await Promise.all(Array.from({ length: edits }, async (_, i) =>
      await apps[i % 2].call('PATCH', path, { title: `Edit ${i}`, changeNote: `note ${i}` }, tokens.olga[i % 2])))
    t.same(answers.map(a => a.statusCode), answers.map(() => 204))
    const { rows } = await first.app.db.query<{ version_id: number, comment: string, title: string }>(
      "SELECT version_id, comment, v.data->>'title' AS title FROM versions v JOIN content c USING (uid) WHERE c.path = $1 ORDER BY version_id", [path])
    t.same(rows.map(r => r.version_id), [edits - KEPT + 1, edits - KEPT + 2, edits - KEPT + 3, edits], 'every edit took its own id; the newest kept')
    t.equal(new Set(rows.map(r => r.comment)).size, KEPT, 'each a different edit')
    const now = (await first.call('GET', path, undefined, tokens.olga[0])).json()
    t.equal(rows[rows.length - 1].title, now.title, 'the newest version is the object as it is')
  })
})
