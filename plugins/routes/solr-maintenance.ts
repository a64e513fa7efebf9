import type { FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { PassThrough } from 'node:stream'
import Type from 'typebox'
import { requireManager } from '../support/access.js'
import { BadRequest } from '../../core/errors.js'
import { solrConfDir } from '../../core/config/paths.js'
import { driftCount, driftLine, liveSchemaLine, type Progress } from '../../core/solr/maintenance.js'

const OPERATIONS = ['reindex', 'sync', 'clear', 'schema'] as const
type Operation = typeof OPERATIONS[number]
const errorResponses = Object.fromEntries([400, 401, 403].map(s => [s, { $ref: 'Error#' }]))

/**
 * `@solr-maintenance/<op>` (Manager): the CLI's operations over HTTP. The
 * answer is plain text streamed one line per batch, so that a long reindex
 * shows its progress; the last line is the result (or `error: …`).
 */
export default fp(async fastify => {
  const { maintenance } = fastify.solr

  async function run (op: Operation, query: { check?: string, type?: string }, line: (text: string) => void): Promise<void> {
    const progress = (label: string): Progress => (done, total) => { line(`${label}: ${done}/${total}`) }
    const check = query.check !== undefined && query.check !== 'false' && query.check !== '0'
    switch (op) {
      case 'reindex':
        line(`reindexed ${await maintenance.reindex({ type: query.type }, progress('reindex'))} objects`)
        return
      case 'sync': {
        const drift = await maintenance.sync({ check }, progress('sync'))
        line(driftLine(drift, check))
        if (check && driftCount(drift) > 0) line('drift')
        return
      }
      case 'clear':
        await maintenance.clear()
        line('cleared')
        return
      case 'schema': {
        // Over HTTP the committed files are only checked, never written.
        const report = await maintenance.schema(solrConfDir, {})
        line(`stale files: ${report.staleFiles.join(', ') || 'none'}`)
        line(liveSchemaLine(report))
      }
    }
  }

  async function handler (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
    requireManager(request, 'Solr maintenance needs the Manager role.')
    const { op } = request.params as { op: string }
    if (!(OPERATIONS as readonly string[]).includes(op)) throw BadRequest(`Unknown maintenance operation '${op}'; one of ${OPERATIONS.join(', ')}.`)
    const query = request.query as { check?: string, type?: string }
    if (query.type !== undefined && fastify.contentTypes.get(query.type) === undefined) throw BadRequest(`Unknown content type '${query.type}'.`)
    const stream = new PassThrough()
    const line = (text: string): void => { stream.write(`${text}\n`) }
    run(op as Operation, query, line).catch((err: unknown) => {
      request.log.error({ err }, `Solr maintenance ${op} failed`)
      line(`error: ${(err as Error).message}`)
    }).finally(() => { stream.end() })
    return await reply.type('text/plain; charset=utf-8').header('cache-control', 'no-store').send(stream)
  }

  const schema = {
    summary: 'Solr maintenance (Manager): reindex, sync (?check=1), clear, schema; streams one line per batch',
    tags: ['search'],
    security: [{ bearer: [] }],
    params: Type.Object({ op: Type.String() }),
    querystring: Type.Object({ check: Type.Optional(Type.String()), type: Type.Optional(Type.String()) }),
    response: errorResponses
  }
  fastify.route({ method: ['GET', 'POST'], url: '/@solr-maintenance/:op', config: { binary: true }, schema, handler })
}, { name: 'solr-maintenance', dependencies: ['solr', 'auth', 'http'] })
