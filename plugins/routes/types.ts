import type { FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import Type from 'typebox'
import { requireContext } from '../support/access.js'
import { NotFound, Unauthorized } from '../../core/errors.js'
import { typeSchema } from '../../core/content/json-schema.js'
import type { ContentType } from '../../core/content/registry.js'
import type { Located } from '../../core/content/rows.js'
import { Permission } from '../../core/security/roles.js'
import { urlOf } from '../../core/content/urls.js'
import { can } from '../../core/security/permissions.js'

const errorResponses = Object.fromEntries([401, 404].map(s => [s, { $ref: 'Error#' }]))

/**
 * `@types` (plone.restapi): the types addable in the context (for logged-in
 * users, as in Plone) and each type's JSON Schema.
 */
export default fp(async fastify => {
  const { contentTypes: types, content, vocabularies } = fastify
  const contentTypes = (): ContentType[] => [...types.types.values()].filter(t => t !== types.siteRoot)
  const typesIn = (request: FastifyRequest, located: Located): Array<Record<string, unknown>> => {
    const mayAdd = can(request.principal, Permission.Add, located)
    return contentTypes().map(type => {
      const addable = mayAdd && located.type.allows(type)
      return { '@id': urlOf(request.baseUrl, `/@types/${type.name}`), id: type.name, title: type.title, addable, immediately_addable: addable }
    })
  }

  fastify.get('/@types', {
    schema: {
      summary: 'Content types, and whether they can be added here (on any content path)',
      tags: ['types'],
      security: [{ bearer: [] }],
      response: { 200: Type.Array(Type.Object({ '@id': Type.String(), id: Type.String(), title: Type.String(), addable: Type.Boolean(), immediately_addable: Type.Boolean() })), ...errorResponses }
    }
  }, async request => {
    if (request.principal.userId === null) throw Unauthorized()
    return typesIn(request, await requireContext(content, request))
  })
  // Expanded on every page Volto shows, also to anonymous visitors (who may add nothing).
  fastify.components.add('types', async (request, located) => typesIn(request, located))

  fastify.get('/@types/:name', {
    schema: { summary: "A type's JSON Schema (the one that validates writes)", tags: ['types'], params: Type.Object({ name: Type.String() }), response: { ...errorResponses } }
  }, async (request, reply) => {
    const { name } = request.params as { name: string }
    const type = types.get(name)
    // The site root's too (`Plone Site`), though nobody adds one: Volto's edit form of the home page reads it for its blocks.
    if (type === undefined) throw NotFound(request.absoluteUrl(request.url), `Type '${name}' could not be found.`)
    return reply.type('application/json+schema').send(await typeSchema(type, request.baseUrl, vocabularies))
  })
}, { name: 'types', dependencies: ['components', 'content', 'auth', 'http'] })
