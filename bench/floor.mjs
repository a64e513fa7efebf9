/**
 * The floor: the least a Node server can do for the same requests on the
 * same machine and the same PostgreSQL. `GET /row/*` reads one talk row by
 * path with `pg` and answers it as JSON; `GET /static` answers without the
 * database. Every scenario's figure is divided by the floor's from the same
 * run, because only ratios are stable on shared machines.
 *
 * For the media (issue 24), the least a Node server does for the same work:
 * `GET /scale/<uid>/<width>/<height>` makes that scale of an Image's original
 * as the service does (the original read with `pg`, sharp with the service's
 * options) and keeps nothing; `GET /file/<uid>` streams a File's large object
 * in the service's slices of 256 KiB; `POST /upload` writes its body into a
 * new large object in the slices of the service's resumable uploads.
 * `POST /page` stores a page of blocks as the least a content store must:
 * its JSON and its words' full-text vector (the blocks' plain text, weighted
 * as the catalogue's `searchable`), one row with a GIN index, one statement.
 *
 * Run as its own process by run.mjs, with DATABASE_URL and PORT set.
 */
import { pipeline } from 'node:stream/promises'
import Fastify from 'fastify'
import pg from 'pg'
import pgCopy from 'pg-copy-streams'
import sharp from 'sharp'
// The service's own slicing of a stream (built into dist/ before the bench runs): the floor does the same work.
import { fixedSlices } from '../dist/core/slices.js'
import { BinaryCopyField } from '../dist/core/db/copy-binary.js'

// The same pool size as the service (core/db.ts), so that neither gets more connections.
const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 })
const fastify = Fastify({ logger: false })

fastify.get('/static', async () => ({ ok: true }))

fastify.get('/row/*', async (request, reply) => {
  const { rows } = await pool.query('SELECT * FROM content WHERE path = $1', ['/' + request.params['*']])
  if (rows.length === 0) return reply.code(404).send({ type: 'NotFound' })
  return rows[0]
})

// The service's bound (core/content/image/refusal.ts, MAX_PIXELS) and slice (core/content/blobs.ts).
const MAX_PIXELS = 50_000_000
const SLICE = 256 * 1024

fastify.get('/scale/:uid/:width/:height', async (request, reply) => {
  const { uid, width, height } = request.params
  const { rows: [original] } = await pool.query("SELECT bytes FROM blobs WHERE uid = $1 AND field = 'image'", [uid])
  if (original === undefined) return reply.code(404).send({ type: 'NotFound' })
  const scale = await sharp(original.bytes, { limitInputPixels: MAX_PIXELS })
    .resize(Number(width), Number(height), { fit: 'fill' }).withMetadata().toFormat('jpeg').toBuffer()
  return reply.type('image/jpeg').send(scale)
})

fastify.get('/file/:uid', async (request, reply) => {
  const { rows: [file] } = await pool.query("SELECT oid, size FROM files WHERE uid = $1 AND field = 'file'", [request.params.uid])
  if (file === undefined) return reply.code(404).send({ type: 'NotFound' })
  const size = Number(file.size)
  // As the service sends it: one COPY of the object's 256 KiB slices in the binary format, read at the socket's pace.
  const client = await pool.connect()
  const copy = client.query(pgCopy.to(`COPY (SELECT lo_get(${Number(file.oid)}, at, least(${SLICE}, ${size} - at)::int) FROM generate_series(0::bigint, ${size - 1}::bigint, ${SLICE}) AS at) TO STDOUT (FORMAT binary)`))
  const fields = new BinaryCopyField()
  pipeline(copy, fields).then(() => { client.release() }, err => { client.release(err) })
  return reply.type('application/octet-stream').header('content-length', String(size)).send(fields)
})

// The bytes of an upload as they arrive, into a new large object a slice of the service's (core/content/uploads.ts) a
// statement, dropped at the end: the database's part of a resumable upload, without its protocol and bookkeeping.
const UPLOAD_SLICE = 1024 * 1024
fastify.addContentTypeParser('application/offset+octet-stream', (_request, payload, done) => done(null, payload))
fastify.post('/upload', async request => {
  const { rows: [{ oid }] } = await pool.query('SELECT lo_create(0) AS oid')
  let at = 0
  for await (const slice of fixedSlices(request.body, UPLOAD_SLICE)) {
    await pool.query('SELECT lo_put($1, $2, $3)', [oid, at, slice])
    at += slice.length
  }
  await pool.query('SELECT lo_unlink($1)', [oid])
  return { size: at }
})

// A page's JSON and its words, in one row of a table of the floor's own (made once, left to the bench's database).
await pool.query('CREATE TABLE IF NOT EXISTS floor_pages (uid uuid PRIMARY KEY DEFAULT gen_random_uuid(), data jsonb NOT NULL, searchable tsvector NOT NULL)')
await pool.query('CREATE INDEX IF NOT EXISTS floor_pages_searchable ON floor_pages USING gin (searchable)')
fastify.post('/page', async (request, reply) => {
  const page = request.body
  const text = Object.values(page.blocks ?? {}).map(block => block.plaintext ?? '').join(' ')
  const { rows: [row] } = await pool.query(`INSERT INTO floor_pages (data, searchable)
    VALUES ($1, setweight(to_tsvector('simple', $2), 'A') || setweight(to_tsvector('simple', $3), 'B')) RETURNING uid`, [JSON.stringify(page), page.title, text])
  return reply.code(201).send({ uid: row.uid, '@type': page['@type'] })
})

fastify.addHook('onClose', async () => { await pool.end() })
process.once('SIGTERM', () => { void fastify.close().then(() => process.exit(0)) })
await fastify.listen({ port: Number(process.env.PORT), host: '127.0.0.1' })
