import fp from 'fastify-plugin'
import { ensureSite } from '../../core/content/site.js'
import { randomPassword } from '../../core/security/passwords.js'
import { ADMIN_USER } from '../../core/security/users.js'

/**
 * First start of the web service: the site root, the folders the content
 * types declare, and the Manager `admin` — with ADMIN_PASSWORD, or a random
 * password logged once. The index worker and the CLI never do this.
 *
 * The admin's password hash is slow by design (scrypt, ~50 ms of a thread of
 * libuv's pool): it runs while the site is written and the routes load and
 * compile, and the server waits for it in `onReady`, before it listens, so
 * that the admin can log in as soon as the service answers.
 */
export default fp(async fastify => {
  const { ADMIN_PASSWORD } = fastify.config
  const password = ADMIN_PASSWORD !== '' ? ADMIN_PASSWORD : randomPassword()
  const adminCreated = fastify.users.ensureAdmin(password)
  // Awaited in onReady; marked handled now so that a failure before then fails the start there
  // instead of ending the process as an unhandled rejection.
  adminCreated.catch(() => {})
  await ensureSite(fastify.content, fastify.contentTypes)
  fastify.addHook('onReady', async () => {
    if (await adminCreated && ADMIN_PASSWORD === '') {
      fastify.log.warn(`Created user '${ADMIN_USER}' with the password ${password} (set ADMIN_PASSWORD to choose it). It is not shown again.`)
    }
  })
}, { name: 'site', dependencies: ['content', 'auth'] })
