import { readdir, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { Db, Queryable } from './db.js'
import { migrationsDir } from '../config/paths.js'

/**
 * Applies the numbered SQL files of infra/migrations that the database has not
 * seen yet, in order, all in one transaction under an advisory lock, so that
 * two processes starting together do not race: the second waits for the lock,
 * then finds every file recorded and applies none. One transaction rather than
 * one per file: an empty database takes all eleven at first start, and each
 * commit was a WAL flush and two round trips more (docs/performance-history.md,
 * "Start-up"). A file that fails rolls back every file of that start.
 */
export async function migrate (db: Db, dir = migrationsDir): Promise<string[]> {
  const files = (await readdir(dir)).filter(f => /^\d+_.*\.sql$/.test(f)).sort()
  // Two queries on a current schema, rather than a transaction and a lock at every start.
  const seenBefore = await appliedNames(db)
  const pending = files.filter(file => !seenBefore.has(file))
  if (pending.length === 0) return []
  const scripts = await Promise.all(pending.map(async name => ({ name, sql: await readFile(join(dir, name), 'utf8') })))
  return await db.transaction(async tx => {
    await tx.query('SELECT pg_advisory_xact_lock(7340001)')
    // Under the lock: two processes creating it at once on an empty database could fail on pg_type's unique index.
    await tx.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
      name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`)
    // Another process may have applied some while this one waited for the lock.
    const seen = await appliedNames(tx)
    const applied: string[] = []
    for (const { name, sql } of scripts.filter(script => !seen.has(script.name))) {
      for (const statement of splitStatements(sql)) await tx.query(statement)
      await tx.query('INSERT INTO schema_migrations (name) VALUES ($1)', [name])
      applied.push(name)
    }
    return applied
  })
}

/** The files recorded as applied; none on an empty database, where the table does not exist yet. */
async function appliedNames (db: Queryable): Promise<Set<string>> {
  const { rows: [{ present }] } = await db.query<{ present: boolean }>("SELECT to_regclass('schema_migrations') IS NOT NULL AS present")
  if (!present) return new Set()
  return new Set((await db.query<{ name: string }>('SELECT name FROM schema_migrations')).rows.map(row => row.name))
}

/** Splits a migration on semicolons at line ends; our migrations keep to that form. */
function splitStatements (sql: string): string[] {
  return sql.split(/;\s*$/m).map(s => s.replace(/^\s*--.*$/gm, '').trim()).filter(s => s.length > 0)
}
