import fp from 'fastify-plugin'
import { actionsFor } from '../../core/security/actions.js'

/** `@actions` (plone.restapi): what the caller may do here, by category; Volto's toolbar is built from it. */
export default fp(async fastify => {
  fastify.components.serve('actions', { summary: 'Actions the caller may take here, by category', tags: ['navigation'] },
    async (request, located) => actionsFor(request.principal, located))
}, { name: 'actions', dependencies: ['components', 'auth', 'http'] })
