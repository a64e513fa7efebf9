import { pathToFileURL } from 'node:url'
import { loadConfig } from './config.js'
import { buildServer } from './server.js'
import { closeOnSignals } from './signals.js'

/**
 * `npm run worker`: the index worker as a process of its own, with the web
 * process's configuration (the same environment variables and the settings
 * stored in the database). It builds the same app — database, content
 * types, Solr, the queue — with the worker switched on, and does not listen.
 * SIGTERM lets the jobs in flight finish before it exits.
 */
async function main (): Promise<void> {
  const config = loadConfig()
  if (config.DATABASE_URL === '') {
    // Two processes must never open the embedded database's files.
    throw new Error('The index worker needs a PostgreSQL server (DATABASE_URL); with the embedded database use INDEX_WORKER=inline')
  }
  const fastify = await buildServer({ ...config, INDEX_WORKER: 'inline' })
  await fastify.ready()
  if (fastify.indexing === null) {
    // Not an error: the web processes deliver the outbox themselves, and a supervisor should not restart this in a loop.
    fastify.log.warn('async_indexing is off (SOLR_ASYNC): the index worker has nothing to do and exits')
    await fastify.close()
    return
  }
  closeOnSignals(fastify, 'index worker shutting down: finishing the jobs in flight')
  fastify.log.info({ database: fastify.db.kind }, 'index worker ready')
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  main().catch(err => {
    console.error(err instanceof Error ? err.message : err)
    process.exit(1)
  })
}
