import type { FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import Type, { type TSchema } from 'typebox'
import type { Located } from '../../core/content/rows.js'
import { urlOf } from '../../core/content/urls.js'
import { requireContext } from '../support/access.js'

/** A service's answer on a context, as its own GET and as an expanded `@components` entry. */
export type ComponentHandler = (request: FastifyRequest, located: Located) => Promise<unknown>

export interface ComponentOptions {
  summary: string
  tags: string[]
  /** Shown in `@components` only when expanded (plone.restapi lists translations only with multilingual). */
  onlyExpanded?: boolean
  /** The query parameters its own GET takes (validated, and in the OpenAPI document); the handler reads them as an expansion does. */
  querystring?: TSchema
}

export interface Components {
  /** Serves `GET <context>/@<name>` and lists it in every object's `@components`. */
  serve: (name: string, options: ComponentOptions, handler: ComponentHandler) => void
  /** Adds an already served service to `@components` (its route has its own schema). */
  add: (name: string, handler: ComponentHandler, options?: Pick<ComponentOptions, 'onlyExpanded'>) => void
  /** `@components` of an object: `{"@id": <url>/@<name>}` for each, the full answer for those expanded. */
  of: (request: FastifyRequest, located: Located, expand: Set<string>) => Promise<Record<string, unknown>>
}

declare module 'fastify' {
  interface FastifyInstance {
    /** plone.restapi's expandable components (`?expand=…`, `@components`). */
    components: Components
  }
}

/** The names in `expand=a,b` (also repeated parameters), trimmed. */
export function expandedNames (searchParams: URLSearchParams): Set<string> {
  return new Set(searchParams.getAll('expand').flatMap(v => v.split(',')).map(s => s.trim()).filter(Boolean))
}

/**
 * plone.restapi's expansion: every content object carries `@components`,
 * one entry a service (`@breadcrumbs`, `@actions` …); `?expand=` inlines
 * the answers Volto needs on every page, saving it a request each.
 */
export default fp(async fastify => {
  const registered = new Map<string, { handler: ComponentHandler, onlyExpanded: boolean }>()
  /** The registered components by name, sorted once (every GET of an object lists them). */
  let sorted: Array<[string, { handler: ComponentHandler, onlyExpanded: boolean }]> | null = null
  const add: Components['add'] = (name, handler, options = {}) => {
    if (registered.has(name)) throw new Error(`Component '${name}' is registered twice`)
    registered.set(name, { handler, onlyExpanded: options.onlyExpanded === true })
    sorted = null
  }
  fastify.decorate('components', {
    add,
    serve (name, options, handler) {
      add(name, handler, options)
      fastify.get(`/@${name}`, {
        schema: {
          summary: `${options.summary} (on any content path)`,
          tags: options.tags,
          ...options.querystring !== undefined ? { querystring: options.querystring } : {},
          response: { 200: Type.Object({}, { additionalProperties: true }) }
        }
      }, async request => await handler(request, await requireContext(fastify.content, request)))
    },
    async of (request, located, expand) {
      const url = urlOf(request.baseUrl, located.obj.path)
      const link = (name: string): { '@id': string } => ({ '@id': `${url}/@${name}` })
      sorted ??= [...registered].sort(([a], [b]) => a.localeCompare(b))
      const entries = sorted.filter(([name, { onlyExpanded }]) => expand.has(name) || !onlyExpanded)
      // Nothing expanded (most reads): links only, without a promise each.
      if (expand.size === 0) return Object.fromEntries(entries.map(([name]) => [name, link(name)]))
      return Object.fromEntries(await Promise.all(entries.map(async ([name, { handler }]) =>
        [name, expand.has(name) ? await handler(request, located) : link(name)])))
    }
  } satisfies Components)
}, { name: 'components', dependencies: ['content', 'http'] })
