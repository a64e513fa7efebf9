import { context, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Span, type Tracer } from '@opentelemetry/api'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'

/**
 * A server span per request (OpenTelemetry's HTTP conventions), in whose context the hooks and
 * the route's handler run, so that the calls to PostgreSQL, Solr and Redis they make are its
 * children (core/tracing.ts). Loaded only when the process traces (app/tracing-sdk.ts); registered
 * before the plugins that add hooks and routes (app/server.ts).
 *
 * Not @fastify/otel: it sets a failed request's span status to the error's message, which for a
 * refused body quotes what the client sent, marks every 4xx as an error (the conventions leave a
 * server span's 4xx unset), and records the query string in `url.path`.
 *
 * The span is named by the route's pattern (`GET /*`, `POST /@search`), never by the URL; it
 * records the method, the pattern, the path (without the query string, which may hold search
 * words), the scheme and the status. Never recorded: the query string, headers (tokens), bodies,
 * the client's address and user agent, and an error's message (a 5xx is an error of `error.type`
 * = its status).
 */

const SPAN = Symbol('request span')
type Traced = FastifyRequest & { [SPAN]?: Span }

/** The methods OpenTelemetry names; any other is `_OTHER` (a client chooses the method). */
const KNOWN_METHODS = new Set(['CONNECT', 'DELETE', 'GET', 'HEAD', 'OPTIONS', 'PATCH', 'POST', 'PUT', 'TRACE'])

function end (request: Traced, status: number | null): void {
  const span = request[SPAN]
  if (span === undefined) return
  request[SPAN] = undefined
  if (status !== null) {
    span.setAttribute('http.response.status_code', status)
    if (status >= 500) {
      span.setAttribute('error.type', String(status))
      span.setStatus({ code: SpanStatusCode.ERROR })
    }
  } else {
    // The client went away before the answer was sent.
    span.setAttribute('error.type', 'aborted')
  }
  span.end()
}

export function requestSpans (tracer: Tracer): (fastify: FastifyInstance) => Promise<void> {
  return fp(async fastify => {
    fastify.addHook('onRequest', (request: Traced, _reply: FastifyReply, done: () => void) => {
      const route = request.routeOptions.url
      const method = KNOWN_METHODS.has(request.method) ? request.method : '_OTHER'
      const raw = request.originalUrl
      const queryAt = raw.indexOf('?')
      const attributes: Record<string, string> = {
        'http.request.method': method,
        'url.path': queryAt < 0 ? raw : raw.slice(0, queryAt),
        'url.scheme': request.protocol
      }
      if (route !== undefined) attributes['http.route'] = route
      // A caller's trace continues here (W3C traceparent, or what OTEL_PROPAGATORS names).
      const parent = propagation.extract(ROOT_CONTEXT, request.headers)
      const span = tracer.startSpan(route === undefined ? method : `${method} ${route}`, { kind: SpanKind.SERVER, attributes }, parent)
      request[SPAN] = span
      // The hooks after this one and the handler run inside the span's context: also after a body
      // that came later than the headers, whose parser Fastify runs in the request's own async
      // context (an AsyncResource), which this one is (test/ops/tracing.test.ts sends such a body).
      context.with(trace.setSpan(parent, span), done)
    })
    fastify.addHook('onResponse', (request: Traced, reply: FastifyReply, done: () => void) => {
      end(request, reply.statusCode)
      done()
    })
    fastify.addHook('onRequestAbort', (request: Traced, done: () => void) => {
      end(request, null)
      done()
    })
  }, { name: 'request-spans' })
}
