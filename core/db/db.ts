import type { Logger } from '../log.js'
import { createHash } from 'node:crypto'
import pg from 'pg'
import pgCopy from 'pg-copy-streams'
import { PassThrough, type Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { ConnectionFaults, endsConnection, type FaultReport } from './faults.js'
import { embeddedNotifications, postgresNotifications, type Notifications } from './notifications.js'
import type { Queryable, QueryOptions } from './queryable.js'
import { stringBytes } from '../heap-size.js'
import { tracing } from '../tracing.js'
import { copySpan, statementSpans } from './traced.js'

/** Text matched literally inside a LIKE pattern (backslash is PostgreSQL's default escape character). */
export const escapeLike = (text: string): string => text.replace(/[\\%_]/g, c => '\\' + c)

export type { Queryable, QueryOptions } from './queryable.js'

/**
 * The database the service talks to: a real PostgreSQL through `pg`, or the
 * same SQL on an embedded PostgreSQL (PGlite). Everything above this file is
 * written once against this interface.
 */
export interface Db extends Queryable {
  readonly kind: 'postgres' | 'embedded'
  /** Runs `fn` in one transaction: it commits when `fn` resolves and rolls back when it throws. */
  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T>
  /** Runs a script of several statements, outside any transaction. */
  exec(sql: string): Promise<void>
  /** The connection failures since start (none for the embedded database, which has no connections). */
  faults(): FaultReport
  /** Changes other processes made to what this one keeps in memory (core/db/notifications.ts). */
  readonly notifications: Notifications
  /**
   * What `COPY (…) TO STDOUT` sends, as a stream read at the pace of its
   * reader (PostgreSQL's connection only; the embedded database has none).
   * The connection is the stream's until it ends: one left mid-COPY (the
   * reader went away) is closed, not handed out again. A slow reader holds
   * it as long: null when COPY_CONNECTIONS of the pool already stream, so
   * that readers, however slow or many, never take the connections the
   * other requests need (the caller reads otherwise).
   */
  readonly copyOut?: (sql: string) => Readable | null
  /** The pool's connections now (PostgreSQL's; the embedded database has no pool): for the metrics. */
  readonly connections?: () => { total: number, idle: number, waiting: number }
  close(): Promise<void>
}

// timestamptz and date come back as ISO strings in both drivers' results only
// if asked; we keep them as Date objects (pg's default) and serialize at the edge.
pg.types.setTypeParser(20, (v: string) => Number(v)) // int8 (count(*)) as a number

/** A statement that only reads: when its connection ends, nothing it did can have been committed. */
const reads = (sql: string): boolean => /^\s*select\b/i.test(sql)

/**
 * The most statement texts kept prepared, and the bytes their texts may hold here (core/heap-size.ts):
 * each connection keeps each of them (parsed and planned in its server process). The texts asked
 * for are a few dozen of a few kilobytes, all written in the code; a caller that asked for texts
 * that embed values would reach a bound, and its further texts run unprepared instead of growing
 * this map and every server process. A name is never forgotten: a connection may have prepared it.
 */
const MAX_PREPARED = 200
const PREPARED_TEXT_BYTES = 2 * 1024 * 1024

/** pg's query configs of one pool: a text asked to be prepared is named (each connection prepares it once), within the bounds. */
function statements (): (sql: string, params: unknown[] | undefined, options: QueryOptions | undefined) => pg.QueryConfig {
  const names = new Map<string, string>()
  let bytes = 0
  return (sql, params, options) => {
    let name = options?.prepared === true ? names.get(sql) : undefined
    if (options?.prepared === true && name === undefined && names.size < MAX_PREPARED && bytes + stringBytes(sql) <= PREPARED_TEXT_BYTES) {
      name = 'p' + createHash('sha1').update(sql).digest('hex').slice(0, 24)
      names.set(sql, name)
      bytes += stringBytes(sql)
    }
    return { text: sql, values: params, ...(name !== undefined ? { name } : {}) }
  }
}

/** The connections of one process's pool. */
const POOL_SIZE = 10

/** Of those, the most that stream a COPY at once (Db.copyOut): each is held by its reader, at the reader's pace. */
const COPY_CONNECTIONS = 3

/** How long a request waits for a connection (ms): a new one to a server that answers takes milliseconds. */
const CONNECT_TIMEOUT_MS = 5_000

/**
 * Queries and transactions on a pool of PostgreSQL connections. PostgreSQL may
 * end a connection at any time (pg_terminate_backend, a restart, a failover,
 * the network): the operation using it fails with DatabaseUnavailable, the
 * pool replaces the connection, and the process goes on.
 */
export function createPostgres (connectionString: string, log: Logger, applicationName = 'talks'): Db {
  // A server that does not answer at all (a blackholed host) must fail a request with 503, not hang it.
  // An application_name in the connection string wins (pg reads it last).
  const pool = new pg.Pool({ connectionString, max: POOL_SIZE, connectionTimeoutMillis: CONNECT_TIMEOUT_MS, application_name: applicationName })
  const faults = new ConnectionFaults(log)
  const statement = statements()
  const notifications = postgresNotifications(connectionString, applicationName, log, (connection, err) => { faults.lost(connection, err) })
  /** The first error of each client whose connection ended. */
  const ended = new WeakMap<pg.PoolClient, Error>()
  // Every client listens for errors from the moment it is connected until it is gone: pg-pool
  // listens on idle clients only, and a client without a listener whose connection ends (between
  // two queries of a transaction, or just as the pool hands it out) emits an error that ends the
  // process. The 'connect' event comes before anyone can use the client.
  pool.on('connect', client => {
    client.on('error', err => {
      if (!ended.has(client)) ended.set(client, err)
      faults.lost(client, err)
    })
  })
  // pg-pool re-emits the errors of idle clients (and drops them); without a listener they too would end the process.
  pool.on('error', (err, client) => { faults.lost(client, err) })
  const normalise = (r: pg.QueryResult): { rows: any[], rowCount: number } => ({ rows: r.rows, rowCount: r.rowCount ?? 0 })
  // Every statement of the pool is sent by one of these two, chosen once: with tracing on, each is a
  // client span of the request or job it serves (core/db/traced.ts); off, it is sent as it is.
  const traced = tracing()
  const inSpan = traced === undefined ? undefined : statementSpans(traced)
  const send = inSpan === undefined
    ? async (client: pg.PoolClient, sql: string, params?: unknown[], options?: QueryOptions) => normalise(await client.query(statement(sql, params, options)))
    : async (client: pg.PoolClient, sql: string, params?: unknown[], options?: QueryOptions) => await inSpan(client, sql, async () => normalise(await client.query(statement(sql, params, options))))
  /** BEGIN, COMMIT, ROLLBACK and scripts: a text alone. */
  const sendText = inSpan === undefined
    ? async (client: pg.PoolClient, sql: string) => await client.query(sql)
    : async (client: pg.PoolClient, sql: string) => await inSpan(client, sql, async () => await client.query(sql))

  /** The clients that have served an operation: one of them may have ended while it sat idle in the pool. */
  const served = new WeakSet<pg.PoolClient>()
  /** Connections streaming a COPY now. */
  let copying = 0

  /**
   * Runs `work` on a client of the pool. The client goes back to the pool
   * only when its connection works and no transaction is left open on it;
   * otherwise it is released with the error, which makes the pool destroy it
   * instead of handing it out again. `uncertain` tells whether a failure now
   * would leave the outcome unknown (a COMMIT in flight); `repeatable`, whether
   * nothing of `work` can have taken effect (a read, or a transaction whose
   * BEGIN failed).
   *
   * A connection that ends while idle in the pool (the server restarted or
   * terminated it, a firewall dropped it) is found out only when it is used:
   * the server's message may still be on its way, or a silently dropped socket
   * says nothing until written to. So a repeatable operation whose connection
   * had served before is run again on another one — each of the pool's idle
   * connections may have ended with it, so up to the pool's size more times.
   * (A read whose connection ends while it runs is sent again too: it changed
   * nothing.) A connection opened for the operation that fails ends it: then
   * the server itself is unavailable, and the client is told so at once.
   */
  async function withClient<T> (work: (client: pg.PoolClient) => Promise<T>, uncertain: () => boolean, repeatable: () => boolean): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      let client: pg.PoolClient
      try {
        client = await pool.connect()
      } catch (err) {
        // Not connecting is never a bug of the statement: the server is down, restarting, full, or unreachable.
        throw faults.failed(err, false)
      }
      const reused = served.has(client)
      served.add(client)
      let failure: Error | undefined
      try {
        const result = await work(client)
        failure = ended.get(client)
        faults.succeeded()
        return result
      } catch (err) {
        // The query's own error (the server's 57P01) says more than the closed socket that follows it.
        failure = endsConnection(err) ? err as Error : ended.get(client)
        if (failure === undefined) throw err
        faults.lost(client, failure)
        if (!(reused && attempt < POOL_SIZE && repeatable())) throw faults.failed(failure, uncertain())
      } finally {
        client.release(failure ?? (client.getTransactionStatus() === 'I' ? undefined : new Error('released inside a transaction')))
      }
    }
  }

  return {
    kind: 'postgres',
    async query (sql, params, options) {
      // Whether it reads is asked only when it failed: not on every statement.
      return await withClient(async client => await send(client, sql, params, options),
        () => !reads(sql), () => reads(sql))
    },
    async transaction (fn) {
      let begun = false
      let committing = false
      return await withClient(async client => {
        await sendText(client, 'BEGIN')
        begun = true
        let result
        try {
          result = await fn({ query: async (sql, params, options) => await send(client, sql, params, options) })
        } catch (err) {
          // A connection that ended took its transaction with it. When ROLLBACK fails the
          // client is left inside the transaction, and withClient destroys it.
          if (!endsConnection(err)) await sendText(client, 'ROLLBACK').catch(() => {})
          throw err
        }
        // The connection may end after the server committed and before it said so.
        committing = true
        await sendText(client, 'COMMIT')
        return result
      }, () => committing, () => !begun)
    },
    // A script may write before it fails: never run twice.
    async exec (sql) { await withClient(async client => await sendText(client, sql), () => true, () => false) },
    copyOut (sql) {
      if (copying >= COPY_CONNECTIONS) return null
      copying++
      const out = new PassThrough()
      pool.connect().then(client => {
        const span = traced === undefined ? undefined : copySpan(traced, client, sql)
        pipeline(client.query(pgCopy.to(sql)), out).then(() => { span?.end(); client.release() }, (err: Error) => {
          span?.end(err)
          // A reader that went away is no fault of PostgreSQL's; its connection, left mid-COPY, is closed all the same.
          if (endsConnection(err)) faults.lost(client, err)
          client.release(err)
        }).finally(() => { copying-- })
      }, (err: unknown) => {
        copying--
        out.destroy(faults.failed(err, false))
      })
      return out
    },
    faults: () => faults.report(),
    connections: () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount }),
    notifications,
    async close () {
      await notifications.close()
      await pool.end()
    }
  }
}

export async function createEmbedded (dataDir: string): Promise<Db> {
  const noFaults: FaultReport = { since: new Date().toISOString(), connections_lost: 0, operations_failed: 0, last_failure: null }
  // Loaded lazily: the WASM build costs memory and start-up time that a
  // deployment on a real PostgreSQL should not pay.
  const { PGlite } = await import('@electric-sql/pglite')
  const db = await PGlite.create(dataDir)
  // PGlite reports affectedRows 0 for a SELECT; pg's rowCount counts the rows returned.
  const normalise = (r: { rows: any[], affectedRows?: number }): { rows: any[], rowCount: number } =>
    ({ rows: r.rows, rowCount: r.rows.length > 0 ? r.rows.length : r.affectedRows ?? 0 })
  return {
    kind: 'embedded',
    async query (sql, params) { return normalise(await db.query(sql, params as any[])) },
    async transaction (fn) {
      return await db.transaction(async tx => await fn({ query: async (sql, params) => normalise(await tx.query(sql, params as any[])) }))
    },
    async exec (sql) { await db.exec(sql) },
    // It runs in this process: no connection to lose.
    faults: () => noFaults,
    notifications: await embeddedNotifications(async (channel, callback) => await db.listen(channel, callback)),
    async close () { await db.close() }
  }
}
