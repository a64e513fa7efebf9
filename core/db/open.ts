import { mkdir } from 'node:fs/promises'
import { resolve } from 'node:path'
import type { Config } from '../config/config.js'
import type { Logger } from '../log.js'
import { createEmbedded, createPostgres, type Db } from './db.js'
import { migrate } from './migrate.js'

/**
 * The database of every process: PostgreSQL at DATABASE_URL, or the embedded
 * one in DATA_DIR; migrations run before anything else touches it.
 * `process` names the process in pg_stat_activity (`application_name`),
 * unless DATABASE_URL names it already.
 */
export async function openDatabase (config: Pick<Config, 'DATABASE_URL' | 'DATA_DIR'>, log: Logger, process: string): Promise<Db> {
  let db: Db
  if (config.DATABASE_URL !== '') {
    db = createPostgres(config.DATABASE_URL, log, `talks-${process}`)
  } else {
    const dir = resolve(config.DATA_DIR)
    await mkdir(dir, { recursive: true })
    db = await createEmbedded(dir)
  }
  try {
    const applied = await migrate(db)
    if (applied.length > 0) log.info({ applied }, 'database migrated')
  } catch (err) {
    await db.close()
    throw err
  }
  return db
}
