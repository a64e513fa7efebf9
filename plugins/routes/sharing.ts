import fp from 'fastify-plugin'
import Type from 'typebox'
import { BadRequest } from '../../core/errors.js'
import { mayShare, searchPrincipals, Sharing, type SharingChange } from '../../core/security/sharing.js'
import { urlOf } from '../../core/content/urls.js'
import { denied, requireContext } from '../support/access.js'

const errors = Object.fromEntries([400, 401, 403, 404].map(s => [s, { $ref: 'Error#' }]))
const Setting = Type.Union([Type.Boolean(), Type.Literal('global'), Type.Literal('acquired')])
const RoleSettings = Type.Record(Type.String({ maxLength: 64 }), Setting, { maxProperties: 16 })
const Entry = Type.Object({
  id: Type.String(),
  type: Type.String(),
  title: Type.String(),
  login: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  disabled: Type.Optional(Type.Boolean()),
  roles: RoleSettings
})
const Settings = Type.Object({
  available_roles: Type.Array(Type.Object({ id: Type.String(), title: Type.String() })),
  entries: Type.Array(Entry),
  inherit: Type.Boolean()
})
/** Volto sends every entry it shows, with its roles as shown (`global` and `acquired` grant nothing). */
const Change = Type.Object({
  entries: Type.Optional(Type.Array(Type.Object({
    id: Type.String({ minLength: 1, maxLength: 100, pattern: '^[^\\u0000]*$' }),
    type: Type.Optional(Type.Union([Type.Literal('user'), Type.Literal('group')])),
    title: Type.Optional(Type.String({ maxLength: 1024 })),
    login: Type.Optional(Type.Union([Type.String({ maxLength: 1024 }), Type.Null()])),
    disabled: Type.Optional(Type.Boolean()),
    roles: RoleSettings
  }), { maxItems: 200 })),
  inherit: Type.Optional(Type.Boolean())
})
const Search = Type.String({ maxLength: 100, pattern: '^[^\\u0000]*$' })
const PrincipalSchema = Type.Object({}, { additionalProperties: true })

/**
 * `@sharing` (plone.restapi) on any object: its local roles per user and
 * group, inheritance, and the search of principals Volto's sharing page
 * offers; for those holding "Sharing page: Delegate roles" there. And
 * `@principals` (users and groups by a search), for Managers and Site Administrators.
 */
export default fp(async fastify => {
  const { content } = fastify
  const sharing = new Sharing(content, fastify.db)

  fastify.get('/@sharing', {
    schema: { summary: 'Local roles of the object, per user and group (Sharing)', tags: ['sharing'], security: [{ bearer: [] }], querystring: Type.Object({ search: Type.Optional(Search) }), response: { 200: Settings, ...errors } }
  }, async request => {
    const located = await requireContext(content, request)
    if (!mayShare(request.principal, located)) throw denied(request, `You may not see the sharing of ${located.obj.path}.`)
    const { search } = request.query as { search?: string }
    return await sharing.settings(located, request.principal, search)
  })

  fastify.post('/@sharing', {
    schema: { summary: 'Grant or take local roles, block or restore their inheritance', tags: ['sharing'], security: [{ bearer: [] }], body: Change, response: { 204: Type.Null(), ...errors } }
  }, async (request, reply) => {
    const located = await requireContext(content, request)
    if (!mayShare(request.principal, located)) throw denied(request, `You may not change the sharing of ${located.obj.path}.`)
    const body = request.body as SharingChange
    const ids = (body.entries ?? []).map(e => e.id)
    if (new Set(ids).size !== ids.length) throw BadRequest('Each principal may be named once in `entries`.')
    await sharing.update(located.obj.path, request.principal, body)
    return reply.code(204).send()
  })

  fastify.get('/@principals', {
    schema: { summary: 'Users and groups whose id, name or e-mail contains `search` (Manager, Site Administrator)', tags: ['users'], security: [{ bearer: [] }], querystring: Type.Object({ search: Search }), response: { 200: Type.Object({ users: Type.Array(PrincipalSchema), groups: Type.Array(PrincipalSchema) }), ...errors } }
  }, async request => {
    const who = request.principal
    if (!who.roles.includes('Manager') && !who.roles.includes('Site Administrator')) throw denied(request, 'Searching users and groups needs the Manager or Site Administrator role.')
    const { search } = request.query as { search: string }
    if (search === '') throw BadRequest('Required "search" parameter is missing.')
    const found = await searchPrincipals(fastify.db, search)
    return {
      users: found.filter(p => p.type === 'user').map(p => ({
        '@id': urlOf(request.baseUrl, `/@users/${p.id}`), id: p.id, username: p.id, fullname: p.fullname, email: p.email, description: p.description, roles: p.roles
      })),
      groups: found.filter(p => p.type === 'group').map(p => ({
        '@id': urlOf(request.baseUrl, `/@groups/${p.id}`), id: p.id, groupname: p.id, title: p.title, description: p.description ?? '', email: p.email ?? '', roles: [...p.roles, 'Authenticated']
      }))
    }
  })
}, { name: 'sharing', dependencies: ['auth', 'http'] })
