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
const Health = Type.Object({
  status: Type.String({ description: 'ok, degraded (Solr or Redis down), down (PostgreSQL down), stopping (shutting down: take it out)' }),
  postgres: Status,
  solr: Status,
  redis: Status,
  database: Type.Optional(Type.Object({
    since: Type.String({ description: 'when the process started counting' }),
    connections_lost: Type.Integer({ description: 'open connections that PostgreSQL (or the network) ended under the service' }),
    operations_failed: Type.Integer({ description: 'queries and transactions that failed for want of a connection (requests answered 503, index jobs retried)' }),
    last_failure: Type.Union([Type.Null(), Type.Object({ at: Type.String(), reason: Type.String({ description: 'SQLSTATE and its name, or the socket error' }) })])
  }, { description: 'with ?verbose: what happened to the database connections since start' })),
  resident_catalogue: Type.Optional(Type.Object({
    state: Type.Union([Type.Literal('loaded'), Type.Literal('loading'), Type.Literal('off')], { description: 'loading: queries go to PostgreSQL until it has loaded' }),
    documents: Type.Integer(),
    bytes: Type.Integer({ description: 'memory it holds (estimate)' }),
    answered: Type.Integer({ description: 'queries it answered since start' }),
    declined: Type.Integer({ description: 'queries it left to PostgreSQL since start' })
  }, { description: 'with ?verbose: the catalogue this process holds in memory (docs/architecture.md, "The resident catalogue")' }))
})
/** As for the other flags of the API (`?check`): present means on, unless it says false. */
const flag = (value: string | undefined): boolean => value !== undefined && value !== 'false' && value !== '0'

/**
 * `GET @health` (anyone) for load balancers: PostgreSQL, Solr and Redis,
 * each `ok`, `down` or `off` (not configured). 200 as long as PostgreSQL
 * answers, because that is all a request needs: with Solr down searches fall
 * back to the catalogue and writes keep their index operations in the
 * outbox, with Redis down too. Taking the process out of the pool then
 * would turn a degraded search into an outage. 503 when PostgreSQL does not
 * answer; `status` is `degraded` when Solr or Redis is down. `?verbose`
 * adds what happened to the database connections since start (lost
 * connections, failed operations, the last failure and why), for operators:
 * the default body stays what load balancers and monitors match. From
 * SIGTERM on, while the process drains, 503 with `status` `stopping`: it
 * still serves, but a load balancer must send nothing new
 * (docs/operations.md, "Restarts and rolling deploys").
 */
export default fp(async fastify => {
  fastify.get('/@health', {
    schema: {
      summary: 'Health of the service and its backends (for load balancers): 200 while PostgreSQL answers, else 503; 503 (stopping) once the process is shutting down',
      tags: ['service'],
      querystring: Type.Object({ verbose: Type.Optional(Type.String()) }),
      response: { 200: Health, 503: Health }
    }
  }, async (request, reply) => {
    const [postgres, solr, redis] = await Promise.all([
      check(async () => await fastify.db.query('SELECT 1')),
      fastify.solr.active() ? check(async () => { await fastify.solr.client.ping() }) : 'off' as const,
      fastify.indexing !== null ? check(async () => { await fastify.indexing?.queue.ping() }) : 'off' as const
    ])
    const stopping = fastify.lifecycle.state !== 'serving'
    const status = stopping ? 'stopping' : postgres !== 'ok' ? 'down' : solr === 'down' || redis === 'down' ? 'degraded' : 'ok'
    const resident = fastify.catalogSearch.residentCatalog
    const residentCatalogue = resident === undefined
      ? { state: 'off' as const, documents: 0, bytes: 0, answered: 0, declined: 0 }
      : { state: resident.loaded ? 'loaded' as const : 'loading' as const, documents: resident.documents, bytes: resident.byteSize, ...resident.counts }
    const verbose = flag((request.query as { verbose?: string }).verbose) ? { database: fastify.db.faults(), resident_catalogue: residentCatalogue } : {}
    return await reply.code(postgres === 'ok' && !stopping ? 200 : 503).header('cache-control', 'no-store').send({ status, postgres, solr, redis, ...verbose })
  })
}, { name: 'health', dependencies: ['index-queue', 'solr', 'http', 'content'] })
