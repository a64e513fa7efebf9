import fp from 'fastify-plugin'
import type { CacheFigures } from '../../core/kept.js'

declare module 'fastify' {
  interface FastifyInstance {
    /**
     * Every cache of this process, by the name the metrics give it (`cache` label): each plugin
     * that makes one adds it here, and the metrics read them at each scrape (plugins/app/metrics.ts).
     */
    caches: Map<string, () => CacheFigures>
  }
}

/** The caches' register, before any plugin that makes one. */
export default fp(async fastify => {
  fastify.decorate('caches', new Map<string, () => CacheFigures>())
}, { name: 'caches' })
