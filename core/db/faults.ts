import type { Logger } from '../log.js'
import { setTimeout as sleep } from 'node:timers/promises'
import { OutageLog } from '../log.js'

/**
 * The SQLSTATEs (PostgreSQL's errcodes) after which the connection is gone or
 * was never made, besides class 08 (connection exception): the server ended it
 * (pg_terminate_backend and a fast shutdown send admin_shutdown), or does not
 * take connections now. Named so that @health and the log say why.
 */
const CONNECTION_ENDING: Record<string, string> = {
  '57P01': 'admin_shutdown',
  '57P02': 'crash_shutdown',
  '57P03': 'cannot_connect_now',
  '57P04': 'database_dropped',
  '57P05': 'idle_session_timeout',
  '25P03': 'idle_in_transaction_session_timeout',
  53300: 'too_many_connections',
  '08000': 'connection_exception',
  '08001': 'sqlclient_unable_to_establish_sqlconnection',
  '08003': 'connection_does_not_exist',
  '08004': 'sqlserver_rejected_establishment_of_sqlconnection',
  '08006': 'connection_failure',
  '08007': 'transaction_resolution_unknown',
  '08P01': 'protocol_violation'
}

/** Node's socket errors on the way to PostgreSQL. */
const SOCKET_ERRORS = new Set(['ECONNRESET', 'ECONNREFUSED', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN'])

const codeOf = (err: unknown): string | undefined => {
  const code = (err as { code?: unknown } | null)?.code
  return typeof code === 'string' ? code : undefined
}

/** Whether this error of a query means that its connection is gone (as opposed to an error of the statement). */
export function endsConnection (err: unknown): boolean {
  const code = codeOf(err)
  return code !== undefined && (code in CONNECTION_ENDING || code.startsWith('08') || SOCKET_ERRORS.has(code))
}

/**
 * Why a connection failed, in words that are safe to show anyone (@health is
 * public): the SQLSTATE with its name, or the socket error's code, never the
 * message (which may name hosts, users or databases). pg's own "Connection
 * terminated unexpectedly" (the socket closed) has no code.
 */
export function failureReason (err: unknown): string {
  const code = codeOf(err)
  if (code === undefined) return 'connection closed'
  const name = CONNECTION_ENDING[code]
  return name !== undefined ? `${code} ${name}` : code
}

/**
 * The database connection is gone or the server does not accept connections:
 * not a bug of the service, and nothing a client did wrong. PostgreSQL rolled
 * back the transaction it was in, unless it failed while committing (or while
 * running a single writing statement), when the outcome is unknown.
 */
export class DatabaseUnavailable extends Error {
  constructor (readonly reason: string, readonly mayHaveCommitted: boolean, cause: unknown) {
    super(`The database connection failed (${reason})`, { cause })
    this.name = 'DatabaseUnavailable'
  }
}

/**
 * Runs what follows a committed write (reading the answer, the next write of
 * a series): if the database fails now, the change is saved, so the failure
 * must never say "nothing was changed".
 */
export async function afterWriting<T> (work: () => Promise<T>): Promise<T> {
  try {
    return await work()
  } catch (err) {
    throw err instanceof DatabaseUnavailable && !err.mayHaveCommitted ? new DatabaseUnavailable(err.reason, true, err.cause) : err
  }
}

/** What @health tells about the connections since the process started. */
export interface FaultReport {
  since: string
  /** Open connections that ended under the service (terminated, server restarted, network). */
  connections_lost: number
  /** Queries and transactions that failed for want of a connection (a request answered 503, a job retried). */
  operations_failed: number
  last_failure: { at: string, reason: string } | null
}

/**
 * How long after its last failure an outage is over once operations succeed
 * (ms): the connections that one pg_terminate_backend (or one restart) ends
 * report it over a few milliseconds, between which new connections already
 * succeed. They are one outage, logged once.
 */
const QUIET_MS = 1_000

/**
 * Keeps count of the connection failures of one pool and logs an outage once:
 * when it starts, and when operations succeed again after a quiet second.
 */
export class ConnectionFaults {
  private readonly since = new Date().toISOString()
  private connectionsLost = 0
  private operationsFailed = 0
  private last: FaultReport['last_failure'] = null
  private lastFailedAt = 0
  /** A connection reports its end several times (the server's message, then the closed socket): it counts once. */
  private readonly lostConnections = new WeakSet<object>()
  private readonly outage: OutageLog

  constructor (log: Logger) {
    this.outage = new OutageLog(log, 'PostgreSQL',
      'what was using it failed and rolled back (a request answers 503, an index job is retried) and new connections are opened', 'error')
  }

  /** A connection ended under the service. */
  lost (connection: object, err: unknown): void {
    if (this.lostConnections.has(connection)) return
    this.lostConnections.add(connection)
    this.connectionsLost++
    this.note(err)
  }

  /** An operation failed for want of a connection: the error its caller sees. */
  failed (err: unknown, mayHaveCommitted: boolean): DatabaseUnavailable {
    this.operationsFailed++
    this.note(err)
    return new DatabaseUnavailable(failureReason(err), mayHaveCommitted, err)
  }

  /** An operation succeeded: the outage, if there was one, is over once failures stopped. */
  succeeded (): void {
    if (this.outage.isDown && Date.now() - this.lastFailedAt >= QUIET_MS) this.outage.recovered()
  }

  report (): FaultReport {
    return { since: this.since, connections_lost: this.connectionsLost, operations_failed: this.operationsFailed, last_failure: this.last }
  }

  private note (err: unknown): void {
    this.lastFailedAt = Date.now()
    this.last = { at: new Date(this.lastFailedAt).toISOString(), reason: failureReason(err) }
    this.outage.failed(err)
  }
}

/**
 * Runs `step` again when the database was unavailable, after 1 s, then 2 s …
 * (`attempts` in all); any other failure, or the last one, is thrown. For
 * steps that may run twice (a batch of a reindex): a long maintenance run
 * survives a connection terminated or a server restarted under it.
 */
export async function retryWhileUnavailable<T> (step: () => Promise<T>, attempts = 3): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await step()
    } catch (err) {
      if (!(err instanceof DatabaseUnavailable) || attempt >= attempts) throw err
      await sleep(1000 * 2 ** (attempt - 1))
    }
  }
}
