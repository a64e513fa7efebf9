import type { FastifyInstance } from 'fastify'

/**
 * SIGTERM (a supervisor, a deploy) and SIGINT (a terminal) close the app —
 * requests and index jobs in flight finish, connections close — then the
 * process exits 0. `message` is logged with the signal.
 */
export function closeOnSignals (fastify: FastifyInstance, message: string): void {
  const shutdown = async (signal: string): Promise<void> => {
    fastify.log.info({ signal }, message)
    await fastify.close()
    process.exit(0)
  }
  process.once('SIGTERM', () => { void shutdown('SIGTERM') })
  process.once('SIGINT', () => { void shutdown('SIGINT') })
}
