import fp from 'fastify-plugin'
import { mkdir } from 'node:fs/promises'
import { resolve } from 'node:path'
import { createEmbedded, createPostgres, type Db } from '../../core/db.js'
import { migrate } from '../../core/migrate.js'

/**
 * The database: PostgreSQL at DATABASE_URL, or the embedded one in DATA_DIR.
 * Migrations run before anything else touches it.
 */
export default fp(async fastify => {
  const { DATABASE_URL, DATA_DIR } = fastify.config
  let db: Db
  if (DATABASE_URL !== '') {
    db = createPostgres(DATABASE_URL)
  } else {
    const dir = resolve(DATA_DIR)
    await mkdir(dir, { recursive: true })
    db = await createEmbedded(dir)
  }
  try {
    const applied = await migrate(db)
    if (applied.length > 0) fastify.log.info({ applied }, 'database migrated')
  } catch (err) {
    await db.close()
    throw err
  }
  fastify.decorate('db', db)
  fastify.addHook('onClose', async () => { await db.close() })
}, { name: 'db' })
