import t from 'tap'
import { mkdtempSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, relative } from 'node:path'
import { build } from '../helper.js'
import { exportSite } from '../../core/exchange/exporter.js'
import { runImport, smallSite, writeExport } from './exports.js'

/**
 * Export in plone.exportimport's format (core/exchange/exporter.ts) and back:
 * a site imported, exported, imported into an empty site answers every
 * object's GET alike, and its export is byte-equal to the first.
 */
const files = (dir: string): string[] => readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter(f => statSync(join(dir, f)).isFile()).map(f => relative(dir, join(dir, f))).sort()
const newDir = (): string => mkdtempSync(join(tmpdir(), 'exchange-out-'))

const first = await build(t)
const second = await build(t)
const adminA = await first.tokenFor('admin')
const adminB = await second.tokenFor('admin')

t.before(async () => {
  // Both sites start with nothing but their root: their seeded folders have UIDs of their own.
  for (const [{ call }, token] of [[first, adminA], [second, adminB]] as const) {
    if ((await call('DELETE', '/talks', undefined, token)).statusCode !== 204) throw new Error('/talks stays')
  }
  const site = smallSite()
  await runImport(first.app, writeExport(site.objects, { metadata: site.metadata, principals: site.principals }))
  // A redirect of a rename and an alias added by hand: both go into redirects.json.
  if ((await first.call('PATCH', '/docs/news', { id: 'news-item' }, adminA)).statusCode !== 204) throw new Error('no rename')
  if ((await first.call('POST', '/docs/page/@aliases', { items: [{ path: '/welcome' }] }, adminA)).statusCode !== 204) throw new Error('no alias')
  // Two edits that keep versions, each with its note.
  for (const [title, changeNote] of [['Page, first edit', 'first edit'], ['Page, second edit', 'second edit']]) {
    if ((await first.call('PATCH', '/docs/page', { title, changeNote }, adminA)).statusCode !== 204) throw new Error('no edit')
  }
  // The home page (the root's blocks) links to a page by UID, and the root is shared with a group.
  const page = (await first.call('GET', '/docs/page', undefined, adminA)).json()
  const home = { title: 'The imported site', description: 'Its home page', blocks: { t: { '@type': 'title' }, s: { '@type': 'slate', plaintext: 'see', value: [{ type: 'p', children: [{ type: 'link', data: { url: `http://localhost:80/resolveuid/${page.UID as string}` }, children: [{ text: 'see' }] }] }] } }, blocks_layout: { items: ['t', 's'] } }
  if ((await first.call('PATCH', '/', home, adminA)).statusCode !== 204) throw new Error('no home page')
  if ((await first.call('POST', '/@sharing', { entries: [{ id: 'staff', type: 'group', roles: { Editor: true } }] }, adminA)).statusCode !== 204) throw new Error('no sharing')
})

t.test('a site exported, imported into an empty one and exported again: the same answers, the same bytes', async t => {
  const out1 = newDir()
  const exported = await exportSite(first.app.db, first.app.contentTypes, out1)
  t.same(exported, { objects: 8, blobs: 2 })
  const report = await runImport(second.app, out1)
  t.same(report.problems.map(p => p.kind), ['workflow state not kept'].filter(() => false), JSON.stringify(report))
  t.equal(report.counts['objects imported'], 8)

  const paths = (await first.app.db.query<{ path: string }>("SELECT path FROM content WHERE path <> '/' ORDER BY path")).rows.map(r => r.path)
  t.equal(paths.length, 8)
  for (const path of paths) {
    const a = await first.call('GET', path, undefined, adminA)
    const b = await second.call('GET', path, undefined, adminB)
    t.equal(b.statusCode, 200, path)
    t.same(b.json(), a.json(), `${path} answers alike`)
  }
  // Versions: the same list, and each older version answers the same state.
  const historyOf = async (site: typeof first, token: string): Promise<Array<Record<string, unknown>>> =>
    ((await site.call('GET', '/docs/page/@history', undefined, token)).json() as Array<Record<string, unknown>>).filter(e => e.type === 'versioning')
  const [versionsA, versionsB] = [await historyOf(first, adminA), await historyOf(second, adminB)]
  t.same(versionsA.map(v => v.comments), ['second edit', 'first edit'], 'the site kept a version of each edit')
  t.same(versionsB, versionsA, 'the imported site lists the same versions')
  t.equal(report.counts['versions imported'] >= 2, true)
  for (const { version } of versionsA) {
    const [a, b] = [await first.call('GET', `/docs/page/@history/${String(version)}`, undefined, adminA), await second.call('GET', `/docs/page/@history/${String(version)}`, undefined, adminB)]
    t.same([b.statusCode, b.json().title], [200, a.json().title], `version ${String(version)} answers the same state`)
  }
  // The site root: its fields (the home page's link still leads to the page) and the roles granted on it.
  const [rootA, rootB] = [(await first.call('GET', '/', undefined, adminA)).json(), (await second.call('GET', '/', undefined, adminB)).json()]
  for (const field of ['title', 'description', 'blocks', 'blocks_layout']) t.same(rootB[field], rootA[field], `the root's ${field}`)
  t.match(JSON.stringify(rootB.blocks), (await second.call('GET', '/docs/page', undefined, adminB)).json().UID, 'the home page links to the page by its UID')
  t.equal(report.counts['site root imported'], 1)
  const sharedWith = async (site: typeof first, token: string): Promise<unknown> => (await site.call('GET', '/@sharing', undefined, token)).json().entries.filter((e: { id: string }) => e.id === 'staff')
  t.same(await sharedWith(second, adminB), await sharedWith(first, adminA))
  t.match(await sharedWith(second, adminB), [{ roles: { Editor: true } }])
  const { rows: [{ allowed }] } = await second.app.db.query<{ allowed: string[] }>('SELECT catalog."allowedRolesAndUsers" AS allowed FROM catalog JOIN content USING (uid) WHERE path = $1', ['/docs/event'])
  t.ok(allowed.includes('user:staff'), `a private object below is catalogued with them: ${allowed.join(' ')}`)
  const picture = '/docs/picture.png/@@images/image'
  t.same((await second.call('GET', picture, undefined, adminB)).rawPayload, (await first.call('GET', picture, undefined, adminA)).rawPayload)

  const out2 = newDir()
  await exportSite(second.app.db, second.app.contentTypes, out2)
  const contentFiles = files(join(out1, 'content'))
  t.same(files(join(out2, 'content')), contentFiles)
  for (const file of contentFiles) t.ok(readFileSync(join(out1, 'content', file)).equals(readFileSync(join(out2, 'content', file))), `content/${file} is byte-equal`)
  // Each site's admin keeps its own password; every other user is carried over with its hash.
  const principals = (dir: string): unknown => {
    const { members, groups } = JSON.parse(readFileSync(join(dir, 'principals.json'), 'utf8'))
    return { groups, members: members.map((m: Record<string, unknown>) => m.username === 'admin' ? { ...m, password: '' } : m) }
  }
  t.same(principals(out2), principals(out1))
  t.same(JSON.parse(readFileSync(join(out1, 'redirects.json'), 'utf8')), { '/docs/news': '/docs/news-item', '/welcome': '/docs/page' }, 'the redirects, old path → path now')
  t.ok(readFileSync(join(out2, 'redirects.json')).equals(readFileSync(join(out1, 'redirects.json'))), 'redirects.json is byte-equal')
  t.equal((await second.call('GET', '/welcome', undefined, adminB)).headers.location, 'http://localhost:80/docs/page', 'an imported alias redirects')
})

t.test('a subtree exports alone, its top under the site root', async t => {
  const out = newDir()
  t.same(await exportSite(first.app.db, first.app.contentTypes, out, { path: '/docs' }), { objects: 7, blobs: 2 })
  const metadata = JSON.parse(readFileSync(join(out, 'content', '__metadata__.json'), 'utf8'))
  const top = JSON.parse(readFileSync(join(out, 'content', metadata._data_files_[0]), 'utf8'))
  t.equal(top.id, 'docs')
  t.equal(top.parent.UID, 'plone_site_root')
  await t.rejects(exportSite(first.app.db, first.app.contentTypes, out), /holds an export already/)
  await t.rejects(exportSite(first.app.db, first.app.contentTypes, newDir(), { path: '/nothing' }), /Nothing at/)
})
