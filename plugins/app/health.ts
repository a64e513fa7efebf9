import fp from 'fastify-plugin'
import Type from 'typebox'

/** A load balancer's probe must not hang on a backend that does not answer (ms). */
const CHECK_TIMEOUT_MS = 1_000

type Check = 'ok' | 'down' | 'off'

async function check (probe: () => Promise<unknown>): Promise<Check> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<never>((_resolve, reject) => { timer = setTimeout(() => { reject(new Error('timeout')) }, CHECK_TIMEOUT_MS) })
  try {
    await Promise.race([probe(), timeout])
    return 'ok'
  } catch {
    return 'down'
  } finally {
    clearTimeout(timer)
  }
}

const Status = Type.Union([Type.Literal('ok'), Type.Literal('down'), Type.Literal('off')])

/**
 * `GET @health` (anyone) for load balancers: PostgreSQL, Solr and Redis,
 * each `ok`, `down` or `off` (not configured). 200 as long as PostgreSQL
 * answers, because that is all a request needs: with Solr down searches fall
 * back to the catalogue and writes keep their index operations in the
 * outbox, with Redis down too. Taking the process out of the pool then
 * would turn a degraded search into an outage. 503 when PostgreSQL does not
 * answer; `status` is `degraded` when Solr or Redis is down.
 */
export default fp(async fastify => {
  fastify.get('/@health', {
    schema: {
      summary: 'Health of the service and its backends (for load balancers): 200 while PostgreSQL answers, else 503',
      tags: ['service'],
      response: {
        200: Type.Object({ status: Type.String(), postgres: Status, solr: Status, redis: Status }),
        503: Type.Object({ status: Type.String(), postgres: Status, solr: Status, redis: Status })
      }
    }
  }, async (_request, reply) => {
    const [postgres, solr, redis] = await Promise.all([
      check(async () => await fastify.db.query('SELECT 1')),
      fastify.solr.active() ? check(async () => { await fastify.solr.client.ping() }) : 'off' as const,
      fastify.indexing !== null ? check(async () => { await fastify.indexing?.queue.ping() }) : 'off' as const
    ])
    const status = postgres !== 'ok' ? 'down' : solr === 'down' || redis === 'down' ? 'degraded' : 'ok'
    return await reply.code(postgres === 'ok' ? 200 : 503).header('cache-control', 'no-store').send({ status, postgres, solr, redis })
  })
}, { name: 'health', dependencies: ['index-queue', 'solr', 'http'] })
