import AutoLoad from '@fastify/autoload'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { join } from 'node:path'
import type { Config } from '../core/config/config.js'
import { installErrorHandling } from '../plugins/support/error-handler.js'
import { codeRoot, contentTypesDir } from '../core/config/paths.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** The configuration, read once from the environment. */
    config: Config
    /** Folders holding content-type folders. */
    contentTypeDirs: string[]
  }
}

export interface AppOptions {
  /** Folders holding content-type folders; defaults to the project's `content-types/`. */
  contentTypeDirs?: string[]
}

/**
 * The root plugin: configuration, error handling, then the external plugins
 * (database, OpenAPI) and the service's own plugins, in dependency order.
 */
async function app (fastify: FastifyInstance, opts: AppOptions & { config: Config }): Promise<void> {
  fastify.decorate('config', opts.config)
  fastify.decorate('contentTypeDirs', opts.contentTypeDirs ?? [contentTypesDir])
  installErrorHandling(fastify)
  // Under a TypeScript loader (tests) autoload must be told to load .ts files.
  if (import.meta.url.endsWith('.ts')) process.env.FASTIFY_AUTOLOAD_TYPESCRIPT = '1'
  await fastify.register(AutoLoad, { dir: join(codeRoot, 'plugins', 'external'), encapsulate: false })
  await fastify.register(AutoLoad, { dir: join(codeRoot, 'plugins', 'app'), encapsulate: false })
  await fastify.register(AutoLoad, { dir: join(codeRoot, 'plugins', 'routes'), encapsulate: false })
}

// Not encapsulated: the server (and the tests) see what the plugins decorate.
export default fp(app, { name: 'app' })
