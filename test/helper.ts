import type { FastifyBaseLogger, FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { loadConfig } from '../core/config/config.js'
import { hashPassword } from '../core/security/passwords.js'
import { buildServer } from '../app/server.js'
import type { AppOptions } from '../app/app.js'

/** The PostgreSQL server the tests use (CI and every dev machine run one on 127.0.0.1:5432). */
export const PG_ADMIN_URL = process.env.TEST_DATABASE_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/test'
export const ADMIN_PASSWORD = 'admin-secret'
export const JWT_SECRET = 'test-secret-that-is-long-enough-for-hs256'

interface TapLike { teardown: (fn: () => unknown) => void }

const ignore = (): void => {}
/** A logger that writes nothing, for parts of the service a test builds on their own. */
export const silentLogger: FastifyBaseLogger = {
  level: 'silent', fatal: ignore, error: ignore, warn: ignore, info: ignore, debug: ignore, trace: ignore, silent: ignore, child: () => silentLogger
}

export interface TestApp {
  app: FastifyInstance
  /** The database URL (empty for the embedded database). */
  databaseUrl: string
  inject: (options: InjectOptions) => Promise<LightMyRequestResponse>
  /** A token for a user, created with these global roles when missing. */
  tokenFor: (userId: string, roles?: string[]) => Promise<string>
  /** JSON request helper: `call('POST', '/talks', body, token)`. */
  call: (method: InjectOptions['method'], url: string, body?: unknown, token?: string, headers?: Record<string, string>) => Promise<LightMyRequestResponse>
}

/** A fresh, empty PostgreSQL database for one test file; dropped at teardown. */
export async function freshDatabase (t: TapLike): Promise<string> {
  const name = `cms_test_${process.pid}_${Math.random().toString(36).slice(2, 10)}`
  const admin = new pg.Client({ connectionString: PG_ADMIN_URL })
  await admin.connect()
  await admin.query(`CREATE DATABASE ${name}`)
  await admin.end()
  t.teardown(async () => {
    const client = new pg.Client({ connectionString: PG_ADMIN_URL })
    await client.connect()
    await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
    await client.end()
  })
  const url = new URL(PG_ADMIN_URL)
  url.pathname = `/${name}`
  return url.toString()
}

/**
 * Builds the service for one test (fastify/demo's helper): a fresh PostgreSQL
 * database, or with `embedded: true` a fresh embedded one in a temp folder.
 * `env` adds environment variables, as an operator would set them.
 */
export async function build (t: TapLike, options: { embedded?: boolean, env?: Record<string, string>, app?: AppOptions, dataDir?: string, databaseUrl?: string } = {}): Promise<TestApp> {
  let databaseUrl = ''
  let dataDir = options.dataDir ?? ''
  if (options.embedded === true) {
    if (dataDir === '') {
      dataDir = await mkdtemp(join(tmpdir(), 'cms-embedded-'))
      const dir = dataDir
      t.teardown(async () => { await rm(dir, { recursive: true, force: true }) })
    }
  } else {
    // A second app on the database of another is a second process of one site.
    databaseUrl = options.databaseUrl ?? await freshDatabase(t)
  }
  const config = loadConfig({
    // TEST_LOG_LEVEL=error shows what a test's service logged (a 500's cause, say).
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    ADMIN_PASSWORD,
    JWT_SECRET,
    DATABASE_URL: databaseUrl,
    DATA_DIR: dataDir,
    ...options.env
  })
  const app = await buildServer(config, options.app)
  t.teardown(async () => { await app.close() })
  await app.ready()

  const tokens = new Map<string, string>()
  const tokenFor = async (userId: string, roles: string[] = ['Member']): Promise<string> => {
    const known = tokens.get(userId)
    if (known !== undefined) return known
    if (userId !== 'admin') {
      await app.db.query(`INSERT INTO users (id, email, fullname, password_hash, roles) VALUES ($1, $2, $3, $4, $5)
        ON CONFLICT (id) DO NOTHING`, [userId, `${userId}@example.org`, `User ${userId}`, await hashPassword(`${userId}-password`), roles])
    }
    const password = userId === 'admin' ? ADMIN_PASSWORD : `${userId}-password`
    const res = await app.inject({ method: 'POST', url: `${config.SITE_PATH}/@login`, payload: { login: userId, password } })
    if (res.statusCode !== 200) throw new Error(`login of ${userId} failed: ${res.statusCode} ${res.body}`)
    const token = (res.json() as { token: string }).token
    tokens.set(userId, token)
    return token
  }
  const call: TestApp['call'] = async (method, url, body, token, headers = {}) => await app.inject({
    method,
    url,
    headers: {
      accept: 'application/json',
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...(token !== undefined ? { authorization: `Bearer ${token}` } : {}),
      ...headers
    },
    ...(body !== undefined ? { payload: JSON.stringify(body) } : {})
  })
  return { app, databaseUrl, inject: async o => await app.inject(o), tokenFor, call }
}

/** A valid talk body; `overrides` replace or (with `undefined`) remove fields. */
export function talkBody (overrides: Record<string, unknown> = {}): Record<string, unknown> {
  const body: Record<string, unknown> = {
    '@type': 'talk',
    title: 'Fastify for Plone people',
    description: 'How the REST API maps onto Fastify',
    type_of_talk: 'Talk',
    audience: ['Beginner'],
    ...overrides
  }
  for (const [k, v] of Object.entries(body)) if (v === undefined) delete body[k]
  return body
}

/**
 * A form upload (`multipart/form-data`, as Volto and plone.restapi's clients send a file) of
 * `content` in the part `field` (then the text `fields`), encoded by the platform's FormData, through a service's `inject`.
 */
export async function formUpload (inject: TestApp['inject'], path: string, content: string | Buffer,
  { token, type, field = 'file', filename = 'blob', fields = {} }: { token?: string, type: string, field?: string, filename?: string, fields?: Record<string, string> }): Promise<LightMyRequestResponse> {
  const form = new FormData()
  form.append(field, new Blob([typeof content === 'string' ? content : new Uint8Array(content)], { type }), filename)
  for (const [name, value] of Object.entries(fields)) form.append(name, value)
  const encoded = new Response(form)
  return await inject({ method: 'POST', url: path, payload: Buffer.from(await encoded.arrayBuffer()), headers: { 'content-type': encoded.headers.get('content-type')!, ...(token !== undefined ? { authorization: `Bearer ${token}` } : {}) } })
}
