import { setTimeout as sleep } from 'node:timers/promises'
import type { Logger } from '../core/log.js'

/** How a process stops (docs/operations.md, "Restarts and rolling deploys"). */
export interface Shutdown {
  /** Logged with the signal. */
  message: string
  /**
   * How long the process keeps serving after SIGTERM, while it tells load balancers it is
   * stopping (`drain`), before it stops accepting; 0 for none. SIGINT (a terminal) skips it.
   */
  drainMs: number
  /** Called at the signal, before the drain: from then on the process says it is stopping. */
  drain?: () => void
  /** Stops accepting, lets what is in flight finish, closes the pools. */
  close: () => Promise<unknown>
  /** How long `close` may take; past it what is in flight is cut and the process exits 1. */
  timeoutMs: number
  /** What is in flight now (requests, index jobs), counted in `unit`s. */
  inFlight: () => number
  unit: string
  /** Past the bound: ends what is in flight (connections) before the process exits. */
  cut?: () => void
}

const plural = (count: number, unit: string): string => `${count} ${unit}${count === 1 ? '' : 's'}`

/**
 * SIGTERM (a supervisor, a deploy) and SIGINT (a terminal) stop the process
 * once: it drains (SIGTERM only), then closes — what is in flight finishes,
 * the pools close — and exits 0; past `timeoutMs` it cuts what is left, says
 * how much, and exits 1. A second signal while it stops is logged and
 * changes nothing (it does not start a second close, nor kill the process).
 */
export function closeOnSignals (log: Logger, shutdown: Shutdown): void {
  let stopping: string | null = null
  const stop = async (signal: NodeJS.Signals): Promise<void> => {
    if (stopping !== null) {
      log.warn({ signal }, `already shutting down (${stopping}): ${signal} changes nothing`)
      return
    }
    stopping = signal
    const started = Date.now()
    const drainMs = signal === 'SIGTERM' ? shutdown.drainMs : 0
    log.info({ signal, drain_ms: drainMs, timeout_ms: shutdown.timeoutMs, in_flight: shutdown.inFlight() }, shutdown.message)
    shutdown.drain?.()
    if (drainMs > 0) await sleep(drainMs)
    log.info({ in_flight: shutdown.inFlight() }, `no longer accepting: finishing ${plural(shutdown.inFlight(), shutdown.unit)} in flight`)
    const bound = new AbortController()
    const outcome = await Promise.race([
      shutdown.close().then(() => 'closed' as const, (err: unknown) => { log.error({ err }, 'shutdown failed'); return 'failed' as const }),
      sleep(shutdown.timeoutMs, 'timeout' as const, { signal: bound.signal }).catch(() => 'closed' as const)
    ])
    bound.abort()
    if (outcome === 'timeout') {
      const cut = shutdown.inFlight()
      shutdown.cut?.()
      log.error({ cut, timeout_ms: shutdown.timeoutMs }, `shutdown took longer than SHUTDOWN_TIMEOUT_MS (${shutdown.timeoutMs} ms): ${plural(cut, shutdown.unit)} in flight cut`)
      process.exit(1)
    }
    if (outcome === 'failed') process.exit(1)
    log.info({ ms: Date.now() - started }, 'shut down')
    process.exit(0)
  }
  process.on('SIGTERM', () => { void stop('SIGTERM') })
  process.on('SIGINT', () => { void stop('SIGINT') })
}
