import type { FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import Type, { type Static, type TNull, type TSchema, type TUnion } from 'typebox'
import { BadRequest, Forbidden, NotFound, Unauthorized } from '../../core/errors.js'
import { GLOBAL_ROLES, Permission, SITE_ROLE_MAP, allows, type Principal } from '../../core/security/roles.js'
import { ADMIN_USER, type UserChanges, type UserRecord } from '../../core/security/users.js'
import { groupsOfUsers, VIRTUAL_GROUP } from '../../core/security/groups.js'
import { addressOf } from '../support/url.js'
import { isoDate, urlOf } from '../../core/content/urls.js'

const Role = Type.Enum([...GLOBAL_ROLES])
const Nullable = <T extends TSchema>(schema: T): TUnion<[T, TNull]> => Type.Union([schema, Type.Null()])
const UserSchema = Type.Object({
  '@id': Type.String(),
  id: Type.String(),
  username: Type.String(),
  email: Nullable(Type.String()),
  fullname: Nullable(Type.String()),
  roles: Type.Array(Type.String()),
  created: Nullable(Type.String()),
  description: Nullable(Type.String()),
  home_page: Nullable(Type.String()),
  location: Nullable(Type.String()),
  portrait: Type.Null(),
  groups: Type.Object({ '@id': Type.String(), items: Type.Array(Type.Object({ id: Type.String(), title: Type.String() })), items_total: Type.Integer() })
})
/** The member properties a user form sends besides the login (no portraits are kept: `portrait` may only be null). */
const MemberProperties = {
  description: Type.Optional(Nullable(Type.String({ maxLength: 10000 }))),
  home_page: Type.Optional(Nullable(Type.String({ maxLength: 2048 }))),
  location: Type.Optional(Nullable(Type.String({ maxLength: 1024 }))),
  portrait: Type.Optional(Type.Null())
}
const Username = Type.String({ pattern: '^[A-Za-z0-9][A-Za-z0-9._@-]{0,99}$', description: 'Login name and user id' })
const Email = Type.String({ format: 'email', maxLength: 254 })
const Password = Type.String({ minLength: 8, maxLength: 1024 })
const errors = { 400: { $ref: 'Error#' }, 401: { $ref: 'Error#' }, 403: { $ref: 'Error#' }, 404: { $ref: 'Error#' }, 409: { $ref: 'Error#' } }
const IdParam = Type.Object({ id: Type.String() })
/** Users a listing answers at most (a site's every user, for Volto's control panel, which pages them itself). */
const MAX_USERS_LISTED = 10_000
/** Users a search answers unless `limit` says otherwise (plone.restapi's DEFAULT_SEARCH_RESULTS_LIMIT). */
const DEFAULT_USER_SEARCH_LIMIT = 25
const GroupFilter = Type.Union([Type.String({ maxLength: 200 }), Type.Array(Type.String({ maxLength: 200 }), { maxItems: 100 })])
const UserListQuery = Type.Object({
  query: Type.Optional(Type.String({ maxLength: 200 })),
  search: Type.Optional(Type.String({ maxLength: 200 })),
  // Query values are strings (no coercion): a count of 1 to MAX_USERS_LISTED, checked by the route.
  limit: Type.Optional(Type.String({ pattern: '^[1-9][0-9]{0,4}$' })),
  'groups-filter:list': Type.Optional(GroupFilter),
  'groups-filter': Type.Optional(GroupFilter)
}, { additionalProperties: false })

/** Global roles as Volto's user control panel sends them, `{"Editor": true, "Contributor": false}`; roles this site does not have may only be false. */
const RoleMap = Type.Record(Type.String(), Type.Boolean())

/** A role map as additions and removals; roles this site does not have may only be removed (they are not held). */
function roleChangesOf (roles: Record<string, boolean>): { add: string[], remove: string[] } {
  const add: string[] = []
  const remove: string[] = []
  for (const [role, held] of Object.entries(roles)) {
    const known = (GLOBAL_ROLES as readonly string[]).includes(role)
    if (held && !known) throw BadRequest(`Unknown role '${role}'.`)
    if (known) (held ? add : remove).push(role)
  }
  return { add, remove }
}

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
  /** `groups`: the user's groups (groupsOfUsers), besides Plone's virtual group of every logged-in user. */
  const serialize = (baseUrl: string, u: UserRecord, groups: Array<{ id: string, title: string }> = []): Record<string, unknown> => ({
    '@id': urlOf(baseUrl, `/@users/${u.id}`),
    id: u.id,
    username: u.id,
    email: u.email,
    fullname: u.fullname,
    roles: u.roles,
    created: isoDate(u.created),
    description: u.description,
    home_page: u.home_page,
    location: u.location,
    portrait: null,
    groups: { '@id': urlOf(baseUrl, '/@users'), items: [{ id: VIRTUAL_GROUP.id, title: VIRTUAL_GROUP.id }, ...groups], items_total: groups.length + 1 }
  })
  const notFound = (request: FastifyRequest): Error => NotFound(request.absoluteUrl(addressOf(request.raw).originalUrl))

  fastify.get('/@users', {
    schema: { summary: 'List users (Manager): all, or those a search finds (`query`, `search`), members of groups (`groups-filter:list`), the first `limit`', tags: ['users'], security: [{ bearer: [] }], querystring: UserListQuery, response: { 200: Type.Object({ '@id': Type.String(), items: Type.Array(UserSchema), items_total: Type.Integer() }), ...errors } }
  }, async request => {
    requireManager(request.principal)
    const query = request.query as Static<typeof UserListQuery>
    const groupFilter = [query['groups-filter:list'] ?? [], query['groups-filter'] ?? []].flat()
    const texts = [query.query, query.search].filter(t => t !== undefined && t !== '')
    if (texts.length > 1 && texts[0] !== texts[1]) throw BadRequest('Search users by query or by search, not by both.')
    const limit = query.limit === undefined ? undefined : Number(query.limit)
    if (limit !== undefined && limit > MAX_USERS_LISTED) throw BadRequest(`limit: at most ${MAX_USERS_LISTED}.`)
    const listed = await users.list({
      text: texts[0],
      // Every user is a member of the virtual group.
      groups: groupFilter.length === 0 || groupFilter.includes(VIRTUAL_GROUP.id) ? undefined : groupFilter,
      limit: limit ?? (texts.length > 0 || groupFilter.length > 0 ? DEFAULT_USER_SEARCH_LIMIT : MAX_USERS_LISTED)
    })
    const groups = await groupsOfUsers(fastify.db, listed.map(u => u.id))
    const items = listed.map(u => serialize(request.baseUrl, u, groups.get(u.id)))
    return { '@id': urlOf(request.baseUrl, '/@users'), items, items_total: items.length }
  })

  // The roles Volto's user control panel offers as columns (plone.restapi's @roles).
  fastify.get('/@roles', {
    schema: { summary: 'The global roles a user may be given (Manager)', tags: ['users'], security: [{ bearer: [] }], response: { 200: Type.Array(Type.Object({ '@id': Type.String(), '@type': Type.Literal('role'), id: Type.String(), title: Type.String() })), ...errors } }
  }, async request => {
    requireManager(request.principal)
    return GLOBAL_ROLES.map(role => ({ '@id': urlOf(request.baseUrl, `/@roles/${role}`), '@type': 'role' as const, id: role, title: role }))
  })

  fastify.post('/@users', {
    schema: {
      summary: 'Create a user (Manager)',
      tags: ['users'],
      security: [{ bearer: [] }],
      body: Type.Object({ username: Username, email: Email, password: Password, fullname: Type.Optional(Type.String({ maxLength: 256 })), roles: Type.Optional(Type.Array(Role, { uniqueItems: true })), ...MemberProperties }, { additionalProperties: false }),
      response: { 201: UserSchema, ...errors }
    }
  }, async (request, reply) => {
    requireManager(request.principal)
    const { portrait: _portrait, ...body } = request.body as Parameters<typeof users.create>[0] & { portrait?: null }
    const user = serialize(request.baseUrl, await users.create(body))
    return reply.code(201).header('location', user['@id']).send(user)
  })

  fastify.get('/@users/:id', {
    schema: { summary: 'Read a user (Manager, or the user themself)', tags: ['users'], security: [{ bearer: [] }], params: IdParam, response: { 200: UserSchema, ...errors } }
  }, async request => {
    const { id } = request.params as { id: string }
    requireManager(request.principal, id)
    const user = await users.get(id)
    if (user === undefined) throw notFound(request)
    return serialize(request.baseUrl, user, (await groupsOfUsers(fastify.db, [user.id])).get(user.id))
  })

  fastify.patch('/@users/:id', {
    schema: {
      summary: 'Change a user (roles: Manager only); a new password ends the user\'s tokens',
      tags: ['users'],
      security: [{ bearer: [] }],
      params: IdParam,
      body: Type.Object({ email: Type.Optional(Email), password: Type.Optional(Password), fullname: Type.Optional(Type.String({ maxLength: 256 })), roles: Type.Optional(Type.Union([Type.Array(Role, { uniqueItems: true }), RoleMap])), ...MemberProperties }, { additionalProperties: false }),
      response: { 204: Type.Null(), ...errors }
    }
  }, async (request, reply) => {
    const { id } = request.params as { id: string }
    requireManager(request.principal, id)
    const { roles, portrait: _portrait, ...rest } = request.body as Omit<UserChanges, 'roles'> & { roles?: string[] | Record<string, boolean>, portrait?: null }
    if (roles !== undefined && !isManager(request.principal)) throw Forbidden('Changing roles needs the Manager role.')
    const changes: UserChanges = { ...rest, ...(Array.isArray(roles) ? { roles } : roles !== undefined ? { roleChanges: roleChangesOf(roles) } : {}) }
    const dropsManager = changes.roles !== undefined ? !changes.roles.includes('Manager') : changes.roleChanges?.remove.includes('Manager') === true
    if (id === ADMIN_USER && dropsManager) throw BadRequest(`The user '${ADMIN_USER}' keeps the Manager role.`)
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
