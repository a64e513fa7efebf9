import fc from 'fast-check'
import t from 'tap'
import { build, talkBody } from '../helper.js'
import { waitFor } from '../queue/helper.js'

/**
 * A GET may answer from the object kept since the last write
 * (core/content/kept-objects.ts). What another process changes reaches every
 * process's answers as soon as the change's notification does: a title, a
 * retraction (the object becomes invisible to anonymous callers), a lock
 * (and its end by timeout, which no write announces), a deletion, a change
 * of its folder (what the talk's answer shows of its parent): a write names
 * the objects it changed, and a process forgets the kept objects below them. The
 * oracle is the test's own record of what it did, not another read; the
 * catalogue's kept results (a search for the talk) must agree with it too.
 */
const writer = await build(t)
const reader = await build(t, { databaseUrl: writer.databaseUrl })
const admin = await writer.tokenFor('admin')
const editor = await reader.tokenFor('eddie', ['Editor'])

/** What the test did to one talk. */
interface Expected { exists: boolean, title: string, published: boolean, locked: boolean, folder: string }

/** What an anonymous caller and an editor see of the talk in `app`, read and searched for (kept objects, kept catalogue results). */
interface Seen { read: Expected | 'gone', listed: string[], listedPublicly: boolean }

async function seen (app: typeof writer, path: string): Promise<Seen> {
  const anonymous = await app.call('GET', path)
  const edited = await app.call('GET', path, undefined, editor)
  const search = `/@search?path=${path}&path.depth=0`
  const listed = (await app.call('GET', search, undefined, editor)).json().items.map((item: { title: string }) => item.title)
  const listedPublicly = (await app.call('GET', search)).json().items_total === 1
  if (edited.statusCode === 404) return { read: 'gone', listed, listedPublicly }
  if (edited.statusCode !== 200) throw new Error(`GET ${path} as an editor: ${edited.statusCode} ${edited.body}`)
  if (![200, 401].includes(anonymous.statusCode)) throw new Error(`GET ${path} anonymously: ${anonymous.statusCode} ${anonymous.body}`)
  const body = edited.json()
  return { read: { exists: true, title: body.title, published: anonymous.statusCode === 200, locked: body.lock.locked, folder: body.parent.title }, listed, listedPublicly }
}

const agrees = ({ read, listed, listedPublicly }: Seen, expected: Expected): boolean => expected.exists
  ? read !== 'gone' && read.title === expected.title && read.folder === expected.folder && read.published === expected.published && read.locked === expected.locked &&
    listed.length === 1 && listed[0] === expected.title && listedPublicly === expected.published
  : read === 'gone' && listed.length === 0 && !listedPublicly

/** Every change the writer makes is what the reader shows within a few seconds, and from then on. */
async function converges (path: string, expected: Expected): Promise<void> {
  await waitFor(`the reader to show ${JSON.stringify(expected)} of ${path}`, async () => agrees(await seen(reader, path), expected), 5_000)
  // Kept now (read twice), and still what was written.
  for (let i = 0; i < 2; i++) {
    const again = await seen(reader, path)
    if (!agrees(again, expected)) throw new Error(`the reader went back to ${JSON.stringify(again)} of ${path}`)
  }
}

async function ok (res: Awaited<ReturnType<typeof writer.call>>, status: number, what: string): Promise<void> {
  if (res.statusCode !== status) throw new Error(`${what}: ${res.statusCode} ${res.body}`)
}

/** The headers of a write by the lock's holder. */
const holding = (lockToken: string | undefined): Record<string, string> => lockToken !== undefined ? { 'lock-token': lockToken } : {}

type Step = 'retitle' | 'retitle-folder' | 'publish' | 'retract' | 'lock' | 'unlock' | 'expire' | 'delete' | 'recreate'

t.test('what one process changes, another process\'s kept objects show at once after its notification', async t => {
  let n = 0
  await fc.assert(fc.asyncProperty(fc.array(fc.constantFrom<Step>('retitle', 'retitle-folder', 'publish', 'retract', 'lock', 'unlock', 'expire', 'delete', 'recreate'), { minLength: 4, maxLength: 10 }), async steps => {
    const id = `kept-${n++}`
    const folder = `/talks/box-${id}`
    const path = `${folder}/${id}`
    await ok(await writer.call('POST', '/talks/@import', { items: [{ '@type': 'folder', id: `box-${id}`, title: 'Box' }] }, admin), 201, 'folder')
    await ok(await writer.call('POST', folder, talkBody({ id, title: 'First' }), admin), 201, 'create')
    const expected: Expected = { exists: true, title: 'First', published: false, locked: false, folder: 'Box' }
    let lockToken: string | undefined
    await converges(path, expected)
    for (const step of steps) {
      if (!expected.exists && step !== 'recreate') continue
      switch (step) {
        case 'retitle': {
          expected.title = `Title ${Math.random().toString(36).slice(2)}`
          await ok(await writer.call('PATCH', path, { title: expected.title }, admin, holding(lockToken)), 204, 'patch')
          break
        }
        case 'retitle-folder': {
          // The talk itself is not written: its kept answer, which shows its folder, must go all the same.
          expected.folder = `Box ${Math.random().toString(36).slice(2)}`
          await ok(await writer.call('PATCH', folder, { title: expected.folder }, admin), 204, 'patch the folder')
          break
        }
        case 'publish':
          if (expected.published) continue
          await ok(await writer.call('POST', `${path}/@workflow/publish`, {}, admin), 200, 'publish')
          expected.published = true
          break
        case 'retract':
          if (!expected.published) continue
          await ok(await writer.call('POST', `${path}/@workflow/retract`, {}, admin), 200, 'retract')
          expected.published = false
          break
        case 'lock': {
          const res = await writer.call('POST', `${path}/@lock`, {}, admin)
          await ok(res, 200, 'lock')
          lockToken = res.json().token
          expected.locked = true
          break
        }
        case 'unlock':
          if (!expected.locked) continue
          await ok(await writer.call('DELETE', `${path}/@lock`, {}, admin), 200, 'unlock')
          lockToken = undefined
          expected.locked = false
          break
        case 'expire':
          if (!expected.locked) continue
          // The lock's timeout passes: no write, no notification.
          await writer.app.db.query("UPDATE locks SET created = now() - interval '2 days' WHERE uid = (SELECT uid FROM content WHERE path = $1)", [path])
          lockToken = undefined
          expected.locked = false
          break
        case 'delete':
          await ok(await writer.call('DELETE', path, undefined, admin, holding(lockToken)), 204, 'delete')
          lockToken = undefined
          Object.assign(expected, { exists: false, locked: false })
          break
        case 'recreate':
          if (expected.exists) continue
          await ok(await writer.call('POST', folder, talkBody({ id, title: 'Again' }), admin), 201, 'recreate')
          Object.assign(expected, { exists: true, title: 'Again', published: false, locked: false })
          break
      }
      await converges(path, expected)
    }
  }), { numRuns: 12 })
  t.pass('the reader agreed with every step')
})

t.test('while a process does not hear notifications, it keeps nothing', async t => {
  const path = '/talks/unheard'
  await ok(await writer.call('POST', '/talks', talkBody({ id: 'unheard', title: 'Heard' }), admin), 201, 'create')
  await converges(path, { exists: true, title: 'Heard', published: false, locked: false, folder: 'Talks' })
  // The reader's listening connection ends; until it listens again, a change it cannot hear must still show.
  const { rows } = await writer.app.db.query<{ n: number }>(
    "SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity WHERE datname = current_database() AND query ILIKE 'LISTEN%'")
  t.ok(rows[0].n >= 1, 'listening connections ended')
  await waitFor('the reader to notice', () => !reader.app.db.notifications.listening, 5_000)
  t.same(await seen(reader, path), { read: { exists: true, title: 'Heard', published: false, locked: false, folder: 'Talks' }, listed: ['Heard'], listedPublicly: false }, 'read while not listening')
  await ok(await writer.call('PATCH', path, { title: 'Unheard' }, admin), 204, 'patch')
  const now = await seen(reader, path)
  t.same(now, { read: { exists: true, title: 'Unheard', published: false, locked: false, folder: 'Talks' }, listed: ['Unheard'], listedPublicly: false }, 'the change shows at once: nothing was kept')
  await waitFor('the reader to listen again', () => reader.app.db.notifications.listening, 20_000)
  await converges(path, { exists: true, title: 'Unheard', published: false, locked: false, folder: 'Talks' })
})
