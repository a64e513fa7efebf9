/** What a query needs: the pool itself or one transaction's client. */
export interface Queryable {
  query<R = any>(sql: string, params?: unknown[]): Promise<{ rows: R[], rowCount: number }>
}
