import type { FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import Type from 'typebox'
import { lockInfo, MAX_LOCK_TIMEOUT } from '../../core/content/locks.js'
import type { Located } from '../../core/content/rows.js'
import { Forbidden } from '../../core/errors.js'
import { can } from '../../core/security/permissions.js'
import { Permission } from '../../core/security/roles.js'
import { requireContext } from '../support/access.js'

const errorResponses = Object.fromEntries([400, 401, 403, 404].map(s => [s, { $ref: 'Error#' }]))
const LockInfo = Type.Object({ locked: Type.Boolean(), stealable: Type.Boolean() }, { additionalProperties: true })

/**
 * `@lock` (plone.restapi, as Volto's edit form uses it): POST locks the
 * object for its editor (or refreshes their lock), PATCH refreshes, DELETE
 * unlocks (`{"force": true}` takes over someone else's stealable lock);
 * GET `@lock` and `@lockinfo` tell who holds it. Locking needs Modify
 * portal content; while locked, PATCH and DELETE of the object need the
 * lock's `Lock-Token` (plugins/routes/content.ts).
 */
export default fp(async fastify => {
  const { content, locks } = fastify
  const infoOf = async (request: FastifyRequest, located: Located): Promise<Record<string, unknown>> =>
    lockInfo(request.baseUrl, await locks.live(located.obj.uid), request.principal.userId, can(request.principal, Permission.Modify, located))
  const editor = async (request: FastifyRequest): Promise<{ located: Located, userId: string }> => {
    const located = await requireContext(content, request, Permission.Modify)
    // requireContext answered 401 to anonymous callers, who hold no Modify anywhere.
    return { located, userId: request.principal.userId! }
  }

  for (const url of ['/@lock', '/@lockinfo']) {
    fastify.get(url, {
      schema: { summary: 'Who holds the lock of the object, if anyone (on any content path)', tags: ['locking'], response: { 200: LockInfo, ...errorResponses } }
    }, async request => await infoOf(request, await requireContext(content, request)))
  }

  fastify.post('/@lock', {
    preValidation: async request => { request.body ??= {} },
    schema: {
      summary: 'Lock the object for editing (on any content path); another user\'s lock is answered as it is',
      tags: ['locking'],
      security: [{ bearer: [] }],
      body: Type.Object({
        stealable: Type.Optional(Type.Boolean()),
        timeout: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_LOCK_TIMEOUT }))
      }, { additionalProperties: false }),
      response: { 200: LockInfo, ...errorResponses }
    }
  }, async request => {
    const { located, userId } = await editor(request)
    await locks.lock(located.obj.uid, userId, request.body as { stealable?: boolean, timeout?: number })
    return await infoOf(request, located)
  })

  fastify.patch('/@lock', {
    schema: { summary: 'Refresh the caller\'s lock (on any content path)', tags: ['locking'], security: [{ bearer: [] }], response: { 200: LockInfo, ...errorResponses } }
  }, async request => {
    const { located, userId } = await editor(request)
    await locks.refresh(located.obj.uid, userId)
    return await infoOf(request, located)
  })

  fastify.delete('/@lock', {
    preValidation: async request => { request.body ??= {} },
    schema: {
      summary: 'Unlock (on any content path); {"force": true} takes over another user\'s stealable lock',
      tags: ['locking'],
      security: [{ bearer: [] }],
      body: Type.Object({ force: Type.Optional(Type.Boolean()) }, { additionalProperties: false }),
      response: { 200: LockInfo, ...errorResponses }
    }
  }, async request => {
    const { located, userId } = await editor(request)
    const { force } = request.body as { force?: boolean }
    const unlocked = await locks.unlock(located.obj.uid, userId, force === true)
    if (!unlocked && force === true) throw Forbidden('The lock is not stealable: only its holder can unlock it, or it ends with its timeout.')
    return await infoOf(request, located)
  })
}, { name: 'lock', dependencies: ['content', 'auth', 'http'] })
