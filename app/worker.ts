import { pathToFileURL } from 'node:url'
import { loadConfig } from '../core/config/config.js'
import { closeMetrics, listenMetrics, processMetrics } from '../core/metrics.js'
import { createLogger } from './log.js'
import { openServices } from './services.js'
import { closeOnSignals } from './signals.js'
import { startTracing } from './tracing.js'

/**
 * `npm run worker`: the index worker as a process of its own, with the web
 * process's configuration (the same environment variables and the settings
 * stored in the database): the database, the content types, Solr and the
 * queue, with the worker switched on — no HTTP, no first-start seeding.
 * SIGTERM lets the jobs in flight finish their batch before it exits, at
 * most SHUTDOWN_TIMEOUT_MS.
 */
async function main (): Promise<void> {
  const config = loadConfig()
  if (config.DATABASE_URL === '') {
    // Two processes must never open the embedded database's files.
    throw new Error('The index worker needs a PostgreSQL server (DATABASE_URL); with the embedded database use INDEX_WORKER=inline')
  }
  const log = createLogger(config.LOG_LEVEL)
  // Before the services are built: each decides then whether it traces. Its spans are sent last, at close.
  const tracing = await startTracing(config, 'worker')
  const services = await openServices(config, log, 'worker')
  const close = async (): Promise<void> => {
    await services.close()
    await tracing?.shutdown()
  }
  if (services.indexing === null) {
    // Not an error: the web processes deliver the outbox themselves, and a supervisor should not restart this in a loop.
    log.warn('async_indexing is off (SOLR_ASYNC): the index worker has nothing to do and exits')
    await close()
    return
  }
  const { indexing } = services
  // Its own metrics (docs/operations.md, "Metrics"): in this layout it makes the index calls to Solr, which the web processes' metrics do not see.
  const metrics = config.METRICS_PORT === undefined
    ? null
    : await listenMetrics(processMetrics({ db: services.db, outbox: services.outbox, solr: services.solr.client, queue: indexing.queue, log }),
      { port: config.METRICS_PORT, host: config.METRICS_HOST, token: config.METRICS_TOKEN }, log)
  closeOnSignals(log, {
    message: 'index worker shutting down: finishing the jobs in flight',
    drainMs: 0,
    close: async () => {
      if (metrics !== null) await closeMetrics(metrics)
      await close()
    },
    timeoutMs: config.SHUTDOWN_TIMEOUT_MS,
    // Past the bound the process exits: a job's transaction rolls back (its operations stay in the
    // outbox) and the job, its lock lapsed, returns to the queue as a stalled job for another worker.
    inFlight: () => indexing.activeJobs,
    unit: 'index job'
  })
  log.info({ database: services.db.kind, metrics: metrics?.address() ?? null }, 'index worker ready')
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  main().catch(err => {
    console.error(err instanceof Error ? err.message : err)
    process.exit(1)
  })
}
