import type { Logger } from '../log.js'
import type { Db } from './db.js'

/** The tables whose statistics the service's plans depend on most. */
const TABLES = ['content', 'catalog', 'workflow_history']
const LOOK_EVERY_MS = 10_000
/** Rows changed since the last analysis that make a table's statistics stale: autovacuum's rule (50 rows and 10 % of the table), at least a thousand. */
const staleAfter = (rows: number): number => Math.max(1000, 50 + rows * 0.1)
/** Taken while one process analyses, so that several processes do not analyse the same tables at once. */
const ANALYSE_LOCK = 7340003

/**
 * Keeps the planner's statistics fresh after bulk writes: every 10 s a
 * process looks at how many rows of the main tables changed since they were
 * last analysed (`pg_stat_user_tables`, whichever process or autovacuum did
 * it) and analyses the stale ones. Without it, a PostgreSQL running without
 * autovacuum plans a catalogue filled by one large import as if it were
 * empty (issue 23: listings 3× slower); with autovacuum on, this finds
 * nothing to do (it uses autovacuum's threshold).
 */
export class FreshStatistics {
  private timer: NodeJS.Timeout | null = null
  private looking = false

  constructor (private readonly db: Db, private readonly log: Logger) {}

  start (): void {
    this.timer = setInterval(() => { void this.look() }, LOOK_EVERY_MS)
    this.timer.unref()
  }

  /** Analyses the tables whose statistics are stale; answers their names. */
  async look (): Promise<string[]> {
    if (this.looking) return []
    this.looking = true
    try {
      const { rows } = await this.db.query<{ name: string, live: string, changed: string }>(`SELECT relname AS name, n_live_tup AS live, n_mod_since_analyze AS changed
        FROM pg_stat_user_tables WHERE schemaname = current_schema() AND relname = ANY($1)`, [TABLES])
      const stale = rows.filter(row => Number(row.changed) >= staleAfter(Number(row.live))).map(row => row.name)
      if (stale.length === 0) return []
      // ANALYZE may run in a transaction: the lock ends with it, on the connection that took it.
      const analysed = await this.db.transaction(async tx => {
        const { rows: [{ locked }] } = await tx.query<{ locked: boolean }>('SELECT pg_try_advisory_xact_lock($1) AS locked', [ANALYSE_LOCK])
        if (locked) await tx.query(`ANALYZE ${stale.map(name => `"${name}"`).join(', ')}`)
        return locked
      })
      if (!analysed) return []
      this.log.info({ tables: stale }, 'statistics were stale after bulk writes: analysed')
      return stale
    } catch (err) {
      this.log.warn({ err }, 'could not refresh the planner statistics')
      return []
    } finally {
      this.looking = false
    }
  }

  close (): void {
    if (this.timer !== null) clearInterval(this.timer)
  }
}
