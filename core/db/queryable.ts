/** How a query is sent. */
export interface QueryOptions {
  /**
   * The text is one of a few shapes that run again and again (traversal, the write of an object):
   * the server keeps it parsed and planned on each connection (a named prepared statement), so
   * that later runs send only the parameters. Not for texts that embed values: each would be kept.
   */
  prepared?: boolean
}

/** What a query needs: the pool itself or one transaction's client. */
export interface Queryable {
  query<R = any>(sql: string, params?: unknown[], options?: QueryOptions): Promise<{ rows: R[], rowCount: number }>
}
