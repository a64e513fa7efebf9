import { parseArgs } from 'node:util'
import { pathToFileURL } from 'node:url'
import { loadConfig, type Config } from '../core/config/config.js'
import type { Logger } from '../core/log.js'
import { DatabaseUnavailable } from '../core/db/faults.js'
import { openDatabase } from '../core/db/open.js'
import { Solr, SolrUnavailable } from '../core/solr/client.js'
import { SolrCloudAdmin, type DeployOptions } from '../core/solr/cloud.js'
import { schemaDrift, solrFields } from '../core/solr/configset.js'
import { SolrSettingsStore } from '../core/solr/settings.js'
import { contentTypesDir, solrConfDir } from '../core/config/paths.js'
import { ContentTypeRegistry } from '../core/content/registry.js'
import { indexingStatus, type IndexingStatus } from '../core/indexing/queue/status.js'
import { createLogger } from './log.js'
import { openServices } from './services.js'
import { progressPrinter, type Output } from './progress.js'
import { configsetFiles, driftCount, driftLine, liveSchemaLine, writeConfigset } from '../core/solr/maintenance.js'

/** How long status and retry wait for the queue's Redis connection (ms). */
const REDIS_WAIT_MS = 3_000
const OPERATIONS = ['reindex', 'sync', 'clear', 'schema', 'status', 'retry', 'deploy']
const USAGE = `usage: npm run solr -- <reindex|sync|clear|schema> [--check] [--type T] [--write]
       npm run solr -- <status|retry>
       npm run solr -- deploy [--shards N] [--replicas N] [--configset NAME]
  reindex [--type T]   index every object (or every object of type T) in batches, then commit
  sync [--check]       compare the catalogue with Solr by UID and modified; --check only reports
                       (exit code 1 on drift), otherwise index missing/stale and remove orphans
  clear                remove every document from the Solr core
  schema               print the generated schema.xml
  schema --check       check the generated configset against infra/solr/conf and the live core's
                       fields (exit code 1 on difference)
  schema --write       write the generated configset to infra/solr/conf
  status               indexing: the queue (waiting, in flight, delayed, failed jobs with Solr's
                       message), the outbox and the age of its oldest operation
  retry                after fixing what Solr refused: queue the refused operations again and
                       drop the failed jobs (asynchronous indexing)
  deploy               SolrCloud: upload the generated configset (Configsets API) and create the
                       collection that SOLR_BASE names with --shards (1) and --replicas (1), or
                       reload it when it exists; --configset: its name in ZooKeeper (default:
                       the collection's name)`

/** The status as lines for a terminal or a log. */
export function formatStatus (s: IndexingStatus): string {
  const lines = [`async indexing: ${s.async_indexing ? `on (worker: ${s.worker ?? ''})` : 'off'}`]
  lines.push(`redis: ${s.redis}${s.redis_error !== undefined ? ` (${s.redis_error})` : ''}`)
  if (s.queue !== null) lines.push(`queue: waiting ${s.queue.waiting}, active ${s.queue.active}, delayed ${s.queue.delayed}, failed ${s.queue.failed}`)
  const oldest = s.outbox.oldest_pending_seconds === null ? '' : `, oldest ${s.outbox.oldest_pending_seconds} s`
  lines.push(`outbox: ${s.outbox.pending} pending${oldest}, ${s.outbox.refused} refused`)
  for (const job of s.failed_jobs) lines.push(`failed: ${job.uid ?? 'a wake-up of the workers'} after ${job.attempts} attempt(s) at ${job.failed_at ?? '?'}: ${job.error}`)
  return `${lines.join('\n')}\n`
}

const positiveInteger = (text: string): number | null => /^[1-9]\d{0,3}$/.test(text) ? Number(text) : null

/**
 * `deploy`: the generated configset to SolrCloud, on the Solr that the
 * settings name (environment and control panel: the database is read for
 * them, nothing else), then the live collection's fields against the
 * generated ones. Exit 1 with Solr's reason when a step is refused.
 */
async function deploy (config: Config, log: Logger, options: DeployOptions, out: Output): Promise<number> {
  const types = await ContentTypeRegistry.load([contentTypesDir])
  const db = await openDatabase(config, log, 'cli')
  try {
    const settings = new SolrSettingsStore(db, config)
    await settings.load()
    const s = settings.current
    try {
      const result = await new SolrCloudAdmin(() => settings.current).deploy(configsetFiles(types), options)
      out.write(result.action === 'created'
        ? `created collection '${result.collection}' (${options.shards} shard(s), ${options.replicas} replica(s)) with configset '${result.configName}' at ${s.host}:${s.port}\n`
        : `uploaded configset '${result.configName}' and reloaded collection '${result.collection}' at ${s.host}:${s.port} (its shards and replicas are unchanged)\n`)
    } catch (err) {
      if (!(err instanceof SolrUnavailable)) throw err
      process.stderr.write(`deploy failed: ${err.message}\n`)
      return 1
    }
    const client = new Solr(() => settings.current)
    try {
      const live = (await client.fields()).map(f => f.name)
      out.write(`${liveSchemaLine({ staleFiles: [], live: schemaDrift(solrFields(types).map(f => f.name), live) })}\n`)
    } catch (err) {
      out.write(`${liveSchemaLine({ staleFiles: [], live: null, liveError: (err as Error).message })}\n`)
    } finally {
      client.close()
    }
    return 0
  } finally {
    await db.close()
  }
}

/**
 * Runs one maintenance operation with the server's own configuration (the
 * environment), against the server's database and Solr; returns the exit code.
 */
export async function main (argv: string[], out: Output = process.stdout): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      check: { type: 'boolean', default: false },
      type: { type: 'string' },
      write: { type: 'boolean', default: false },
      shards: { type: 'string', default: '1' },
      replicas: { type: 'string', default: '1' },
      configset: { type: 'string' },
      help: { type: 'boolean', default: false }
    }
  })
  const op = positionals[0]
  if (values.help || op === undefined || !OPERATIONS.includes(op)) {
    out.write(`${USAGE}\n`)
    return values.help ? 0 : 2
  }
  if (op === 'schema' && !values.check) {
    // Printing and writing the configset need the content types only, not the database or Solr.
    const files = configsetFiles(await ContentTypeRegistry.load([contentTypesDir]))
    if (!values.write) {
      out.write(files['schema.xml'])
      return 0
    }
    await writeConfigset(solrConfDir, files)
    out.write(`wrote ${Object.keys(files).map(name => `infra/solr/conf/${name}`).join(', ')}\n`)
    return 0
  }
  const config = loadConfig()
  // On stderr, and quieter than the server: the output of a maintenance command is its report.
  const log = createLogger(config.LOG_LEVEL === 'info' ? 'warn' : config.LOG_LEVEL, 2)
  if (op === 'deploy') {
    const shards = positiveInteger(values.shards)
    const replicas = positiveInteger(values.replicas)
    if (shards === null || replicas === null || values.configset === '') {
      out.write(`--shards and --replicas take a whole number from 1, --configset a name\n${USAGE}\n`)
      return 2
    }
    return await deploy(config, log, { shards, replicas, configName: values.configset }, out)
  }
  const services = await openServices(config, log, 'cli')
  const { indexing } = services
  const maintenance = services.solr.maintenance
  try {
    switch (op) {
      case 'reindex': {
        const count = await maintenance.reindex({ type: values.type }, progressPrinter('reindex', out))
        out.write(`reindexed ${count} objects\n`)
        return 0
      }
      case 'sync': {
        const drift = await maintenance.sync({ check: values.check }, progressPrinter('sync', out))
        out.write(`${driftLine(drift, values.check)}\n`)
        return values.check && driftCount(drift) > 0 ? 1 : 0
      }
      case 'clear':
        await maintenance.clear()
        out.write('cleared\n')
        return 0
      case 'status':
        await indexing?.queue.ready(REDIS_WAIT_MS)
        out.write(formatStatus(await indexingStatus(services.outbox, indexing)))
        return 0
      case 'retry': {
        if (indexing === null) {
          out.write('async indexing is off: the background loop retries refused documents by itself\n')
          return 0
        }
        if (!await indexing.queue.ready(REDIS_WAIT_MS)) {
          out.write(`Redis does not answer at ${config.REDIS_URL}: nothing changed\n`)
          return 1
        }
        const retried = await indexing.retry()
        out.write(`${retried.operations} refused operation(s) left to the relay to queue again, ${retried.failedJobs} failed job(s) dropped\n`)
        return 0
      }
      default: {
        const report = await maintenance.schema(solrConfDir, {})
        out.write(report.staleFiles.length === 0 ? 'infra/solr/conf is up to date\n' : `stale in infra/solr/conf: ${report.staleFiles.join(', ')} (write them with --write)\n`)
        out.write(`${liveSchemaLine(report)}\n`)
        const liveDrift = report.live !== null && (report.live.missing.length > 0 || report.live.extra.length > 0)
        return report.staleFiles.length > 0 || liveDrift ? 1 : 0
      }
    }
  } catch (err) {
    if (!(err instanceof DatabaseUnavailable)) throw err
    // reindex and sync already ran the failed batch again (SolrMaintenance): PostgreSQL stays away.
    process.stderr.write(`${op} failed: ${err.message}. Nothing is lost: run it again once PostgreSQL answers.\n`)
    return 1
  } finally {
    await services.close()
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  main(process.argv.slice(2)).then(code => { process.exitCode = code }, err => {
    console.error(err instanceof Error ? err.message : err)
    process.exitCode = 1
  })
}
