import fp from 'fastify-plugin'
import Type from 'typebox'
import { requireManager } from '../support/access.js'
import { NotFound } from '../../core/errors.js'
import { SolrSettingsSchema } from '../../core/solr/settings.js'
import { urlOf } from '../../core/content/urls.js'

const PANEL = 'solr-controlpanel'
const errorResponses = Object.fromEntries([400, 401, 403, 404].map(s => [s, { $ref: 'Error#' }]))

/**
 * `@controlpanels` (Manager): the search-server settings. Declarative values
 * (environment, SOLR_CONFIG_FILE) win and are reported as locked.
 */
/** Every control-panel route's answer to a caller without the Manager role. */
const MANAGER_ONLY = 'The control panels need the Manager role.'

export default fp(async fastify => {
  const settings = fastify.solrSettings

  const panelUrl = (baseUrl: string): string => urlOf(baseUrl, `/@controlpanels/${PANEL}`)

  fastify.get('/@controlpanels', {
    schema: { summary: 'List control panels (Manager)', tags: ['settings'], security: [{ bearer: [] }], response: { 200: Type.Array(Type.Object({ '@id': Type.String(), group: Type.String(), title: Type.String() })), ...errorResponses } }
  }, async request => {
    requireManager(request, MANAGER_ONLY)
    return [{ '@id': panelUrl(request.baseUrl), group: 'Add-on Configuration', title: 'Solr settings' }]
  })

  fastify.get('/@controlpanels/:name', {
    schema: { summary: 'Read the Solr settings (Manager); locked = set declaratively', tags: ['settings'], security: [{ bearer: [] }], params: Type.Object({ name: Type.String() }), response: { ...errorResponses } }
  }, async request => {
    requireManager(request, MANAGER_ONLY)
    const { name } = request.params as { name: string }
    if (name !== PANEL) throw NotFound(request.absoluteUrl(request.url), `No control panel '${name}'.`)
    const locked = new Set(settings.lockedNames())
    const data: Record<string, unknown> = { ...settings.current }
    data.password = data.password === '' ? '' : '********' // never echoed back
    const properties = Object.fromEntries(Object.entries(SolrSettingsSchema.properties).map(([key, schema]) =>
      [key, { ...schema, ...(locked.has(key) ? { locked: true, readOnly: true } : {}) }]))
    return {
      '@id': panelUrl(request.baseUrl),
      group: 'Add-on Configuration',
      title: 'Solr settings',
      data,
      locked: Object.fromEntries(Object.keys(SolrSettingsSchema.properties).map(k => [k, locked.has(k)])),
      schema: { type: 'object', properties, fieldsets: [{ id: 'default', title: 'Default', fields: Object.keys(properties) }] }
    }
  })

  fastify.patch('/@controlpanels/:name', {
    schema: { summary: 'Change Solr settings (Manager); declarative ones are refused', tags: ['settings'], security: [{ bearer: [] }], params: Type.Object({ name: Type.String() }), response: { 204: Type.Null(), ...errorResponses } }
  }, async (request, reply) => {
    requireManager(request, MANAGER_ONLY)
    const { name } = request.params as { name: string }
    if (name !== PANEL) throw NotFound(request.absoluteUrl(request.url), `No control panel '${name}'.`)
    await settings.update(request.body)
    return reply.code(204).send()
  })
}, { name: 'controlpanels', dependencies: ['solr-settings', 'auth', 'http'] })
