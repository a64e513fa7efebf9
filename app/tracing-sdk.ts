import { context, INVALID_SPAN_CONTEXT, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api'
import { NodeSDK, resources } from '@opentelemetry/sdk-node'
import { BullMQOtel, BullMQOTelSpan } from 'bullmq-otel'
import { setTimeout as sleep } from 'node:timers/promises'
import { installTracing, type SpanAttributes } from '../core/tracing.js'
import { requestSpans } from '../plugins/support/request-spans.js'

/**
 * OpenTelemetry's SDK, started for a process that traces (app/tracing.ts decides; docs/operations.md,
 * "Tracing"). Only this module and plugins/support/request-spans.ts import OpenTelemetry, and
 * app/tracing.ts loads this one by a dynamic import when tracing is on: off, none of it is loaded.
 *
 * The SDK is configured by the standard OTEL_* variables, which it reads itself: the exporter
 * (OTEL_TRACES_EXPORTER, otlp by default), its endpoint and protocol (OTEL_EXPORTER_OTLP_…), the
 * sampler (OTEL_TRACES_SAMPLER, parent-based always-on by default), the batch processor
 * (OTEL_BSP_…), the propagators (OTEL_PROPAGATORS) and the resource (OTEL_SERVICE_NAME,
 * OTEL_RESOURCE_ATTRIBUTES; the service's name is `talks-web` or `talks-worker` unless they name it).
 * Traces only: no metrics (Prometheus has them, plugins/app/metrics.ts) and no logs.
 */

const TRACER = 'talks'
/**
 * How long closing waits for the spans still buffered to be sent (ms): a receiver that does not
 * answer must not hold the process past SHUTDOWN_TIMEOUT_MS (what it has not taken is lost).
 */
const FLUSH_MS = 5_000

/**
 * BullMQ's spans without the messages of failures: a failed job's reason (an attribute, or an
 * event's) and its exception's message are the error's message, and the job that keeps a document
 * Solr refused fails with Solr's message, which quotes the refused value. Kept: the exception's type.
 */
class WithoutMessages extends BullMQOTelSpan {
  override setAttribute (key: string, value: Parameters<BullMQOTelSpan['setAttribute']>[1]): void {
    if (key !== FAILED_REASON) super.setAttribute(key, value)
  }

  override setAttributes (attributes: Parameters<BullMQOTelSpan['setAttributes']>[0]): void {
    const { [FAILED_REASON]: _reason, ...kept } = attributes
    super.setAttributes(kept)
  }

  override addEvent (name: string, attributes?: Parameters<BullMQOTelSpan['addEvent']>[1], time?: Parameters<BullMQOTelSpan['addEvent']>[2]): void {
    if (attributes === undefined) {
      super.addEvent(name, attributes, time)
      return
    }
    const { [FAILED_REASON]: _reason, ...kept } = attributes
    super.addEvent(name, kept, time)
  }

  override recordException (exception: Parameters<BullMQOTelSpan['recordException']>[0], time?: Parameters<BullMQOTelSpan['recordException']>[1]): void {
    super.recordException({ name: typeof exception === 'string' ? 'Error' : exception.name ?? 'Error' }, time)
  }
}
const FAILED_REASON = 'bullmq.job.failed.reason'

/** Starts the SDK and installs the core's tracing; answers app/tracing.ts's ProcessTracing (not imported: that module imports this one). */
export async function startSdk (process: 'web' | 'worker', version: string): Promise<{ requestSpans: ReturnType<typeof requestSpans>, shutdown: () => Promise<void> }> {
  const sdk = new NodeSDK({
    // The service's own default name; OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES, detected later, win over it.
    resource: resources.defaultResource().merge(resources.resourceFromAttributes({ 'service.name': `talks-${process}`, 'service.version': version })),
    metricReaders: [],
    logRecordProcessors: [],
    instrumentations: []
  })
  sdk.start()

  const tracer = trace.getTracer(TRACER, version)
  const client = async <T>(name: string, attributes: SpanAttributes, call: () => Promise<T>, failure: (err: unknown) => SpanAttributes): Promise<T> => {
    const parent = context.active()
    if (trace.getSpan(parent) === undefined) return await call()
    const span = tracer.startSpan(name, { kind: SpanKind.CLIENT, attributes }, parent)
    try {
      return await call()
    } catch (err) {
      span.setAttributes(failure(err))
      span.setStatus({ code: SpanStatusCode.ERROR })
      throw err
    } finally {
      span.end()
    }
  }

  const bullmq = new BullMQOtel({ tracerName: 'bullmq', version })
  // BullMQ also traces its own polling (getNextJob, the stalled-jobs check) every few seconds of an
  // idle worker, each a trace of its own: its internal spans are kept only inside a request's or a job's.
  const startSpan = bullmq.tracer.startSpan.bind(bullmq.tracer)
  bullmq.tracer.startSpan = (name, options?: { kind?: number }, parent?) => options?.kind === SpanKind.INTERNAL && trace.getSpan(parent ?? context.active()) === undefined
    ? new BullMQOTelSpan(trace.wrapSpanContext(INVALID_SPAN_CONTEXT))
    : new WithoutMessages((startSpan(name, options, parent) as BullMQOTelSpan).span)

  installTracing({
    client,
    clientStarted: (name, attributes) => {
      const parent = context.active()
      if (trace.getSpan(parent) === undefined) return null
      const span = tracer.startSpan(name, { kind: SpanKind.CLIENT, attributes }, parent)
      return {
        end: failure => {
          if (failure !== undefined) {
            span.setAttributes(failure)
            span.setStatus({ code: SpanStatusCode.ERROR })
          }
          span.end()
        }
      }
    },
    bullmq
  })

  return {
    requestSpans: requestSpans(tracer),
    shutdown: async () => {
      const timer = new AbortController()
      await Promise.race([sdk.shutdown().catch(() => {}), sleep(FLUSH_MS, undefined, { signal: timer.signal }).catch(() => {})])
      timer.abort()
    }
  }
}
