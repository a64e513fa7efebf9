import { pathToFileURL } from 'node:url'
import { loadConfig } from '../core/config/config.js'
import { createLogger } from './log.js'
import { openServices } from './services.js'
import { closeOnSignals } from './signals.js'

/**
 * `npm run worker`: the index worker as a process of its own, with the web
 * process's configuration (the same environment variables and the settings
 * stored in the database): the database, the content types, Solr and the
 * queue, with the worker switched on — no HTTP, no first-start seeding.
 * SIGTERM lets the jobs in flight finish before it exits.
 */
async function main (): Promise<void> {
  const config = loadConfig()
  if (config.DATABASE_URL === '') {
    // Two processes must never open the embedded database's files.
    throw new Error('The index worker needs a PostgreSQL server (DATABASE_URL); with the embedded database use INDEX_WORKER=inline')
  }
  const log = createLogger(config.LOG_LEVEL)
  const services = await openServices(config, log, 'worker')
  if (services.indexing === null) {
    // Not an error: the web processes deliver the outbox themselves, and a supervisor should not restart this in a loop.
    log.warn('async_indexing is off (SOLR_ASYNC): the index worker has nothing to do and exits')
    await services.close()
    return
  }
  closeOnSignals(log, services.close, 'index worker shutting down: finishing the jobs in flight')
  log.info({ database: services.db.kind }, 'index worker ready')
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  main().catch(err => {
    console.error(err instanceof Error ? err.message : err)
    process.exit(1)
  })
}
