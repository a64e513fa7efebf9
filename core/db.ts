import pg from 'pg'

/** Text matched literally inside a LIKE pattern (backslash is PostgreSQL's default escape character). */
export const escapeLike = (text: string): string => text.replace(/[\\%_]/g, c => '\\' + c)

/** What a query needs: the pool itself or one transaction's client. */
export interface Queryable {
  query<R = any>(sql: string, params?: unknown[]): Promise<{ rows: R[], rowCount: number }>
}

/**
 * The database the service talks to: a real PostgreSQL through `pg`, or the
 * same SQL on an embedded PostgreSQL (PGlite). Everything above this file is
 * written once against this interface.
 */
export interface Db extends Queryable {
  readonly kind: 'postgres' | 'embedded'
  /** Runs `fn` in one transaction: it commits when `fn` resolves and rolls back when it throws. */
  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T>
  /** Runs a script of several statements (migrations). */
  exec(sql: string): Promise<void>
  close(): Promise<void>
}

// timestamptz and date come back as ISO strings in both drivers' results only
// if asked; we keep them as Date objects (pg's default) and serialize at the edge.
pg.types.setTypeParser(20, (v: string) => Number(v)) // int8 (count(*)) as a number

export function createPostgres (connectionString: string): Db {
  const pool = new pg.Pool({ connectionString, max: 10 })
  // An idle client that loses its connection must not crash the process.
  pool.on('error', () => {})
  const normalise = (r: pg.QueryResult): { rows: any[], rowCount: number } => ({ rows: r.rows, rowCount: r.rowCount ?? 0 })
  return {
    kind: 'postgres',
    async query (sql, params) { return normalise(await pool.query(sql, params as unknown[])) },
    async transaction (fn) {
      const client = await pool.connect()
      try {
        await client.query('BEGIN')
        const result = await fn({ query: async (sql, params) => normalise(await client.query(sql, params as unknown[])) })
        await client.query('COMMIT')
        return result
      } catch (err) {
        await client.query('ROLLBACK').catch(() => {})
        throw err
      } finally {
        client.release()
      }
    },
    async exec (sql) { await pool.query(sql) },
    async close () { await pool.end() }
  }
}

export async function createEmbedded (dataDir: string): Promise<Db> {
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
    async close () { await db.close() }
  }
}
