import fp from 'fastify-plugin'
import { requireManager } from '../support/access.js'
import { indexingStatus } from '../../core/indexing/queue/status.js'

const errorResponses = Object.fromEntries([401, 403].map(s => [s, { $ref: 'Error#' }]))

/**
 * `GET @solr-maintenance/status` (Manager): how far indexing is behind —
 * queue depth, jobs in flight, failed jobs with Solr's message, the outbox
 * and the age of its oldest operation. A static route, so it wins over the
 * maintenance operations' `@solr-maintenance/:op`.
 */
export default fp(async fastify => {
  fastify.get('/@solr-maintenance/status', {
    schema: { summary: 'Indexing status (Manager): queue, failed jobs, outbox', tags: ['search'], security: [{ bearer: [] }], response: errorResponses }
  }, async (request, reply) => {
    requireManager(request, 'The indexing status needs the Manager role.')
    return await reply.header('cache-control', 'no-store').send(await indexingStatus(fastify.outbox, fastify.indexing))
  })
}, { name: 'indexing-status', dependencies: ['index-queue', 'auth', 'http'] })
