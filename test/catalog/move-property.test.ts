import fc from 'fast-check'
import t from 'tap'
import { buildWithSolr, realTime, startSolr } from '../solr/helper.js'

/**
 * Random sequences of what a site's editors do — create folders and pages,
 * move, copy, rename, delete, share folders with a user or a group and
 * unshare them, stop and restart the inheritance of local roles, add the
 * user to the group and take them out, edit pages and revert them — against
 * an oracle of the site written here without the service's code, from
 * docs/api.md: the contract's free ids (`-1`, `-2` …), a folder not into
 * itself, a move into its own folder changing nothing, redirects left by
 * every moved path (the newest wins, a deleted object takes its own); local
 * roles acquired down the tree unless an object does not inherit, a group's
 * roles its members'; a copy keeping its local roles but starting without
 * versions; a page's edit, rename and revert each a version. After each
 * sequence: every object answers at its path with its title; every old path
 * redirects to where its object is (or answers the object now there); a
 * page's versions hold the oracle's titles; `@search` by path answers the
 * oracle's set with the exact `items_total`, to admin and to the user
 * (the objects they may view only), from the catalogue and from Solr; Solr,
 * delivered to at each write, holds each object at its path and nothing
 * deleted; and at the end its sync check finds no drift.
 */
const BASE = 'http://localhost:80'
const IDS = ['a', 'b', 'c']
/** The user the folders are shared with (no global role but Member), and the group that may hold them. */
const MEMBER = 'member'
const TEAM = 'team'

type Kind = 'folder' | 'Document'
/** `readers`: who the object's own local roles make Reader; `versions`: a page's versions' titles, by version id. */
interface Node { uid: string, path: string, kind: Kind, title: string, readers: Set<string>, inherit: boolean, versions: string[] }

/** The oracle: objects by uid with their paths, and the redirects (old path → uid). */
class Tree {
  readonly nodes = new Map<string, Node>()
  readonly redirects = new Map<string, string>()
  memberInTeam = false
  constructor (readonly root: string) {}

  /**
   * Whether the user may view the object (every object here is private, owned by admin): Reader
   * in force on it for them or, while they are in it, for the group — granted on it or acquired
   * from the folders above, unless an object between does not inherit.
   */
  memberMayView (node: Node): boolean {
    const lineage = [...this.nodes.values()].filter(n => node.path === n.path || node.path.startsWith(`${n.path}/`)).sort((x, y) => x.path.length - y.path.length)
    let readers = new Set<string>()
    for (const n of lineage) {
      if (!n.inherit) readers = new Set()
      for (const who of n.readers) readers.add(who)
    }
    return readers.has(MEMBER) || (readers.has(TEAM) && this.memberInTeam)
  }

  byPath (path: string): Node | undefined { return [...this.nodes.values()].find(n => n.path === path) }
  under (path: string): Node[] { return [...this.nodes.values()].filter(n => n.path === path || n.path.startsWith(`${path}/`)) }
  children (path: string): string[] { return [...this.nodes.values()].filter(n => n.path.slice(0, n.path.lastIndexOf('/')) === path).map(n => n.path.slice(n.path.lastIndexOf('/') + 1)) }
  parentOf (path: string): string { return path.slice(0, path.lastIndexOf('/')) }
  idOf (path: string): string { return path.slice(path.lastIndexOf('/') + 1) }
  free (folder: string, base: string): string {
    const taken = new Set(this.children(folder))
    let n = 0
    while (taken.has(n === 0 ? base : `${base}-${n}`)) n++
    return n === 0 ? base : `${base}-${n}`
  }

  /** The subtree at `from` now at `to`: paths by prefix, each old path a redirect. */
  relocate (from: string, to: string): void {
    for (const node of this.under(from)) {
      this.redirects.set(node.path, node.uid)
      node.path = to + node.path.slice(from.length)
    }
    for (const node of this.under(to)) this.redirects.delete(node.path)
  }

  remove (path: string): void {
    const gone = new Set(this.under(path).map(n => n.uid))
    for (const uid of gone) this.nodes.delete(uid)
    for (const [old, uid] of this.redirects) if (gone.has(uid)) this.redirects.delete(old)
  }
}

type Op = { kind: 'create', at: number, id: string, page: boolean } | { kind: 'delete', at: number, id: string } | { kind: 'rename', at: number, id: string }
  | { kind: 'move', at: number, into: number } | { kind: 'copy', at: number, into: number }
  | { kind: 'share', at: number, who: string, on: boolean } | { kind: 'inherit', at: number, on: boolean } | { kind: 'join', on: boolean }
  | { kind: 'edit', at: number } | { kind: 'revert', at: number, version: number }
// Creates weigh more: every other step needs something to act on.
const op = fc.oneof(
  { arbitrary: fc.record({ kind: fc.constant('create' as const), at: fc.nat(), id: fc.constantFrom(...IDS), page: fc.boolean() }), weight: 5 },
  // Grants and joins weigh more than their undoing, so that the user sees some of the site.
  { arbitrary: fc.record({ kind: fc.constant('share' as const), at: fc.nat(), who: fc.constantFrom(MEMBER, TEAM), on: fc.constantFrom(true, true, false) }), weight: 3 },
  fc.record({ kind: fc.constant('inherit' as const), at: fc.nat(), on: fc.boolean() }),
  fc.record({ kind: fc.constant('join' as const), on: fc.constantFrom(true, true, false) }),
  fc.record({ kind: fc.constant('edit' as const), at: fc.nat() }),
  fc.record({ kind: fc.constant('revert' as const), at: fc.nat(), version: fc.nat() }),
  fc.record({ kind: fc.constant('move' as const), at: fc.nat(), into: fc.nat() }),
  fc.record({ kind: fc.constant('copy' as const), at: fc.nat(), into: fc.nat() }),
  fc.record({ kind: fc.constant('rename' as const), at: fc.nat(), id: fc.constantFrom(...IDS) }),
  fc.record({ kind: fc.constant('delete' as const), at: fc.nat(), id: fc.constant('') })
)

/**
 * Besides the random sequences: /a shared with the user, /a/b not inheriting, a page in /a/b
 * (the user sees /a only); then the user in the group that is Reader of /a/b (and the page).
 */
const BLOCKED_BELOW_A_GRANT: Op[] = [
  { kind: 'create', at: 0, id: 'a', page: false },
  { kind: 'create', at: 0, id: 'b', page: false },
  { kind: 'create', at: 1, id: 'c', page: true },
  { kind: 'share', at: 0, who: MEMBER, on: true },
  { kind: 'inherit', at: 1, on: false }
]

const solr = await startSolr(t)

t.test('moves, copies, renames, sharing, groups, edits and reverts against an oracle of the site, with Solr', async t => {
  const { call, tokenFor } = await buildWithSolr(t, solr)
  const admin = await tokenFor('admin', ['Manager'])
  const member = await tokenFor(MEMBER, ['Member'])
  t.equal((await call('POST', '/@groups', { groupname: TEAM, users: [] }, admin)).statusCode, 201)
  let run = 0
  let titles = 0
  const seen = { visible: 0, hidden: 0 }

  async function apply (tree: Tree, step: Op): Promise<void> {
    const nodes = [...tree.nodes.values()].sort((x, y) => x.path.localeCompare(y.path))
    const folders = nodes.filter(n => n.kind === 'folder')
    const pages = nodes.filter(n => n.kind === 'Document')
    const pick = <T>(among: T[], n: number): T | undefined => among.length === 0 ? undefined : among[n % among.length]
    const folderAt = (n: number): string => n % (folders.length + 1) === folders.length ? tree.root : folders[n % (folders.length + 1)].path
    if (step.kind === 'join') {
      t.equal((await call('PATCH', `/@groups/${TEAM}`, { users: { [MEMBER]: step.on } }, admin)).statusCode, 204)
      tree.memberInTeam = step.on
      return
    }
    if (step.kind === 'create') {
      const folder = folderAt(step.at)
      // The id is chosen from the title: the contract's free id.
      const title = step.id
      const kind: Kind = step.page ? 'Document' : 'folder'
      const res = await call('POST', folder, { '@type': kind, title }, admin)
      t.equal(res.statusCode, 201, res.body)
      const path = `${folder}/${tree.free(folder, step.id)}`
      t.equal(new URL(res.json()['@id']).pathname, path, `create ${path}`)
      tree.nodes.set(res.json().UID, { uid: res.json().UID, path, kind, title, readers: new Set(), inherit: true, versions: step.page ? [title] : [] })
      return
    }
    if (step.kind === 'share' || step.kind === 'inherit') {
      const folder = pick(folders, step.at)
      if (folder === undefined) return
      const body = step.kind === 'inherit' ? { inherit: step.on } : { entries: [{ id: step.who, type: step.who === TEAM ? 'group' : 'user', roles: { Reader: step.on } }] }
      t.equal((await call('POST', `${folder.path}/@sharing`, body, admin)).statusCode, 204, `${step.kind} ${folder.path}`)
      if (step.kind === 'inherit') folder.inherit = step.on
      else if (step.on) folder.readers.add(step.who)
      else folder.readers.delete(step.who)
      return
    }
    if (step.kind === 'edit' || step.kind === 'revert') {
      const page = pick(pages, step.at)
      if (page === undefined) return
      if (step.kind === 'edit') {
        page.title = `edited ${titles++}`
        t.equal((await call('PATCH', page.path, { title: page.title }, admin)).statusCode, 204)
      } else {
        const version = page.versions.length === 0 ? 0 : step.version % page.versions.length
        const res = await call('PATCH', `${page.path}/@history`, { version }, admin)
        // A copy starts without versions (docs/versions.md): nothing to revert to.
        t.equal(res.statusCode, page.versions.length === 0 ? 404 : 200, `revert ${page.path} to ${version}: ${res.body}`)
        if (page.versions.length === 0) return
        page.title = page.versions[version]
      }
      page.versions.push(page.title)
      return
    }
    const node = pick(nodes, step.at)
    if (node === undefined) return
    if (step.kind === 'delete') {
      t.equal((await call('DELETE', node.path, undefined, admin)).statusCode, 204)
      tree.remove(node.path)
      return
    }
    if (step.kind === 'rename') {
      const folder = tree.parentOf(node.path)
      // A page's PATCH is an edit, kept as a version: only a rename that renames is sent to one.
      if (node.kind === 'Document' && step.id === tree.idOf(node.path)) return
      const res = await call('PATCH', node.path, { id: step.id }, admin)
      const taken = step.id !== tree.idOf(node.path) && tree.children(folder).includes(step.id)
      t.equal(res.statusCode, taken ? 409 : 204, `rename ${node.path} to ${step.id}`)
      if (!taken && step.id !== tree.idOf(node.path)) tree.relocate(node.path, `${folder}/${step.id}`)
      if (!taken && node.kind === 'Document') node.versions.push(node.title)
      return
    }
    const into = folderAt(step.into)
    const res = await call('POST', `${into}/@${step.kind}`, { source: node.path }, admin)
    if (into === node.path || into.startsWith(`${node.path}/`)) {
      t.equal(res.statusCode, 400, `${step.kind} ${node.path} into itself`)
      return
    }
    t.equal(res.statusCode, 200, res.body)
    if (step.kind === 'move' && tree.parentOf(node.path) === into) {
      t.same(res.json(), [{ source: `${BASE}${node.path}`, target: `${BASE}${node.path}` }], 'a move into its own folder changes nothing')
      return
    }
    const to = `${into}/${tree.free(into, tree.idOf(node.path))}`
    t.same(res.json(), [{ source: `${BASE}${node.path}`, target: `${BASE}${to}` }], `${step.kind} ${node.path} to ${to}`)
    if (step.kind === 'move') {
      tree.relocate(node.path, to)
      return
    }
    // The copies' uids are the service's: read at the paths the oracle expects them. They keep their
    // local roles and inheritance; a page's versions are not copied.
    for (const original of tree.under(node.path)) {
      const path = to + original.path.slice(node.path.length)
      const read = await call('GET', path, undefined, admin)
      t.equal(read.statusCode, 200, `copy at ${path}`)
      t.not(read.json().UID, original.uid)
      tree.nodes.set(read.json().UID, { ...original, uid: read.json().UID, path, readers: new Set(original.readers), versions: [] })
    }
  }

  async function check (tree: Tree, deleted: Set<string>): Promise<void> {
    for (const node of tree.nodes.values()) {
      const res = await call('GET', node.path, undefined, admin)
      t.same([res.statusCode, res.json().UID, res.json().title], [200, node.uid, node.title], `at ${node.path}`)
      t.equal((await call('GET', node.path, undefined, member)).statusCode, tree.memberMayView(node) ? 200 : 403, `${node.path} to ${MEMBER}`)
      if (node.kind !== 'Document') continue
      const versions = ((await call('GET', `${node.path}/@history`, undefined, admin)).json() as Array<{ type: string, version: number }>).filter(e => e.type === 'versioning')
      t.same(versions.map(v => v.version), node.versions.map((_, i) => i).reverse(), `${node.path}'s versions`)
      for (const [version, title] of node.versions.entries()) t.equal((await call('GET', `${node.path}/@history/${version}`, undefined, admin)).json().title, title, `${node.path} version ${version}`)
    }
    const visible = [...tree.nodes.values()].filter(n => tree.memberMayView(n)).map(n => `${BASE}${n.path}`).sort()
    seen.visible += visible.length
    seen.hidden += tree.nodes.size - visible.length
    for (const engine of ['', '&use_solr=true']) {
      const res = (await call('GET', `/@search?path.query=${encodeURIComponent(tree.root)}&b_size=500${engine}`, undefined, member)).json()
      t.same([res.items.map((i: { '@id': string }) => i['@id']).sort(), res.items_total], [visible, visible.length], `@search${engine} shows ${MEMBER} what they may view`)
    }
    for (const [old, uid] of tree.redirects) {
      const res = await call('GET', `${old}/@breadcrumbs?x=1`, undefined, admin)
      const there = tree.byPath(old)
      if (there !== undefined) t.equal(res.statusCode, 200, `${old} holds an object`)
      else t.same([res.statusCode, res.headers.location], [302, `${BASE}${tree.nodes.get(uid)!.path}/@breadcrumbs?x=1`], `${old} redirects`)
    }
    for (const folder of [tree.root, ...[...tree.nodes.values()].map(n => n.path)]) {
      const res = (await call('GET', `/@search?path.query=${encodeURIComponent(folder)}&b_size=500`, undefined, admin)).json()
      const expected = tree.under(folder).map(n => `${BASE}${n.path}`).sort()
      if (folder === tree.root) expected.unshift(`${BASE}${tree.root}`)
      t.same(res.items.map((i: { '@id': string }) => i['@id']).sort(), expected.sort(), `@search under ${folder}`)
      t.equal(res.items_total, expected.length)
    }
    for (const node of tree.nodes.values()) t.equal((await realTime(solr, node.uid))?.path_string, node.path, `Solr holds ${node.path}`)
    for (const uid of deleted) if (!tree.nodes.has(uid)) t.equal(await realTime(solr, uid), null, 'Solr holds nothing deleted')
  }

  await fc.assert(fc.asyncProperty(fc.array(op, { minLength: 8, maxLength: 24 }), async steps => {
    const root = `/run-${run++}`
    t.comment(`${root}: ${JSON.stringify(steps)}`)
    t.equal((await call('POST', '/', { '@type': 'folder', id: root.slice(1), title: root }, admin)).statusCode, 201)
    const tree = new Tree(root)
    // The group outlives a run: each starts with the user out of it, as its oracle does.
    t.equal((await call('PATCH', `/@groups/${TEAM}`, { users: { [MEMBER]: false } }, admin)).statusCode, 204)
    const seen = new Set<string>()
    for (const step of steps) {
      await apply(tree, step)
      for (const uid of tree.nodes.keys()) seen.add(uid)
    }
    await check(tree, seen)
  }), { numRuns: 20, seed: 20261207, examples: [[BLOCKED_BELOW_A_GRANT], [[...BLOCKED_BELOW_A_GRANT, { kind: 'join', on: true }, { kind: 'share', at: 1, who: TEAM, on: true }]]] })
  t.ok(seen.visible > 0 && seen.hidden > 0, `objects the user may view (${seen.visible}) and may not (${seen.hidden}) were checked`)
  t.equal((await call('GET', '/@solr-maintenance/sync?check=1', undefined, admin)).body, 'missing 0, orphan 0, stale 0\n', 'Solr has not drifted')
})
