/**
 * The floor: the least a Node server can do for the same requests on the
 * same machine and the same PostgreSQL. `GET /row/*` reads one talk row by
 * path with `pg` and answers it as JSON; `GET /static` answers without the
 * database. Every scenario's figure is divided by the floor's from the same
 * run, because only ratios are stable on shared machines.
 *
 * Run as its own process by run.mjs, with DATABASE_URL and PORT set.
 */
import Fastify from 'fastify'
import pg from 'pg'

// The same pool size as the service (core/db.ts), so that neither gets more connections.
const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 })
const fastify = Fastify({ logger: false })

fastify.get('/static', async () => ({ ok: true }))

fastify.get('/row/*', async (request, reply) => {
  const { rows } = await pool.query('SELECT * FROM content WHERE path = $1', ['/' + request.params['*']])
  if (rows.length === 0) return reply.code(404).send({ type: 'NotFound' })
  return rows[0]
})

fastify.addHook('onClose', async () => { await pool.end() })
process.once('SIGTERM', () => { void fastify.close().then(() => process.exit(0)) })
await fastify.listen({ port: Number(process.env.PORT), host: '127.0.0.1' })
