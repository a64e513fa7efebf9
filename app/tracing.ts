import type { FastifyInstance } from 'fastify'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Config } from '../core/config/config.js'
import { projectRoot } from '../core/config/paths.js'

/** A process's tracing once started (app/tracing-sdk.ts). */
export interface ProcessTracing {
  /** The web process's server span per request (plugins/support/request-spans.ts), registered before any route. */
  requestSpans: (fastify: FastifyInstance) => Promise<void>
  /** Sends the spans still buffered and stops the SDK: the last thing a process does before it exits. */
  shutdown: () => Promise<void>
}

/**
 * Whether the process traces (docs/operations.md, "Tracing"): when OTEL_TRACES_EXPORTER names an
 * exporter (not `none`) or an OTLP endpoint is set (OTEL_EXPORTER_OTLP_ENDPOINT or
 * OTEL_EXPORTER_OTLP_TRACES_ENDPOINT), unless OTEL_SDK_DISABLED is `true`. The SDK alone would
 * send to localhost:4318 when nothing is set: here nothing set means no tracing, and no SDK loaded.
 */
export function tracingWanted (config: Pick<Config, 'OTEL_SDK_DISABLED' | 'OTEL_TRACES_EXPORTER' | 'OTEL_EXPORTER_OTLP_ENDPOINT' | 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT'>): boolean {
  if (config.OTEL_SDK_DISABLED.trim().toLowerCase() === 'true') return false
  const exporters = config.OTEL_TRACES_EXPORTER.split(',').map(name => name.trim().toLowerCase()).filter(name => name !== '')
  if (exporters.length > 0) return !exporters.includes('none')
  return config.OTEL_EXPORTER_OTLP_ENDPOINT.trim() !== '' || config.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT.trim() !== ''
}

let started: ProcessTracing | null = null

/**
 * Starts tracing when the configuration asks for it, before anything that calls PostgreSQL, Solr
 * or Redis is built (each decides once, when built, whether it traces): the SDK is loaded then, by
 * a dynamic import, and never otherwise. Null when the process does not trace.
 */
export async function startTracing (config: Config, process: 'web' | 'worker'): Promise<ProcessTracing | null> {
  if (started !== null || !tracingWanted(config)) return started
  const { version } = JSON.parse(readFileSync(join(projectRoot, 'package.json'), 'utf8')) as { version: string }
  const { startSdk } = await import('./tracing-sdk.js')
  started = await startSdk(process, version)
  return started
}

/** The tracing this process started, or null. */
export function processTracing (): ProcessTracing | null {
  return started
}
