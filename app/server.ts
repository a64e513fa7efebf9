import Fastify, { type FastifyInstance } from 'fastify'
import { pathToFileURL } from 'node:url'
import app, { type AppOptions } from './app.js'
import { loadConfig, type Config } from '../core/config/config.js'
import { proxyTrust } from '../core/config/proxy-trust.js'
import { bodyBounds } from '../core/security/body-bounds.js'
import { clientErrorHandler, frameworkErrors } from '../plugins/support/error-handler.js'
import { loggerOptions } from './log.js'
import { closeOnSignals } from './signals.js'
import { installLifecycle } from './lifecycle.js'
import { processTracing, startTracing } from './tracing.js'
import { createUrlRewriter } from '../plugins/support/url.js'
import { LazySchemaCompilers } from '../plugins/support/schema-compilers.js'

declare module 'fastify' {
  interface FastifyInstance {
    /**
     * Compiles the route schemas no request has needed yet; answers how many. They compile at
     * first use (plugins/support/schema-compilers.ts): a test calls this so that a schema that
     * does not compile fails there, not at a client's first request.
     */
    compileRouteSchemas: () => Promise<number>
  }
}

/**
 * Creates the Fastify server with the options that must be known before any
 * plugin runs (URL rewriting, the default body limit, proxy trust, the schema compilers) and registers the root
 * plugin. Tests call this; `npm start` runs the `main` below.
 */
export async function buildServer (config: Config = loadConfig(), options: AppOptions = {}): Promise<FastifyInstance> {
  const schemaCompilers = new LazySchemaCompilers()
  const fastify = Fastify({
    logger: config.LOG_LEVEL === 'silent' ? false : loggerOptions(config.LOG_LEVEL),
    rewriteUrl: createUrlRewriter(config.SITE_PATH),
    trustProxy: proxyTrust(config.TRUST_PROXY),
    // Each route's own limit is set as it is added (plugins/app/bodies.ts); this one is for the rest (the 404 handler's).
    bodyLimit: bodyBounds('small', config).bytes,
    routerOptions: { ignoreTrailingSlash: true },
    // The embedded database can take more than Fastify's 10 s default to open on a busy machine.
    pluginTimeout: 120_000,
    ajv: { customOptions: { removeAdditional: false, coerceTypes: false, allErrors: true } },
    schemaController: { compilersFactory: { buildValidator: schemaCompilers.buildValidator, buildSerializer: schemaCompilers.buildSerializer } },
    frameworkErrors,
    clientErrorHandler,
    // app/lifecycle.ts answers the requests that come while the server closes (with Retry-After).
    return503OnClosing: false
  })
  fastify.decorate('compileRouteSchemas', async () => await schemaCompilers.compilePending())
  // First, so that its hooks run before any other.
  installLifecycle(fastify)
  // With tracing on (started by `main`): a server span per request, whose context the routes' handlers
  // run in; its hooks and handler wrappers must come before any route. The SDK stops last, after the pools.
  const tracing = processTracing()
  if (tracing !== null) {
    await fastify.register(tracing.requestSpans)
    fastify.addHook('onClose', async () => { await tracing.shutdown() })
  }
  await fastify.register(app, { config, ...options })
  return fastify
}

async function main (): Promise<void> {
  const started = Date.now()
  const config = loadConfig()
  // Before anything that calls PostgreSQL, Solr or Redis is built: each decides then whether it traces.
  await startTracing(config, 'web')
  const fastify = await buildServer(config)
  const { lifecycle } = fastify
  closeOnSignals(fastify.log, {
    message: 'shutting down',
    // Nothing can take over from the one process of an embedded database: a drain would only delay the stop.
    drainMs: fastify.db.kind === 'embedded' ? 0 : config.SHUTDOWN_DRAIN_MS,
    drain: () => { lifecycle.state = 'draining' },
    close: async () => { await fastify.close() },
    timeoutMs: config.SHUTDOWN_TIMEOUT_MS,
    inFlight: () => lifecycle.inFlight,
    unit: 'request',
    cut: () => { fastify.server.closeAllConnections() }
  })
  await fastify.listen({ port: config.PORT, host: config.HOST })
  fastify.log.info({ ms: Date.now() - started, database: fastify.db.kind }, 'ready')
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  main().catch(err => {
    console.error(err instanceof Error ? err.message : err)
    process.exit(1)
  })
}
