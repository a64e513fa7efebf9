import fp from 'fastify-plugin'
import { ensureSite } from '../../core/content/site.js'
import { randomPassword } from '../../core/security/passwords.js'
import { ADMIN_USER } from '../../core/security/users.js'

/**
 * First start of the web service: the site root, the folders the content
 * types declare, and the Manager `admin` — with ADMIN_PASSWORD, or a random
 * password logged once. The index worker and the CLI never do this.
 */
export default fp(async fastify => {
  await ensureSite(fastify.content, fastify.contentTypes)
  const { ADMIN_PASSWORD } = fastify.config
  const password = ADMIN_PASSWORD !== '' ? ADMIN_PASSWORD : randomPassword()
  if (await fastify.users.ensureAdmin(password) && ADMIN_PASSWORD === '') {
    fastify.log.warn(`Created user '${ADMIN_USER}' with the password ${password} (set ADMIN_PASSWORD to choose it). It is not shown again.`)
  }
}, { name: 'site', dependencies: ['content', 'auth'] })
