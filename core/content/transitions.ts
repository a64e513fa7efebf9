import type { Db } from '../db/db.js'
import { WorkflowException } from '../errors.js'
import { can } from '../security/permissions.js'
import type { Principal } from '../security/roles.js'
import type { Transition } from '../security/workflow.js'
import type { HistoryEntry, Located } from './rows.js'
import type { ContentStore } from './store.js'

/** Publishing dates a transition may set (ISO 8601). */
export interface TransitionDates { effective?: string, expires?: string }

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
      const available = this.available(current, who).find(([id]) => id === name)
      if (available === undefined) throw WorkflowException(`The transition '${name}' is not available for ${current.obj.path} in the state '${current.obj.review_state ?? ''}'.`)
      const [, transition] = available
      const data: Record<string, unknown> = { ...current.obj.data }
      if (dates.effective !== undefined) data.effective = dates.effective
      if (dates.expires !== undefined) data.expires = dates.expires
      // As in Plone, the first transition without a publishing date sets it to now.
      if (data.effective === undefined && transition.to === 'published') data.effective = new Date().toISOString()
      entry = { action: name, actor: who.userId, comments, review_state: transition.to, time: new Date() }
      return { changes: { data, review_state: transition.to }, history: entry }
    })
    return { located: after, entry: { ...entry!, time: after.obj.modified } }
  }

  async history (uid: string): Promise<HistoryEntry[]> {
    const { rows } = await this.db.query<HistoryEntry>('SELECT action, actor, comments, review_state, time FROM workflow_history WHERE uid = $1 ORDER BY seq', [uid])
    return rows
  }
}
