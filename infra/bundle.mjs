/**
 * Second step of `npm run build`: bundles what tsc emitted in dist/ in place.
 *
 * Why: Node's ESM loader resolves, stats and opens every module file, and the
 * service loads about 1 400 of them at start (TypeBox alone is 680 files and
 * took 0.6 s to import); that was most of the start-up (docs/performance-history.md,
 * "Start-up"). Every compiled file stays an entry point at its own path, with
 * the code they share split into dist/chunks/, so that @fastify/autoload, the
 * content-type folders, `node dist/app/worker.js` and `node dist/app/cli.js`
 * find the same files as before. Every .js file in dist/ is an entry point, so dist/ must hold
 * only what tsc has just emitted: `npm run build` empties it first (a file of an earlier build
 * whose source is gone was bundled already, and would import chunks that no longer exist).
 */
import { build } from 'esbuild'
import { readdirSync, rmSync } from 'node:fs'
import { join } from 'node:path'

const dist = join(import.meta.dirname, '..', 'dist')
const chunks = 'chunks'

/**
 * Left to Node's loader: packages that read files next to their own modules
 * (PGlite's wasm and data, BullMQ's Lua scripts) or start worker threads by
 * file name (pino's transports, pino-pretty); ioredis because BullMQ must
 * share its copy; OpenTelemetry's SDK and bullmq-otel, which only a process
 * that traces loads (app/tracing-sdk.ts, by a dynamic import): nearly a
 * thousand modules (its exporters, gRPC, protobufjs) that the bundle need not
 * carry. @opentelemetry/api stays bundled (prom-client loads it at every
 * start); its copies meet in its global registry.
 */
const external = ['@electric-sql/pglite', 'bullmq', 'ioredis', 'pino', 'pino-pretty', 'thread-stream', '@opentelemetry/sdk-node', 'bullmq-otel']

const entryPoints = readdirSync(dist, { recursive: true, encoding: 'utf8' })
  .filter(file => file.endsWith('.js') && !file.startsWith(chunks))
  .map(file => join(dist, file))

rmSync(join(dist, chunks), { recursive: true, force: true })
await build({
  entryPoints,
  outdir: dist,
  outbase: dist,
  allowOverwrite: true,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  chunkNames: `${chunks}/[name]-[hash]`,
  external,
  sourcemap: true,
  // The CommonJS packages inside the bundle call require() for Node's own modules.
  // (The few that read __dirname, such as @fastify/swagger's package.json lookup, fall back to defaults.)
  banner: { js: "import { createRequire as __bundleCreateRequire } from 'node:module'; const require = __bundleCreateRequire(import.meta.url);" },
  logLevel: 'warning'
})
