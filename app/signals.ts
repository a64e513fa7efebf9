import type { Logger } from '../core/log.js'

/**
 * SIGTERM (a supervisor, a deploy) and SIGINT (a terminal) close the process's
 * services — requests and index jobs in flight finish, connections close —
 * then the process exits 0. `message` is logged with the signal.
 */
export function closeOnSignals (log: Logger, close: () => Promise<unknown>, message: string): void {
  const shutdown = async (signal: string): Promise<void> => {
    log.info({ signal }, message)
    await close()
    process.exit(0)
  }
  process.once('SIGTERM', () => { void shutdown('SIGTERM') })
  process.once('SIGINT', () => { void shutdown('SIGINT') })
}
