import type { Telemetry } from 'bullmq'

/**
 * Tracing as the core sees it (docs/operations.md, "Tracing"): the calls the
 * core makes to PostgreSQL, Solr and Redis become client spans of the request
 * or job they serve. The core names no OpenTelemetry package: a process that
 * traces installs an implementation (app/tracing-sdk.ts, loaded only then)
 * before it builds its services, and each wrapper (core/db/db.ts,
 * core/solr/client.ts, core/indexing/queue/) asks `tracing()` once, when it is
 * built, which of its two paths to take. Without tracing nothing is asked per
 * call: the untraced path is the code as it was.
 */

/** A span's attributes: OpenTelemetry's semantic conventions; never a value a user sent. */
export type SpanAttributes = Record<string, string | number | boolean>

export interface Tracing {
  /**
   * Runs `call` inside a client span named `name`, a child of the active span (the request's,
   * the job's); with no active span it only runs `call`: work outside a request or a job (the
   * outbox relay's polls, what a process reads at start) records nothing. When `call` fails,
   * the span is an error with the attributes `failure` tells (an `error.type`), never the
   * error's message, which may quote what a user sent.
   */
  client: <T>(name: string, attributes: SpanAttributes, call: () => Promise<T>, failure: (err: unknown) => SpanAttributes) => Promise<T>
  /** As `client`, for a call that ends later than it returns (a COPY read at its reader's pace): `end` ends it. Null without an active span. */
  clientStarted: (name: string, attributes: SpanAttributes) => { end: (failure?: SpanAttributes) => void } | null
  /** BullMQ's own spans of its queue and workers (bullmq-otel): their `telemetry` option. */
  readonly bullmq: Telemetry
}

let installed: Tracing | undefined

/** Called once by a process that traces, before it builds anything that calls PostgreSQL, Solr or Redis. */
export function installTracing (tracing: Tracing): void {
  installed = tracing
}

/** The process's tracing, or undefined when it does not trace. */
export function tracing (): Tracing | undefined {
  return installed
}

/**
 * What a failure says of itself that may go into a span: a PostgreSQL SQLSTATE, a Node error
 * code (ECONNREFUSED), an HTTP status, else the error's class — never its message.
 */
export function errorType (err: unknown): string {
  const e = err as { code?: unknown, status?: unknown, statusCode?: unknown, name?: unknown } | null
  if (typeof e?.code === 'string' && /^[A-Z0-9_]{1,40}$/.test(e.code)) return e.code
  if (typeof e?.status === 'number') return String(e.status)
  if (typeof e?.statusCode === 'number') return String(e.statusCode)
  return typeof e?.name === 'string' && e.name !== '' ? e.name : '_OTHER'
}
