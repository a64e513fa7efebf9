import type { FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import Type from 'typebox'
import { BadRequest, Forbidden, NotFound, Unauthorized } from '../../core/errors.js'
import { GLOBAL_ROLES, Permission, SITE_ROLE_MAP, allows, type Principal } from '../../core/security/roles.js'
import { ADMIN_USER, type UserChanges, type UserRecord } from '../../core/security/users.js'
import { addressOf } from '../support/url.js'
import { isoDate, urlOf } from '../../core/content/urls.js'

const Role = Type.Enum([...GLOBAL_ROLES])
const UserSchema = Type.Object({
  '@id': Type.String(),
  id: Type.String(),
  username: Type.String(),
  email: Type.Union([Type.String(), Type.Null()]),
  fullname: Type.Union([Type.String(), Type.Null()]),
  roles: Type.Array(Type.String()),
  created: Type.Union([Type.String(), Type.Null()])
})
const Username = Type.String({ pattern: '^[A-Za-z0-9][A-Za-z0-9._@-]{0,99}$', description: 'Login name and user id' })
const Email = Type.String({ format: 'email', maxLength: 254 })
const Password = Type.String({ minLength: 8, maxLength: 1024 })
const errors = { 400: { $ref: 'Error#' }, 401: { $ref: 'Error#' }, 403: { $ref: 'Error#' }, 404: { $ref: 'Error#' }, 409: { $ref: 'Error#' } }
const IdParam = Type.Object({ id: Type.String() })

const isManager = (who: Principal): boolean => allows(SITE_ROLE_MAP[Permission.ManagePortal], new Set(who.roles))

/** Manager only; `self` also lets users read and edit themselves. */
function requireManager (who: Principal, self?: string): void {
  if (isManager(who) || (self !== undefined && who.userId === self)) return
  if (who.userId === null) throw Unauthorized()
  throw Forbidden('Managing users needs the Manager role.')
}

/** `@users` as in plone.restapi: Managers manage users; users read and change themselves (not their roles). */
export default fp(async fastify => {
  const { users } = fastify
  const serialize = (baseUrl: string, u: UserRecord): Record<string, unknown> => ({
    '@id': urlOf(baseUrl, `/@users/${u.id}`), id: u.id, username: u.id, email: u.email, fullname: u.fullname, roles: u.roles, created: isoDate(u.created)
  })
  const notFound = (request: FastifyRequest): Error => NotFound(request.absoluteUrl(addressOf(request.raw).originalUrl))

  fastify.get('/@users', {
    schema: { summary: 'List users (Manager)', tags: ['users'], security: [{ bearer: [] }], querystring: Type.Object({ query: Type.Optional(Type.String()) }), response: { 200: Type.Array(UserSchema), ...errors } }
  }, async request => {
    requireManager(request.principal)
    const { query } = request.query as { query?: string }
    return (await users.list(query)).map(u => serialize(request.baseUrl, u))
  })

  fastify.post('/@users', {
    schema: {
      summary: 'Create a user (Manager)',
      tags: ['users'],
      security: [{ bearer: [] }],
      body: Type.Object({ username: Username, email: Email, password: Password, fullname: Type.Optional(Type.String({ maxLength: 256 })), roles: Type.Optional(Type.Array(Role, { uniqueItems: true })) }, { additionalProperties: false }),
      response: { 201: UserSchema, ...errors }
    }
  }, async (request, reply) => {
    requireManager(request.principal)
    const user = serialize(request.baseUrl, await users.create(request.body as Parameters<typeof users.create>[0]))
    return reply.code(201).header('location', user['@id']).send(user)
  })

  fastify.get('/@users/:id', {
    schema: { summary: 'Read a user (Manager, or the user themself)', tags: ['users'], security: [{ bearer: [] }], params: IdParam, response: { 200: UserSchema, ...errors } }
  }, async request => {
    const { id } = request.params as { id: string }
    requireManager(request.principal, id)
    const user = await users.get(id)
    if (user === undefined) throw notFound(request)
    return serialize(request.baseUrl, user)
  })

  fastify.patch('/@users/:id', {
    schema: {
      summary: 'Change a user (roles: Manager only); a new password ends the user\'s tokens',
      tags: ['users'],
      security: [{ bearer: [] }],
      params: IdParam,
      body: Type.Object({ email: Type.Optional(Email), password: Type.Optional(Password), fullname: Type.Optional(Type.String({ maxLength: 256 })), roles: Type.Optional(Type.Array(Role, { uniqueItems: true })) }, { additionalProperties: false }),
      response: { 204: Type.Null(), ...errors }
    }
  }, async (request, reply) => {
    const { id } = request.params as { id: string }
    requireManager(request.principal, id)
    const changes = request.body as UserChanges
    if (changes.roles !== undefined && !isManager(request.principal)) throw Forbidden('Changing roles needs the Manager role.')
    if (id === ADMIN_USER && changes.roles !== undefined && !changes.roles.includes('Manager')) throw BadRequest(`The user '${ADMIN_USER}' keeps the Manager role.`)
    if (!await users.update(id, changes)) throw notFound(request)
    return reply.code(204).send()
  })

  fastify.delete('/@users/:id', {
    schema: { summary: 'Delete a user (Manager)', tags: ['users'], security: [{ bearer: [] }], params: IdParam, response: { 204: Type.Null(), ...errors } }
  }, async (request, reply) => {
    const { id } = request.params as { id: string }
    requireManager(request.principal)
    if (id === ADMIN_USER) throw BadRequest(`The user '${ADMIN_USER}' cannot be deleted.`)
    if (!await users.remove(id)) throw notFound(request)
    return reply.code(204).send()
  })
}, { name: 'users', dependencies: ['auth'] })
