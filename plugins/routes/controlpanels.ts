import fp from 'fastify-plugin'
import { isDeepStrictEqual } from 'node:util'
import Type, { type TSchema } from 'typebox'
import Value from 'typebox/value'
import { requireManager } from '../support/access.js'
import { NotFound } from '../../core/errors.js'
import { SolrSettingsSchema } from '../../core/solr/settings.js'
import { urlOf } from '../../core/content/urls.js'

const PANEL = 'solr-controlpanel'
const TITLE = 'Solr settings'
const GROUP = 'Add-on Configuration'
/** What GET shows instead of a stored password; a form that sends it back changes nothing. */
const PASSWORD_MASK = '********'

/** The zope.schema factory a setting would have in Plone, from its JSON Schema type. */
function factoryOf (schema: TSchema & { type?: string }): string {
  switch (schema.type) {
    case 'boolean': return 'Yes/No'
    case 'integer': return 'Integer'
    case 'number': return 'Floating-point number'
    case 'array': return 'List'
    case 'object': return 'Dict'
    default: return 'Text line (String)'
  }
}

/** The value a form shows for an empty field of this type (null: a number field left empty). */
const emptyValueOf = (schema: TSchema & { type?: string }): unknown =>
  ({ string: '', array: [], boolean: false, object: {} } as Record<string, unknown>)[schema.type ?? ''] ?? null

/**
 * Settings a form must fill: those whose empty value is invalid (a host, a port …).
 * Volto refuses to save a form while a required field is empty, false or [].
 */
const REQUIRED = Object.entries(SolrSettingsSchema.properties)
  .filter(([, schema]) => !Value.Check(schema, emptyValueOf(schema))).map(([key]) => key)
const errorResponses = Object.fromEntries([400, 401, 403, 404].map(s => [s, { $ref: 'Error#' }]))

/**
 * `@controlpanels` (Manager): the search-server settings. Declarative values
 * (environment, SOLR_CONFIG_FILE) win and are reported as locked.
 */
/**
 * Plone's user and group settings, which Volto's users and groups panels read (`many_users`,
 * `many_groups`: whether to list everyone before a search): fixed here, both lists are bounded
 * and searched on the server. Read only, and not listed (Volto has panels of its own for them).
 */
const USER_GROUP_PANEL = 'usergroup'
const userGroupPanel = (baseUrl: string): Record<string, unknown> => ({
  '@id': urlOf(baseUrl, `/@controlpanels/${USER_GROUP_PANEL}`),
  group: 'Users',
  title: 'Users and Groups',
  data: { many_groups: false, many_users: false, email_as_login: false },
  schema: { type: 'object', properties: {}, required: [], fieldsets: [] }
})

/** Every control-panel route's answer to a caller without the Manager role. */
const MANAGER_ONLY = 'The control panels need the Manager role.'

export default fp(async fastify => {
  const settings = fastify.solrSettings

  /**
   * Volto's form sends every setting back, changed or not: the password mask
   * and the locked settings' own values are what GET gave, not changes.
   */
  const withoutEchoes = (body: unknown): unknown => {
    if (body === null || typeof body !== 'object' || Array.isArray(body)) return body
    const current = settings.current as Record<string, unknown>
    return Object.fromEntries(Object.entries(body).filter(([key, value]) =>
      !(key === 'password' && value === PASSWORD_MASK) && !(settings.isLocked(key) && isDeepStrictEqual(value, current[key]))))
  }

  const panelUrl = (baseUrl: string): string => urlOf(baseUrl, `/@controlpanels/${PANEL}`)

  fastify.get('/@controlpanels', {
    schema: { summary: 'List control panels (Manager)', tags: ['settings'], security: [{ bearer: [] }], response: { 200: Type.Array(Type.Object({ '@id': Type.String(), group: Type.String(), title: Type.String(), searchable_text: Type.Array(Type.String()) })), ...errorResponses } }
  }, async request => {
    requireManager(request, MANAGER_ONLY)
    const fieldTitles = Object.values(SolrSettingsSchema.properties).map(schema => String((schema as { title?: string }).title ?? ''))
    return [{ '@id': panelUrl(request.baseUrl), group: GROUP, title: TITLE, searchable_text: [TITLE, GROUP, ...fieldTitles] }]
  })

  fastify.get('/@controlpanels/:name', {
    schema: { summary: 'Read the Solr settings (Manager); locked = set declaratively', tags: ['settings'], security: [{ bearer: [] }], params: Type.Object({ name: Type.String() }), response: { ...errorResponses } }
  }, async request => {
    requireManager(request, MANAGER_ONLY)
    const { name } = request.params as { name: string }
    if (name === USER_GROUP_PANEL) return userGroupPanel(request.baseUrl)
    if (name !== PANEL) throw NotFound(request.absoluteUrl(request.url), `No control panel '${name}'.`)
    const locked = new Set(settings.lockedNames())
    const data: Record<string, unknown> = { ...settings.current }
    data.password = data.password === '' ? '' : PASSWORD_MASK // never echoed back
    const properties = Object.fromEntries(Object.entries(SolrSettingsSchema.properties).map(([key, schema]) =>
      [key, { description: '', ...schema, factory: factoryOf(schema), ...(locked.has(key) ? { locked: true, readOnly: true } : {}) }]))
    return {
      '@id': panelUrl(request.baseUrl),
      group: GROUP,
      title: TITLE,
      data,
      locked: Object.fromEntries(Object.keys(SolrSettingsSchema.properties).map(k => [k, locked.has(k)])),
      schema: { type: 'object', properties, required: REQUIRED, fieldsets: [{ id: 'default', title: 'Default', behavior: 'plone', fields: Object.keys(properties) }] }
    }
  })

  fastify.patch('/@controlpanels/:name', {
    schema: { summary: 'Change Solr settings (Manager); declarative ones are refused', tags: ['settings'], security: [{ bearer: [] }], params: Type.Object({ name: Type.String() }), response: { 204: Type.Null(), ...errorResponses } }
  }, async (request, reply) => {
    requireManager(request, MANAGER_ONLY)
    const { name } = request.params as { name: string }
    if (name !== PANEL) throw NotFound(request.absoluteUrl(request.url), `No control panel '${name}'.`)
    await settings.update(withoutEchoes(request.body))
    return reply.code(204).send()
  })
}, { name: 'controlpanels', dependencies: ['solr-settings', 'auth', 'http'] })
