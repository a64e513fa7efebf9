// Schedules of racing writes over a small tree, for racing-writes.test.ts (not a test file):
// what fast-check generates, how a schedule is run by concurrent clients, and which answers
// each write may give.
import fc from 'fast-check'
import { talkBody } from '../helper.js'

/**
 * The folders a schedule names, relative to its run's folder: the tree set up before the race
 * (the run's folder itself, `a`, `a/c`, `b`) and one folder `d` that a create may add in each.
 */
const SET_UP = ['', '/a', '/a/c', '/b']
export const FOLDERS = [...SET_UP, ...SET_UP.map(folder => `${folder}/d`)]

/**
 * The objects a schedule names inside a folder: the folder itself, its talk `t` (set up in
 * each set-up folder), the talk `x` a create may add, the first items of the first imports.
 */
const NAMES = ['', '/t', '/x', '/i0-0', '/i0-1', '/i1-0', '/i2-0']

export type Action =
  | { kind: 'import', folder: string, items: number, publish: boolean }
  | { kind: 'create', folder: string, type: 'talk' | 'folder' }
  | { kind: 'delete', target: string }
  | { kind: 'patch', target: string }
  | { kind: 'transition', target: string, name: 'publish' | 'retract', children: boolean }

/** Clients that write side by side, each its actions one after the other. */
export type Schedule = Action[][]

// Mostly what exists when the race starts, so that writes meet rather than miss each other.
const folder = fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...SET_UP) }, { weight: 1, arbitrary: fc.constantFrom(...FOLDERS) })
const name = fc.oneof({ weight: 3, arbitrary: fc.constant('') }, { weight: 2, arbitrary: fc.constant('/t') }, { weight: 2, arbitrary: fc.constantFrom(...NAMES) })
const target = fc.tuple(folder, name).map(([f, n]) => f + n)

export const action: fc.Arbitrary<Action> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('import' as const), folder, items: fc.integer({ min: 1, max: 50 }), publish: fc.boolean() }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('create' as const), folder, type: fc.constantFrom('talk' as const, 'folder' as const) }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('delete' as const), target }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('patch' as const), target }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('transition' as const), target, name: fc.constantFrom('publish' as const, 'retract' as const), children: fc.boolean() }) }
)

export const schedule: fc.Arbitrary<Schedule> = fc.array(fc.array(action, { minLength: 1, maxLength: 4 }), { minLength: 2, maxLength: 8 })

/** One request as a client sends it: the status it got. */
export type Send = (method: 'POST' | 'PATCH' | 'DELETE', path: string, body?: unknown) => Promise<number>

/**
 * What each write may answer while others race it: done, or 404 when what it names is gone
 * (or not there yet); 409 for a create whose explicit id another took; 400 for a transition
 * the object's state does not offer. Never a 500.
 */
const ALLOWED: Record<Action['kind'], number[]> = {
  import: [201, 404],
  create: [201, 404, 409],
  delete: [204, 404],
  patch: [204, 404],
  transition: [200, 400, 404]
}

/** The set-up tree of a run under `root`: the folders, each with a talk `t` (published in `a`), in a few imports. */
export async function setUp (send: Send, root: string): Promise<void> {
  const created = async (status: Promise<number>, what: string): Promise<void> => {
    const got = await status
    if (got !== 201) throw new Error(`setting up ${what}: ${got}`)
  }
  const slash = root.lastIndexOf('/')
  await created(send('POST', root.slice(0, slash), { '@type': 'folder', id: root.slice(slash + 1), title: 'A run' }), root)
  for (const folder of SET_UP) {
    const subfolders = SET_UP.filter(f => f.slice(0, f.lastIndexOf('/')) === folder && f !== folder)
    const items = [
      talkBody({ id: 't', title: `Talk in ${folder || 'the run'}`, transitions: folder === '/a' ? ['publish'] : [] }),
      ...subfolders.map(f => ({ '@type': 'folder', id: f.slice(f.lastIndexOf('/') + 1), title: `Folder ${f}` }))
    ]
    await created(send('POST', `${root}${folder}/@import`, { items }), folder)
  }
}

/** The objects set up before a race: nothing a schedule creates takes their paths, so once deleted they stay gone. */
const SET_UP_OBJECTS = new Set(SET_UP.flatMap(folder => [folder, `${folder}/t`]))

/** What a race's writes answered: the answers their kinds may not give, and the set-up objects a 404 said were gone. */
export interface Answers { unexpected: string[], saidGone: string[] }

/**
 * Runs the schedule's clients side by side under `root` (`sendOf(c)`: how client c sends),
 * counting the answers of each kind in `seen`.
 */
export async function race (schedule: Schedule, root: string, sendOf: (client: number) => Send, seen: Map<string, number> = new Map()): Promise<Answers> {
  const answers: Answers = { unexpected: [], saidGone: [] }
  let imports = 0
  await Promise.all(schedule.map(async (actions, c) => {
    const send = sendOf(c)
    for (const a of actions) {
      let status: number
      switch (a.kind) {
        case 'import': {
          // Explicit ids, distinct between imports: two imports never refuse each other.
          const n = imports++
          const items = Array.from({ length: a.items }, (_, j) => talkBody({ id: `i${n}-${j}`, title: `Imported ${n}-${j}`, transitions: a.publish ? ['publish'] : [] }))
          status = await send('POST', `${root}${a.folder}/@import`, { items })
          break
        }
        case 'create':
          status = await send('POST', root + a.folder, a.type === 'talk' ? talkBody({ id: 'x', title: 'Created talk' }) : { '@type': 'folder', id: 'd', title: 'Created folder' })
          break
        case 'delete':
          status = await send('DELETE', root + a.target)
          break
        case 'patch':
          status = await send('PATCH', root + a.target, { description: `Changed by client ${c}` })
          break
        case 'transition':
          status = await send('POST', `${root}${a.target}/@workflow/${a.name}`, a.children ? { include_children: true } : {})
          break
      }
      seen.set(`${a.kind} ${status}`, (seen.get(`${a.kind} ${status}`) ?? 0) + 1)
      if (!ALLOWED[a.kind].includes(status)) answers.unexpected.push(`${status} for ${JSON.stringify(a)}`)
      const named = 'folder' in a ? a.folder : a.target
      if (status === 404 && SET_UP_OBJECTS.has(named)) answers.saidGone.push(root + named)
    }
  }))
  return answers
}
