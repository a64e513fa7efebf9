import pg from 'pg'
import type { Logger } from '../log.js'
import { OutageLog } from '../log.js'
import type { Queryable } from './queryable.js'

/**
 * What a process keeps in memory of what another process may change (the
 * Solr settings, cached principals, …) is told of every change through
 * PostgreSQL's LISTEN/NOTIFY: one channel, a topic and a key per message.
 * A notification sent inside a transaction is delivered at its commit, to
 * every listening process, the sender included.
 */
export const CHANNEL = 'talks_changes'

/**
 * `key` null: anything of the topic may have changed (a listening connection was lost and is back).
 * `parts`: which parts of what `key` names changed, when its sender said (the catalogue columns a
 * write changed); absent, any may have. `items`: which items changed, when its sender said (the
 * objects a write changed); absent, any may have.
 */
export type ChangeListener = (key: string | null, parts?: readonly string[], items?: readonly string[]) => void

/**
 * The most items a notification names (its payload may hold 8000 bytes): a
 * change of more is sent as a change of any.
 */
export const MAX_ITEMS = 150

export interface Notifications {
  /** Tells every process, this one included, that `key` of `topic` changed (`items` of it, when known); inside a transaction, at its commit. */
  notify: (q: Queryable, topic: string, key?: string, items?: readonly string[]) => Promise<void>
  /** Hears every process's changes of `topic`. */
  onChange: (topic: string, listener: ChangeListener) => void
  /**
   * Whether changes are heard now. While they are not (before the first
   * LISTEN, while its connection is lost), a cache must not trust itself.
   */
  readonly listening: boolean
  close: () => Promise<void>
}

/**
 * A listener of changes made by other processes than the one whose
 * notifications carry the key `own` (its own changes it applied when they
 * committed; their echo is skipped). A change without a key — a lost
 * listening connection among them — is everybody's.
 */
export const othersOnly = (own: string | undefined, changed: (parts?: readonly string[], items?: readonly string[]) => void): ChangeListener => (key, parts, items) => {
  if (key === null) changed()
  else if (key !== own) changed(parts, items)
}

/** A message: its topic and key, then its parts (null: any) and its items (null: any), each only when it names them. */
const encode = (topic: string, key: string | undefined, parts?: readonly string[], items?: readonly string[]): string => {
  const named = items !== undefined && items.length <= MAX_ITEMS ? items : undefined
  if (named !== undefined) return JSON.stringify([topic, key ?? null, parts ?? null, named])
  return JSON.stringify(parts === undefined ? [topic, key ?? null] : [topic, key ?? null, parts])
}

/** The notification as an SQL expression, for a statement that notifies as part of its work (and says which `parts` and `items` it changed, when it knows). */
export const notification = (p: (value: unknown) => string, topic: string, key?: string, parts?: readonly string[], items?: readonly string[]): string =>
  `pg_notify(${p(CHANNEL)}, ${p(encode(topic, key, parts, items))})`

/** The parts (or items) a message names, when it names a list of them: anything else (a sender of an older version) means any. */
const partsOf = (value: unknown): readonly string[] | undefined =>
  Array.isArray(value) && value.every(part => typeof part === 'string') ? value : undefined

/** The listeners of each topic, and the dispatch of one message to them. */
class Listeners {
  private readonly byTopic = new Map<string, ChangeListener[]>()

  add (topic: string, listener: ChangeListener): void {
    this.byTopic.set(topic, [...this.byTopic.get(topic) ?? [], listener])
  }

  dispatch (payload: string | undefined): void {
    let topic: unknown, key: unknown, parts: unknown, items: unknown
    try {
      [topic, key, parts, items] = JSON.parse(payload ?? '') as [unknown, unknown, unknown, unknown]
    } catch {
      return // not ours
    }
    const named = typeof key === 'string' ? key : null
    // A message without a key names no parts: anything of the topic may have changed.
    for (const listener of this.byTopic.get(String(topic)) ?? []) listener(named, named === null ? undefined : partsOf(parts), named === null ? undefined : partsOf(items))
  }

  /** Everything may have changed. */
  all (): void {
    for (const listeners of this.byTopic.values()) for (const listener of listeners) listener(null)
  }

  get empty (): boolean { return this.byTopic.size === 0 }
}

const FIRST_RETRY_MS = 500
const MAX_RETRY_MS = 15_000

/**
 * Notifications on PostgreSQL: one dedicated connection LISTENs (a pooled
 * one cannot: it is handed to other queries). When that connection is lost,
 * every listener hears that anything may have changed, at once (caches stop
 * trusting themselves) and again once it listens anew (what changed
 * meanwhile was never heard); it reconnects with backoff. `connectionLost`
 * hears of a listening connection that ended.
 */
export function postgresNotifications (connectionString: string, applicationName: string, log: Logger, connectionLost: (connection: object, err: unknown) => void): Notifications {
  const listeners = new Listeners()
  const outage = new OutageLog(log, 'Listening to PostgreSQL notifications', 'caches of other processes\' changes are bypassed until it is back')
  let client: pg.Client | null = null
  let listening = false
  let closed = false
  let retryMs = FIRST_RETRY_MS
  let timer: NodeJS.Timeout | null = null

  const lost = (err: unknown): void => {
    if (client === null) return
    const gone = client
    client = null
    // A connection that listened and ended is one the service lost, as a pooled one would be (@health counts it).
    if (listening) connectionLost(gone, err)
    gone.removeAllListeners('notification')
    gone.end().catch(() => {})
    listening = false
    outage.failed(err)
    listeners.all()
    if (!closed) {
      timer = setTimeout(() => { void connect() }, retryMs)
      timer.unref()
      retryMs = Math.min(retryMs * 2, MAX_RETRY_MS)
    }
  }

  async function connect (): Promise<void> {
    if (closed || client !== null) return
    const next = new pg.Client({ connectionString, application_name: `${applicationName}-listen` })
    client = next
    // Without a listener, an error of this connection would end the process.
    next.on('error', err => { if (client === next) lost(err) })
    next.on('end', () => { if (client === next) lost(new Error('the connection ended')) })
    next.on('notification', message => { listeners.dispatch(message.payload) })
    try {
      await next.connect()
      await next.query(`LISTEN ${CHANNEL}`)
    } catch (err) {
      if (client === next) lost(err)
      return
    }
    if (client !== next) return
    listening = true
    retryMs = FIRST_RETRY_MS
    outage.recovered()
    listeners.all()
  }

  return {
    async notify (q, topic, key, items) {
      await q.query('SELECT pg_notify($1, $2)', [CHANNEL, encode(topic, key, undefined, items)])
    },
    onChange (topic, listener) {
      const first = listeners.empty
      listeners.add(topic, listener)
      if (first) void connect()
    },
    get listening () { return listening },
    async close () {
      closed = true
      if (timer !== null) clearTimeout(timer)
      const last = client
      client = null
      listening = false
      await last?.end().catch(() => {})
    }
  }
}

/** The embedded database serves one process: its own notifications, delivered at commit by PGlite. */
export async function embeddedNotifications (listen: (channel: string, callback: (payload: string) => void) => Promise<unknown>): Promise<Notifications> {
  const listeners = new Listeners()
  await listen(CHANNEL, payload => { listeners.dispatch(payload) })
  return {
    async notify (q, topic, key, items) {
      await q.query('SELECT pg_notify($1, $2)', [CHANNEL, encode(topic, key, undefined, items)])
    },
    onChange (topic, listener) { listeners.add(topic, listener) },
    listening: true,
    async close () {}
  }
}
