import type { FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import Type from 'typebox'
import { BadRequest, Conflict, Forbidden, NotFound, Unauthorized } from '../../core/errors.js'
import { hashPassword, randomPassword } from '../../core/passwords.js'
import { GLOBAL_ROLES, Permission, SITE_ROLE_MAP, allows, type Principal } from '../../core/security.js'
import { addressOf, isoDate, urlOf } from '../../core/url.js'

interface UserRow { id: string, email: string | null, fullname: string | null, roles: string[], created: Date }

const Role = Type.Enum([...GLOBAL_ROLES])
const UserSchema = Type.Object({
  '@id': Type.String(), id: Type.String(), username: Type.String(), email: Type.Union([Type.String(), Type.Null()]),
  fullname: Type.Union([Type.String(), Type.Null()]), roles: Type.Array(Type.String()), created: Type.Union([Type.String(), Type.Null()])
})
const Username = Type.String({ pattern: '^[A-Za-z0-9][A-Za-z0-9._@-]{0,99}$', description: 'Login name and user id' })
const Email = Type.String({ format: 'email', maxLength: 254 })
const Password = Type.String({ minLength: 8, maxLength: 1024 })
const errors = { 400: { $ref: 'Error#' }, 401: { $ref: 'Error#' }, 403: { $ref: 'Error#' }, 404: { $ref: 'Error#' }, 409: { $ref: 'Error#' } }
const IdParam = Type.Object({ id: Type.String() })

const isManager = (who: Principal): boolean => allows(SITE_ROLE_MAP[Permission.ManagePortal], new Set(who.roles))

/** Manager only (API.md §3); `self` also lets users read and edit themselves. */
function requireManager (who: Principal, self?: string): void {
  if (isManager(who) || (self !== undefined && who.userId === self)) return
  if (who.userId === null) throw Unauthorized()
  throw Forbidden('Managing users needs the Manager role.')
}

/**
 * Users and the `@users` service, as in plone.restapi. On first start the
 * Manager `admin` is created with ADMIN_PASSWORD, or a random password that is
 * logged once.
 */
export default fp(async fastify => {
  const { db } = fastify
  const { rowCount } = await db.query("SELECT 1 FROM users WHERE id = 'admin'")
  if (rowCount === 0) {
    const password = fastify.config.ADMIN_PASSWORD !== '' ? fastify.config.ADMIN_PASSWORD : randomPassword()
    const created = await db.query(`INSERT INTO users (id, fullname, password_hash, roles) VALUES ('admin', 'Administrator', $1, '{Manager}')
      ON CONFLICT (id) DO NOTHING`, [await hashPassword(password)])
    if (created.rowCount > 0 && fastify.config.ADMIN_PASSWORD === '') {
      fastify.log.warn(`Created user 'admin' with the password ${password} (set ADMIN_PASSWORD to choose it). It is not shown again.`)
    }
  }

  const serialize = (baseUrl: string, u: UserRow): Record<string, unknown> => ({
    '@id': urlOf(baseUrl, `/@users/${u.id}`), id: u.id, username: u.id, email: u.email, fullname: u.fullname, roles: u.roles, created: isoDate(u.created)
  })
  const load = async (id: string): Promise<UserRow | undefined> =>
    (await db.query<UserRow>('SELECT id, email, fullname, roles, created FROM users WHERE id = $1', [id])).rows[0]
  const notFound = (request: FastifyRequest): Error => NotFound(request.absoluteUrl(addressOf(request.raw).originalUrl))

  /**
   * @login accepts a user name or an e-mail address, case-insensitively, so
   * both must name one user only: otherwise one of two look-alike users could
   * never log in.
   */
  async function refuseTaken (username: string | null, email: string | null, except: string | null = null): Promise<void> {
    const { rows } = await db.query<{ id: string, email: string | null }>(
      `SELECT id, email FROM users WHERE (lower(id) = lower($1) OR lower(email) = lower($2)) AND id IS DISTINCT FROM $3 LIMIT 1`,
      [username, email, except])
    const taken = rows[0]
    if (taken === undefined) return
    if (username !== null && taken.id.toLowerCase() === username.toLowerCase()) throw Conflict(`The user name '${username}' is taken.`)
    throw Conflict(`The e-mail address '${String(email)}' belongs to another user.`)
  }

  fastify.get('/@users', {
    schema: { summary: 'List users (Manager)', tags: ['users'], security: [{ bearer: [] }], querystring: Type.Object({ query: Type.Optional(Type.String()) }), response: { 200: Type.Array(UserSchema), ...errors } }
  }, async request => {
    requireManager(request.principal)
    const { query } = request.query as { query?: string }
    const { rows } = await db.query<UserRow>(`SELECT id, email, fullname, roles, created FROM users
      WHERE $1::text IS NULL OR id ILIKE '%' || $1 || '%' OR fullname ILIKE '%' || $1 || '%' OR email ILIKE '%' || $1 || '%' ORDER BY id`, [query ?? null])
    return rows.map(u => serialize(request.baseUrl, u))
  })

  fastify.post('/@users', {
    schema: {
      summary: 'Create a user (Manager)', tags: ['users'], security: [{ bearer: [] }],
      body: Type.Object({ username: Username, email: Email, password: Password, fullname: Type.Optional(Type.String({ maxLength: 256 })), roles: Type.Optional(Type.Array(Role, { uniqueItems: true })) }, { additionalProperties: false }),
      response: { 201: UserSchema, ...errors }
    }
  }, async (request, reply) => {
    requireManager(request.principal)
    const body = request.body as { username: string, email: string, password: string, fullname?: string, roles?: string[] }
    await refuseTaken(body.username, body.email)
    const result = await db.query<UserRow>(`INSERT INTO users (id, email, fullname, password_hash, roles) VALUES ($1, $2, $3, $4, $5)
      ON CONFLICT DO NOTHING RETURNING id, email, fullname, roles, created`,
    [body.username, body.email, body.fullname ?? null, await hashPassword(body.password), body.roles ?? ['Member']])
    if (result.rowCount === 0) throw Conflict(`The user name '${body.username}' or the e-mail address is taken.`)
    const user = serialize(request.baseUrl, result.rows[0])
    return reply.code(201).header('location', user['@id']).send(user)
  })

  fastify.get('/@users/:id', {
    schema: { summary: 'Read a user (Manager, or the user themself)', tags: ['users'], security: [{ bearer: [] }], params: IdParam, response: { 200: UserSchema, ...errors } }
  }, async request => {
    const { id } = request.params as { id: string }
    requireManager(request.principal, id)
    const user = await load(id)
    if (user === undefined) throw notFound(request)
    return serialize(request.baseUrl, user)
  })

  fastify.patch('/@users/:id', {
    schema: {
      summary: 'Change a user (roles: Manager only)', tags: ['users'], security: [{ bearer: [] }], params: IdParam,
      body: Type.Object({ email: Type.Optional(Email), password: Type.Optional(Password), fullname: Type.Optional(Type.String({ maxLength: 256 })), roles: Type.Optional(Type.Array(Role, { uniqueItems: true })) }, { additionalProperties: false }),
      response: { 204: Type.Null(), ...errors }
    }
  }, async (request, reply) => {
    const { id } = request.params as { id: string }
    requireManager(request.principal, id)
    const body = request.body as { email?: string, password?: string, fullname?: string, roles?: string[] }
    if (body.roles !== undefined && !isManager(request.principal)) throw Forbidden('Changing roles needs the Manager role.')
    if (id === 'admin' && body.roles !== undefined && !body.roles.includes('Manager')) throw BadRequest("The user 'admin' keeps the Manager role.")
    if (await load(id) === undefined) throw notFound(request)
    if (body.email !== undefined) await refuseTaken(null, body.email, id)
    const hash = body.password !== undefined ? await hashPassword(body.password) : null
    await db.query(`UPDATE users SET email = COALESCE($2, email), fullname = COALESCE($3, fullname),
      password_hash = COALESCE($4, password_hash), roles = COALESCE($5, roles) WHERE id = $1`,
    [id, body.email ?? null, body.fullname ?? null, hash, body.roles ?? null])
    return reply.code(204).send()
  })

  fastify.delete('/@users/:id', {
    schema: { summary: 'Delete a user (Manager)', tags: ['users'], security: [{ bearer: [] }], params: IdParam, response: { 204: Type.Null(), ...errors } }
  }, async (request, reply) => {
    const { id } = request.params as { id: string }
    requireManager(request.principal)
    if (id === 'admin') throw BadRequest("The user 'admin' cannot be deleted.")
    const result = await db.query('DELETE FROM users WHERE id = $1', [id])
    if (result.rowCount === 0) throw notFound(request)
    return reply.code(204).send()
  })
}, { name: 'users', dependencies: ['db', 'auth'] })
