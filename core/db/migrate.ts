import { readdir, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { Db } from './db.js'
import { migrationsDir } from '../config/paths.js'

/**
 * Applies the numbered SQL files of infra/migrations that the database has not
 * seen yet, each in its own transaction, under an advisory lock so that two
 * processes starting together do not race.
 */
export async function migrate (db: Db, dir = migrationsDir): Promise<string[]> {
  await db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
    name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`)
  const files = (await readdir(dir)).filter(f => /^\d+_.*\.sql$/.test(f)).sort()
  // One query on a current schema, rather than a transaction and a lock for every file at every start.
  const seenBefore = new Set((await db.query<{ name: string }>('SELECT name FROM schema_migrations')).rows.map(row => row.name))
  const applied: string[] = []
  for (const name of files.filter(file => !seenBefore.has(file))) {
    const sql = await readFile(join(dir, name), 'utf8')
    const done = await db.transaction(async tx => {
      await tx.query('SELECT pg_advisory_xact_lock(7340001)')
      const seen = await tx.query('SELECT 1 FROM schema_migrations WHERE name = $1', [name])
      if (seen.rowCount > 0) return false
      for (const statement of splitStatements(sql)) await tx.query(statement)
      await tx.query('INSERT INTO schema_migrations (name) VALUES ($1)', [name])
      return true
    })
    if (done) applied.push(name)
  }
  return applied
}

/** Splits a migration on semicolons at line ends; our migrations keep to that form. */
function splitStatements (sql: string): string[] {
  return sql.split(/;\s*$/m).map(s => s.replace(/^\s*--.*$/gm, '').trim()).filter(s => s.length > 0)
}
