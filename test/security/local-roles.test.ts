import fc from 'fast-check'
import t from 'tap'
import { build, type TestApp } from '../helper.js'

/**
 * Local roles and groups against an oracle written from Plone's rules, not
 * from core/: random grants of the sharing page's roles to users, groups and
 * every logged-in user, inheritance blocked and restored, memberships and
 * workflow transitions on a random-enough tree; after every change, for each
 * caller and object, whether a GET answers 200, whether a PATCH does, and
 * what @search finds below the tree. Each run goes through one of two
 * processes of one site: one answering searches from the resident catalogue,
 * one from PostgreSQL (RESIDENT_CATALOG=false).
 */
const USERS = ['u1', 'u2', 'u3', 'rev'] as const
type User = typeof USERS[number]
const CALLERS: Array<User | null> = [null, ...USERS]
const GLOBAL: Record<User, string[]> = { u1: ['Member'], u2: ['Member'], u3: ['Member'], rev: ['Member', 'Reviewer'] }
const ROLES = ['Reader', 'Editor', 'Contributor', 'Reviewer'] as const
/** The tree of each run, below its own folder: parent index, type. */
const TREE: Array<{ id: string, parent: number | null, type: 'folder' | 'Document' }> = [
  { id: '', parent: null, type: 'folder' },
  { id: 'a', parent: 0, type: 'folder' },
  { id: 'b', parent: 0, type: 'Document' },
  { id: 'c', parent: 1, type: 'folder' },
  { id: 'd1', parent: 1, type: 'Document' },
  { id: 'd2', parent: 3, type: 'Document' },
  { id: 'd3', parent: 2, type: 'Document' }
]

/** Plone's simple publication workflow as this site keeps it (docs/api.md; Reader: the sharing page's "Can view"). */
const VIEW: Record<string, string[] | 'everyone'> = {
  private: ['Manager', 'Site Administrator', 'Owner', 'Editor', 'Reader'],
  pending: ['Manager', 'Site Administrator', 'Owner', 'Editor', 'Reader', 'Reviewer'],
  published: 'everyone'
}
const MODIFY: Record<string, string[]> = {
  private: ['Manager', 'Site Administrator', 'Owner', 'Editor'],
  pending: ['Manager', 'Site Administrator', 'Reviewer'],
  published: ['Manager', 'Site Administrator', 'Owner', 'Editor']
}
const TRANSITIONS: Record<string, Record<string, string>> = {
  private: { submit: 'pending', publish: 'published' },
  pending: { publish: 'published', retract: 'private' },
  published: { retract: 'private' }
}

interface Node { state: string, block: boolean, local: Map<string, Set<string>> }
interface World { nodes: Node[], members: Map<string, Set<User>> }

/** The principals a caller is known by: itself, its groups, and every logged-in user's group. */
function principals (world: World, user: User): string[] {
  return [user, 'AuthenticatedUsers', ...[...world.members].filter(([, users]) => users.has(user)).map(([group]) => group)]
}

/** Plone's acquisition of local roles: up from the object, stopping after one that blocks it. Global roles always count. */
function rolesOf (world: World, user: User | null, index: number): Set<string> {
  if (user === null) return new Set(['Anonymous'])
  const roles = new Set(['Anonymous', 'Authenticated', ...GLOBAL[user]])
  const mine = principals(world, user)
  for (let at: number | null = index; at !== null; at = TREE[at].parent) {
    const node = world.nodes[at]
    for (const p of mine) for (const role of node.local.get(p) ?? []) roles.add(role)
    if (node.block) break
  }
  return roles
}

function mayView (world: World, user: User | null, index: number): boolean {
  const viewers = VIEW[world.nodes[index].state]
  return viewers === 'everyone' || viewers.some(role => rolesOf(world, user, index).has(role))
}
const mayModify = (world: World, user: User | null, index: number): boolean =>
  MODIFY[world.nodes[index].state].some(role => rolesOf(world, user, index).has(role))

type Op =
  | { kind: 'grant', principal: number, node: number, roles: string[] }
  | { kind: 'block', node: number, block: boolean }
  | { kind: 'member', user: User, group: number, member: boolean }
  | { kind: 'transition', node: number, name: string }

const node = fc.nat(TREE.length - 1)
const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('grant' as const), principal: fc.nat(USERS.length + 2), node, roles: fc.subarray([...ROLES]) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('block' as const), node, block: fc.boolean() }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('member' as const), user: fc.constantFrom(...USERS), group: fc.nat(1), member: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('transition' as const), node, name: fc.constantFrom('submit', 'publish', 'retract') }) }
)

t.test('local roles and groups against an oracle, resident catalogue and PostgreSQL', async t => {
  const resident = await build(t)
  const sql = await build(t, { databaseUrl: resident.databaseUrl, env: { RESIDENT_CATALOG: 'false' } })
  const admin = await resident.tokenFor('admin')
  const tokens = new Map<User | null, string | undefined>([[null, undefined]])
  for (const user of USERS) tokens.set(user, await resident.tokenFor(user, GLOBAL[user]))
  let run = 0

  await fc.assert(fc.asyncProperty(fc.array(op, { minLength: 2, maxLength: 10 }), async ops => {
    const app: TestApp = run % 2 === 0 ? resident : sql
    const top = `/run-${run}`
    const groups = [`g${run}a`, `g${run}b`]
    run++
    const paths = TREE.map(n => n.parent === null ? top : `${top}/${pathOf(n.id)}`)
    function pathOf (id: string): string {
      const n = TREE.find(m => m.id === id)!
      return n.parent === null || n.parent === 0 ? id : `${pathOf(TREE[n.parent].id)}/${id}`
    }
    const world: World = { nodes: [], members: new Map(groups.map(g => [g, new Set<User>()])) }
    for (const [i, n] of TREE.entries()) {
      const at = n.parent === null ? '/' : paths[n.parent]
      const res = await app.call('POST', at, { '@type': n.type, id: n.parent === null ? top.slice(1) : n.id, title: `Shared okapi ${n.id}` }, admin)
      if (res.statusCode !== 201) throw new Error(res.body)
      world.nodes[i] = { state: res.json().review_state, block: false, local: new Map() }
    }
    for (const group of groups) {
      const res = await app.call('POST', '/@groups', { groupname: group }, admin)
      if (res.statusCode !== 201) throw new Error(res.body)
    }
    const principalIds = [...USERS, ...groups, 'AuthenticatedUsers']

    for (const step of ops) {
      if (step.kind === 'grant') {
        const id = principalIds[step.principal]
        const res = await app.call('POST', `${paths[step.node]}/@sharing`, { entries: [{ id, roles: Object.fromEntries(ROLES.map(r => [r, step.roles.includes(r)])) }] }, admin)
        if (res.statusCode !== 204) throw new Error(res.body)
        world.nodes[step.node].local.set(id, new Set(step.roles))
      } else if (step.kind === 'block') {
        const res = await app.call('POST', `${paths[step.node]}/@sharing`, { inherit: !step.block }, admin)
        if (res.statusCode !== 204) throw new Error(res.body)
        world.nodes[step.node].block = step.block
      } else if (step.kind === 'member') {
        const res = await app.call('PATCH', `/@groups/${groups[step.group]}`, { users: { [step.user]: step.member } }, admin)
        if (res.statusCode !== 204) throw new Error(res.body)
        if (step.member) world.members.get(groups[step.group])!.add(step.user)
        else world.members.get(groups[step.group])!.delete(step.user)
      } else {
        const to = TRANSITIONS[world.nodes[step.node].state][step.name]
        const res = await app.call('POST', `${paths[step.node]}/@workflow/${step.name}`, {}, admin)
        if (res.statusCode !== (to === undefined ? 400 : 200)) throw new Error(`${step.name} from ${world.nodes[step.node].state}: ${res.statusCode}`)
        if (to !== undefined) world.nodes[step.node].state = to
      }

      for (const caller of CALLERS) {
        const token = tokens.get(caller)
        const seen = await app.call('GET', `/@search?path=${encodeURIComponent(top)}&sort_on=path&b_size=100`, undefined, token)
        const found = (seen.json().items as Array<{ '@id': string }>).map(i => new URL(i['@id']).pathname)
        t.same(found, paths.filter((_, i) => mayView(world, caller, i)).sort(), `@search as ${caller ?? 'anonymous'} after ${JSON.stringify(step)}`)
        for (const [i, path] of paths.entries()) {
          const get = await app.call('GET', path, undefined, token)
          t.equal(get.statusCode === 200, mayView(world, caller, i), `GET ${path} as ${caller ?? 'anonymous'}: ${get.statusCode}`)
          if (TREE[i].type !== 'Document' || caller === null) continue
          const patch = await app.call('PATCH', path, { description: `by ${caller}` }, token)
          t.equal(patch.statusCode === 204, mayModify(world, caller, i), `PATCH ${path} as ${caller}: ${patch.statusCode}`)
        }
      }
    }
  }), { numRuns: 12 })
})
