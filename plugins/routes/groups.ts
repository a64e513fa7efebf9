import type { FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import Type from 'typebox'
import { BadRequest, Forbidden, NotFound } from '../../core/errors.js'
import { Groups, KEPT_GROUPS, MAX_MEMBER_CHANGES, VIRTUAL_GROUP, type GroupRecord } from '../../core/security/groups.js'
import { GLOBAL_ROLES, type Principal } from '../../core/security/roles.js'
import { urlOf } from '../../core/content/urls.js'
import { denied } from '../support/access.js'
import { addressOf } from '../support/url.js'

/** Global roles a group may give; `Authenticated`, which Plone lists on every group, is accepted and not kept. */
const Role = Type.Enum([...GLOBAL_ROLES, 'Authenticated'])
const Roles = Type.Array(Role, { maxItems: GLOBAL_ROLES.length + 1 })
const GroupId = Type.String({ pattern: '^[A-Za-z0-9][A-Za-z0-9 ._@-]{0,99}$', description: 'Group id (users and groups share one namespace)' })
const UserId = Type.String({ maxLength: 100 })
const Fields = {
  title: Type.Optional(Type.String({ maxLength: 256 })),
  description: Type.Optional(Type.String({ maxLength: 10000 })),
  email: Type.Optional(Type.Union([Type.Literal(''), Type.String({ format: 'email', maxLength: 254 })])),
  roles: Type.Optional(Roles),
  /** Groups inside groups are not kept: only an empty list is accepted. */
  groups: Type.Optional(Type.Array(Type.String(), { maxItems: 0 }))
}
const Members = Type.Object({ '@id': Type.String(), items: Type.Array(Type.String()), items_total: Type.Integer() })
/** Volto's groups control panel sends each group back whole, as GET answered it: what cannot change is accepted and ignored. */
const Echoed = {
  '@id': Type.Optional(Type.String({ maxLength: 2048 })),
  id: Type.Optional(Type.String({ maxLength: 200 })),
  groupname: Type.Optional(Type.String({ maxLength: 200 })),
  members: Type.Optional(Type.Object({ '@id': Type.Optional(Type.String({ maxLength: 2048 })), items: Type.Optional(Type.Array(Type.String({ maxLength: 200 }), { maxItems: 10_000 })), items_total: Type.Optional(Type.Integer()) }, { additionalProperties: false }))
}
const GroupSchema = Type.Object({
  '@id': Type.String(),
  id: Type.String(),
  groupname: Type.String(),
  title: Type.String(),
  description: Type.String(),
  email: Type.String(),
  roles: Type.Array(Type.String()),
  members: Type.Optional(Members)
})
const errors = { 400: { $ref: 'Error#' }, 401: { $ref: 'Error#' }, 403: { $ref: 'Error#' }, 404: { $ref: 'Error#' }, 409: { $ref: 'Error#' } }
const IdParam = Type.Object({ id: Type.String({ maxLength: 200 }) })

const holds = (who: Principal, role: string): boolean => who.roles.includes(role)

/** Plone's "Manage Groups": Managers and Site Administrators. */
function requireGroupManager (request: FastifyRequest): void {
  const who = request.principal
  if (!holds(who, 'Manager') && !holds(who, 'Site Administrator')) throw denied(request, 'Managing groups needs the Manager or Site Administrator role.')
}

/**
 * No escalation: a Site Administrator may not give a group the Manager role,
 * nor change or delete a group that holds it (and so join the Administrators).
 */
function requireMayGive (request: FastifyRequest, roles: readonly string[] | undefined, group?: GroupRecord): void {
  if (holds(request.principal, 'Manager')) return
  if (roles?.includes('Manager') === true || group?.roles.includes('Manager') === true) throw Forbidden('Only a Manager may give the Manager role or change a group that holds it.')
}

const keptRoles = (roles: string[] | undefined): string[] | undefined => roles === undefined ? undefined : [...new Set(roles.filter(r => r !== 'Authenticated'))].sort()

/** `@groups` as in plone.restapi (Volto's groups control panel): Managers and Site Administrators manage groups. */
export default fp(async fastify => {
  const groups = new Groups(fastify.db)
  groups.onChange(() => { fastify.sessions.groupsChanged() })

  const serialize = (request: FastifyRequest, g: GroupRecord, members?: string): Record<string, unknown> => ({
    '@id': urlOf(request.baseUrl, `/@groups/${g.id}`),
    id: g.id,
    groupname: g.id,
    title: g.title,
    description: g.description,
    email: g.email,
    // Plone lists `Authenticated` on every group but its virtual one.
    roles: g.id === VIRTUAL_GROUP.id ? [] : [...g.roles, 'Authenticated'],
    ...(members !== undefined ? { members: { '@id': members, items: g.members, items_total: g.members.length } } : {})
  })
  const notFound = (request: FastifyRequest): Error => NotFound(request.absoluteUrl(addressOf(request.raw).originalUrl))
  const existing = async (request: FastifyRequest, id: string): Promise<GroupRecord> => {
    const group = await groups.get(id)
    if (group === undefined) throw notFound(request)
    return group
  }

  fastify.get('/@groups', {
    schema: { summary: 'List groups (Manager, Site Administrator)', tags: ['users'], security: [{ bearer: [] }], querystring: Type.Object({ query: Type.Optional(Type.String({ maxLength: 100 })) }), response: { 200: Type.Array(GroupSchema), ...errors } }
  }, async request => {
    requireGroupManager(request)
    const { query } = request.query as { query?: string }
    // As plone.restapi: a filtered listing leaves the members out.
    return (await groups.list(query)).map(g => serialize(request, g, query === undefined ? urlOf(request.baseUrl, '/@groups') : undefined))
  })

  fastify.get('/@groups/:id', {
    schema: { summary: 'Read a group (Manager, Site Administrator)', tags: ['users'], security: [{ bearer: [] }], params: IdParam, response: { 200: GroupSchema, ...errors } }
  }, async request => {
    requireGroupManager(request)
    const { id } = request.params as { id: string }
    const group = await existing(request, id)
    return serialize(request, group, urlOf(request.baseUrl, `/@groups/${group.id}`))
  })

  fastify.post('/@groups', {
    schema: {
      summary: 'Create a group (Manager, Site Administrator)',
      tags: ['users'],
      security: [{ bearer: [] }],
      body: Type.Object({ groupname: GroupId, ...Fields, users: Type.Optional(Type.Array(UserId, { maxItems: MAX_MEMBER_CHANGES, uniqueItems: true })) }, { additionalProperties: false }),
      response: { 201: GroupSchema, ...errors }
    }
  }, async (request, reply) => {
    requireGroupManager(request)
    const { groupname, groups: _none, roles, ...fields } = request.body as { groupname: string, groups?: [], roles?: string[], users?: string[] } & Record<string, string>
    requireMayGive(request, roles)
    const group = serialize(request, await groups.create({ ...fields, id: groupname, roles: keptRoles(roles) }), urlOf(request.baseUrl, '/@groups'))
    return reply.code(201).header('location', group['@id']).send(group)
  })

  fastify.patch('/@groups/:id', {
    schema: {
      summary: 'Change a group, its roles and members (Manager, Site Administrator)',
      tags: ['users'],
      security: [{ bearer: [] }],
      params: IdParam,
      body: Type.Object({ ...Fields, ...Echoed, users: Type.Optional(Type.Record(UserId, Type.Boolean(), { maxProperties: MAX_MEMBER_CHANGES })) }, { additionalProperties: false }),
      response: { 204: Type.Null(), ...errors }
    }
  }, async (request, reply) => {
    requireGroupManager(request)
    const { id } = request.params as { id: string }
    const { title, description, email, roles, users } = request.body as { title?: string, description?: string, email?: string, roles?: string[], users?: Record<string, boolean> }
    const fields = { title, description, email, users }
    if (id === VIRTUAL_GROUP.id) {
      const unchanged = (keptRoles(roles) ?? []).length === 0 && Object.keys(users ?? {}).length === 0 &&
        [title ?? VIRTUAL_GROUP.title, description ?? VIRTUAL_GROUP.description, email ?? ''].every((v, i) => v === [VIRTUAL_GROUP.title, VIRTUAL_GROUP.description, ''][i])
      // Volto sends it back as it was listed: that changes nothing.
      if (unchanged) return reply.code(204).send()
      throw BadRequest(`${VIRTUAL_GROUP.id} is every logged-in user: it cannot be changed.`)
    }
    requireMayGive(request, roles, await existing(request, id))
    if (id === 'Administrators' && roles !== undefined && !roles.includes('Manager')) throw BadRequest('The group Administrators keeps the Manager role.')
    if (!await groups.update(id, { ...fields, roles: keptRoles(roles) })) throw notFound(request)
    return reply.code(204).send()
  })

  fastify.delete('/@groups/:id', {
    schema: { summary: 'Delete a group (Manager, Site Administrator)', tags: ['users'], security: [{ bearer: [] }], params: IdParam, response: { 204: Type.Null(), ...errors } }
  }, async (request, reply) => {
    requireGroupManager(request)
    const { id } = request.params as { id: string }
    if (KEPT_GROUPS.has(id)) throw BadRequest(`The group ${id} cannot be deleted.`)
    requireMayGive(request, undefined, await existing(request, id))
    if (!await groups.remove(id)) throw notFound(request)
    return reply.code(204).send()
  })
}, { name: 'groups', dependencies: ['auth'] })
