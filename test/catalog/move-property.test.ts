import fc from 'fast-check'
import t from 'tap'
import { buildWithSolr, realTime, startSolr } from '../solr/helper.js'

/**
 * Random sequences of create, move, copy, rename and delete on a small tree,
 * against an oracle of paths written here without the service's code: the
 * contract's free ids (`-1`, `-2` …), a folder not into itself, a move into
 * its own folder changing nothing, redirects left by every moved path (the
 * newest wins, a deleted object takes its own). After each sequence: every
 * object answers at its path; every old path redirects to where its object
 * is (or answers the object now there); `@search` by path answers the
 * oracle's set with the exact `items_total`; and Solr, delivered to at each
 * write, holds each object at its path and nothing deleted (zero drift).
 */
const BASE = 'http://localhost:80'
const IDS = ['a', 'b', 'c']

interface Node { uid: string, path: string }

/** The oracle: objects by uid with their paths, and the redirects (old path → uid). */
class Tree {
  readonly nodes = new Map<string, Node>()
  readonly redirects = new Map<string, string>()
  constructor (readonly root: string) {}

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

type Op = { kind: 'create', at: number, id: string } | { kind: 'delete', at: number, id: string } | { kind: 'rename', at: number, id: string }
  | { kind: 'move', at: number, into: number } | { kind: 'copy', at: number, into: number }
const op = fc.oneof(
  fc.record({ kind: fc.constant('create' as const), at: fc.nat(), id: fc.constantFrom(...IDS) }),
  fc.record({ kind: fc.constant('move' as const), at: fc.nat(), into: fc.nat() }),
  fc.record({ kind: fc.constant('copy' as const), at: fc.nat(), into: fc.nat() }),
  fc.record({ kind: fc.constant('rename' as const), at: fc.nat(), id: fc.constantFrom(...IDS) }),
  fc.record({ kind: fc.constant('delete' as const), at: fc.nat(), id: fc.constant('') })
)

const solr = await startSolr(t)

t.test('moves, copies and renames against an oracle of paths, with Solr', async t => {
  const { call, tokenFor } = await buildWithSolr(t, solr)
  const admin = await tokenFor('admin', ['Manager'])
  let run = 0

  async function apply (tree: Tree, step: Op): Promise<void> {
    const nodes = [...tree.nodes.values()].sort((x, y) => x.path.localeCompare(y.path))
    const pick = (n: number): Node | undefined => nodes.length === 0 ? undefined : nodes[n % nodes.length]
    const folderAt = (n: number): string => n % (nodes.length + 1) === nodes.length ? tree.root : nodes[n % (nodes.length + 1)].path
    const node = pick(step.at)
    if (step.kind === 'create') {
      const folder = folderAt(step.at)
      const res = await call('POST', folder, { '@type': 'folder', title: step.id }, admin)
      t.equal(res.statusCode, 201, res.body)
      const path = `${folder}/${tree.free(folder, step.id)}`
      t.equal(new URL(res.json()['@id']).pathname, path, `create ${path}`)
      tree.nodes.set(res.json().UID, { uid: res.json().UID, path })
      return
    }
    if (node === undefined) return
    if (step.kind === 'delete') {
      t.equal((await call('DELETE', node.path, undefined, admin)).statusCode, 204)
      tree.remove(node.path)
      return
    }
    if (step.kind === 'rename') {
      const folder = tree.parentOf(node.path)
      const res = await call('PATCH', node.path, { id: step.id }, admin)
      const taken = step.id !== tree.idOf(node.path) && tree.children(folder).includes(step.id)
      t.equal(res.statusCode, taken ? 409 : 204, `rename ${node.path} to ${step.id}`)
      if (!taken && step.id !== tree.idOf(node.path)) tree.relocate(node.path, `${folder}/${step.id}`)
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
    // The copies' uids are the service's: read at the paths the oracle expects them.
    for (const original of tree.under(node.path)) {
      const path = to + original.path.slice(node.path.length)
      const read = await call('GET', path, undefined, admin)
      t.equal(read.statusCode, 200, `copy at ${path}`)
      t.not(read.json().UID, original.uid)
      tree.nodes.set(read.json().UID, { uid: read.json().UID, path })
    }
  }

  async function check (tree: Tree, deleted: Set<string>): Promise<void> {
    for (const node of tree.nodes.values()) {
      const res = await call('GET', node.path, undefined, admin)
      t.same([res.statusCode, res.json().UID], [200, node.uid], `at ${node.path}`)
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

  await fc.assert(fc.asyncProperty(fc.array(op, { minLength: 4, maxLength: 14 }), async steps => {
    const root = `/run-${run++}`
    t.equal((await call('POST', '/', { '@type': 'folder', id: root.slice(1), title: root }, admin)).statusCode, 201)
    const tree = new Tree(root)
    const seen = new Set<string>()
    for (const step of steps) {
      await apply(tree, step)
      for (const uid of tree.nodes.keys()) seen.add(uid)
    }
    await check(tree, seen)
  }), { numRuns: 10, seed: 20261207 })
})
