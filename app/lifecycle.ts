import type { FastifyInstance } from 'fastify'
import { ServiceUnavailable } from '../core/errors.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** Whether the process serves, drains or closes (docs/operations.md, "Restarts and rolling deploys"). */
    lifecycle: Lifecycle
  }
}

/** When a client turned away by a closing process may ask again (s): another process answers by then. */
const RETRY_AFTER_S = 1

/**
 * A web process's stages: `serving`; `draining` from SIGTERM (it serves as
 * before, but `@health` answers 503 so that load balancers take it out, and
 * every answer closes its connection); `closing` once Fastify closes (it
 * accepts no connection, and a request that still comes on an open one gets
 * 503 with Retry-After).
 */
export class Lifecycle {
  state: 'serving' | 'draining' | 'closing' = 'serving'
  /** Requests received and not yet answered (or abandoned). */
  inFlight = 0
}

/**
 * Gives the server its lifecycle. Fastify's own closing path (its
 * `return503OnClosing`, off in app/server.ts) answers the requests that
 * come on kept-alive connections while it closes with a 503 that names no
 * time to come back; this one says Retry-After, in the service's error form.
 * A response sent while the process drains or closes says
 * `Connection: close`, and once it is closing a connection whose last
 * answer went out is closed at once: Node's `server.close()` ends only the
 * connections idle at the moment it is called, and Fastify keeps the others
 * open for their keep-alive timeout (72 s), which would hold the close.
 */
export function installLifecycle (fastify: FastifyInstance): Lifecycle {
  const lifecycle = new Lifecycle()
  fastify.decorate('lifecycle', lifecycle)
  const server = fastify.server
  server.on('request', (_request, response) => {
    lifecycle.inFlight++
    response.once('close', () => {
      lifecycle.inFlight--
      if (lifecycle.state === 'closing') setImmediate(() => { server.closeIdleConnections() })
    })
  })
  fastify.addHook('onRequest', async () => {
    if (lifecycle.state === 'closing') throw ServiceUnavailable('This process is shutting down: ask again, another one answers.', RETRY_AFTER_S)
  })
  fastify.addHook('onSend', async (_request, reply, payload) => {
    if (lifecycle.state !== 'serving') reply.header('connection', 'close')
    return payload
  })
  fastify.addHook('preClose', async () => { lifecycle.state = 'closing' })
  return lifecycle
}
