import { afterWriting } from '../db/faults.js'
import { escapeLike, type Db } from '../db/db.js'
import { ApiError, BadRequest, WorkflowException } from '../errors.js'
import { parseDate } from '../query/zope.js'
import { can } from '../security/permissions.js'
import type { Principal } from '../security/roles.js'
import type { Transition } from '../security/workflow.js'
import type { ContentRow, HistoryEntry, Located } from './rows.js'
import type { ContentStore } from './store.js'

/** Publishing dates a transition may set (ISO 8601). */
export interface TransitionDates { effective?: string, expires?: string }

/** An ISO 8601 date, or date-time with an optional UTC offset (seconds and fractions optional). */
const CLIENT_DATE = /^(\d{4}-\d{2}-\d{2})(?:T(\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?)(Z|[+-]\d{2}:?\d{2})?)?$/i

/**
 * A publishing date as clients send it: with a UTC offset, or without one
 * (Volto's date widget), which means UTC (docs/api.md). 400 otherwise.
 */
export function clientDate (value: string, field: string): string {
  const match = CLIENT_DATE.exec(value.trim())
  if (match === null) throw BadRequest(`Could not parse value '${value}' of '${field}' as a date.`)
  const [, day, time = '00:00:00', offset = 'Z'] = match
  return parseDate(`${day}T${time}${offset}`, field).toISOString()
}

/** Workflow transitions of objects, and their history. */
export class Transitions {
  constructor (private readonly db: Db, private readonly store: ContentStore) {}

  /** Transitions the caller may take on the object now. */
  available (located: Located, who: Principal): Array<[string, Transition]> {
    const workflow = located.type.workflow
    if (workflow === null) return []
    return Object.entries(workflow.transitions).filter(([, t]) =>
      t.from.includes(located.obj.review_state ?? '') && can(who, t.guard, located))
  }

  /**
   * Takes a transition from the state the object is in now (checked again
   * when another change came first, so that a concurrent edit is neither lost
   * nor checked against an old state), with its publishing dates; the
   * history records it.
   */
  async take (located: Located, name: string, who: Principal, comments: string, dates: TransitionDates): Promise<{ located: Located, entry: HistoryEntry }> {
    let entry: HistoryEntry | undefined
    const after = await this.store.changeOptimistically(located, async current => {
      const change = this.changeOf(current, name, who, comments, dates, new Date())
      entry = change.history
      return change
    })
    return { located: after, entry: { ...entry!, time: after.obj.modified } }
  }

  /**
   * What taking the transition `name` at `time` changes on the object as it
   * is (400 WorkflowException when the caller may not take it from its
   * state): its state, its publishing dates, its history entry. `take` writes
   * it; a bulk import applies it to objects it has not written yet.
   */
  changeOf (current: Located, name: string, who: Principal, comments: string, dates: TransitionDates, time: Date): { changes: Pick<ContentRow, 'data' | 'review_state'>, history: HistoryEntry } {
    const available = this.available(current, who).find(([id]) => id === name)
    if (available === undefined) throw WorkflowException(`The transition '${name}' is not available for ${current.obj.path} in the state '${current.obj.review_state ?? ''}'.`)
    const [, transition] = available
    const data: Record<string, unknown> = { ...current.obj.data }
    if (dates.effective !== undefined) data.effective = dates.effective
    if (dates.expires !== undefined) data.expires = dates.expires
    // As in Plone, the first transition without a publishing date sets it to now.
    if (data.effective === undefined && transition.to === 'published') data.effective = time.toISOString()
    return { changes: { data, review_state: transition.to }, history: { action: name, actor: who.userId, comments, review_state: transition.to, time } }
  }

  /**
   * Takes a transition on the object and, with `includeChildren`, on
   * everything inside it, as plone.restapi's `include_children` does:
   * objects already in the transition's target state are left as they
   * are; any other object the caller cannot take it on makes it a 400
   * before anything changes. Each object is its own write.
   */
  async takeRecursively (located: Located, name: string, who: Principal, comments: string, dates: TransitionDates, includeChildren: boolean): Promise<{ located: Located, entry: HistoryEntry }> {
    const inside = includeChildren && located.type.folderish ? await this.descendants(located) : []
    const pending = inside.filter(child => {
      const workflow = child.type.workflow
      if (workflow === null) return false
      if (this.available(child, who).some(([id]) => id === name)) return true
      const target = Object.hasOwn(workflow.transitions, name) ? workflow.transitions[name].to : undefined
      if (child.obj.review_state === target) return false
      throw WorkflowException(`The transition '${name}' is not available for everything inside ${located.obj.path}.`)
    })
    const result = await this.take(located, name, who, comments, dates)
    // The folder's transition is saved: a failure from here on must not be reported as "nothing was changed".
    for (const child of pending) {
      await afterWriting(async () => await this.take(child, name, who, comments, dates)).catch((err: unknown) => {
        // A child deleted since it was read has nothing left to take the transition: the folder's answer is no 404.
        if (!(err instanceof ApiError && err.statusCode === 404)) throw err
      })
    }
    return result
  }

  /** Everything inside a folder, parents before their children. */
  private async descendants (located: Located): Promise<Located[]> {
    const prefix = located.obj.path === '/' ? '' : located.obj.path
    const { rows } = await this.db.query<{ uid: string }>("SELECT uid FROM content WHERE path LIKE $1 || '/%' ORDER BY path", [escapeLike(prefix)])
    const found = await this.store.locateMany(rows.map(r => r.uid))
    return rows.map(r => found.get(r.uid)).filter((l): l is Located => l !== undefined)
  }

  async history (uid: string): Promise<HistoryEntry[]> {
    const { rows } = await this.db.query<HistoryEntry>('SELECT action, actor, comments, review_state, time FROM workflow_history WHERE uid = $1 ORDER BY seq', [uid])
    return rows
  }
}
