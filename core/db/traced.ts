import type pg from 'pg'
import { errorType, type SpanAttributes, type Tracing } from '../tracing.js'

/**
 * What a statement's span says of it, by OpenTelemetry's database conventions:
 * its name (`SELECT talks`: the operation and the database), the operation,
 * and the statement's text as the code wrote it — parameters stay `$1`, `$2`;
 * their values (what users sent) are never recorded. Kept per text: the texts
 * are a few dozen shapes written in the code; past MAX_KEPT (texts that embed
 * something, such as a list's length in its placeholders) they are derived each time.
 */
interface Described { name: string, attributes: SpanAttributes }

const MAX_KEPT = 500

/** The first operation of a statement: its first word, or for `WITH …` the first data-changing or reading statement inside. */
function operationOf (sql: string): string {
  const first = /^\s*([A-Za-z]+)/.exec(sql)?.[1]?.toUpperCase() ?? 'SQL'
  if (first !== 'WITH') return first
  return /\b(INSERT|UPDATE|DELETE|MERGE|SELECT)\b/i.exec(sql)?.[1]?.toUpperCase() ?? first
}

/** The connection's address, port and database, as pg resolved them (the same for every client of a pool). */
function serverOf (client: pg.ClientBase): SpanAttributes {
  const { host, port, database } = client as unknown as { host?: string, port?: number, database?: string }
  const server: SpanAttributes = {}
  if (typeof host === 'string' && host !== '') server['server.address'] = host
  if (typeof port === 'number') server['server.port'] = port
  if (typeof database === 'string' && database !== '') server['db.namespace'] = database
  return server
}

/**
 * Runs each statement of a pool inside a client span (core/tracing.ts): `send(client, sql, run)`
 * sends it by `run`. A failure's span carries PostgreSQL's SQLSTATE (`db.response.status_code`,
 * `error.type`), not its message, which may quote a value (a duplicate key's).
 */
export function statementSpans (tracing: Tracing): <T>(client: pg.ClientBase, sql: string, run: () => Promise<T>) => Promise<T> {
  const described = new Map<string, Described>()
  let server: SpanAttributes | undefined
  const describe = (client: pg.ClientBase, sql: string): Described => {
    let d = described.get(sql)
    if (d === undefined) {
      server ??= serverOf(client)
      const operation = operationOf(sql)
      const database = server['db.namespace']
      d = {
        name: database === undefined ? operation : `${operation} ${database}`,
        attributes: { 'db.system.name': 'postgresql', 'db.system': 'postgresql', ...server, 'db.operation.name': operation, 'db.query.text': sql }
      }
      if (described.size < MAX_KEPT) described.set(sql, d)
    }
    return d
  }
  const failure = (err: unknown): SpanAttributes => {
    const type = errorType(err)
    const code = (err as { code?: unknown } | null)?.code
    return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) ? { 'error.type': type, 'db.response.status_code': code } : { 'error.type': type }
  }
  return async (client, sql, run) => {
    const { name, attributes } = describe(client, sql)
    return await tracing.client(name, attributes, run, failure)
  }
}

/** The span of a COPY read at its reader's pace (Db.copyOut): started now, ended by the caller. */
export function copySpan (tracing: Tracing, client: pg.ClientBase, sql: string): { end: (err?: unknown) => void } {
  const server = serverOf(client)
  const database = server['db.namespace']
  const span = tracing.clientStarted(database === undefined ? 'COPY' : `COPY ${database}`,
    { 'db.system.name': 'postgresql', 'db.system': 'postgresql', ...server, 'db.operation.name': 'COPY', 'db.query.text': sql })
  return { end: err => { span?.end(err === undefined ? undefined : { 'error.type': errorType(err) }) } }
}
