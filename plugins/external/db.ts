import fp from 'fastify-plugin'
import type { Db } from '../../core/db/db.js'
import { openDatabase } from '../../core/db/open.js'

declare module 'fastify' {
  interface FastifyInstance {
    db: Db
  }
}

/** The database, migrated before any other plugin touches it. */
export default fp(async fastify => {
  const db = await openDatabase(fastify.config, fastify.log, 'web')
  fastify.decorate('db', db)
  fastify.addHook('onClose', async () => { await db.close() })
}, { name: 'db' })
