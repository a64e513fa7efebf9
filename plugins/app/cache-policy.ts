import type { FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'

/**
 * What a cache may keep (issue 11). Only what anyone gets by asking
 * anonymously, with a GET or HEAD: any other answer — to an authenticated
 * request, to a request that carried credentials (even refused ones), to a
 * write or to `@login`, whose answer is a credential — is
 * `Cache-Control: private, no-store`, whatever its handler said.
 */
function storable (request: FastifyRequest): boolean {
  // `principal` is null when the request failed before http's onRequest hook (a malformed URL): nobody was recognised.
  return (request.method === 'GET' || request.method === 'HEAD') &&
    request.headers.authorization === undefined && (request.principal?.userId ?? null) === null
}

/** Adds a header name to Vary, keeping what is there. */
function varyOn (reply: FastifyReply, name: string): void {
  const current = String(reply.getHeader('vary') ?? '')
  const names = current.split(',').map(n => n.trim()).filter(n => n !== '')
  if (names.some(n => n === '*' || n.toLowerCase() === name.toLowerCase())) return
  void reply.header('vary', [...names, name].join(', '))
}

/**
 * Every answer varies with `Authorization`: the auth hook judges the token of
 * every request (an expired one fails any request), and what a request may see
 * depends on who sends it. So a shared cache that kept an anonymous answer
 * does not serve it to a logged-in user, nor the other way round.
 */
export default fp(async fastify => {
  // onSend runs for every answer, errors and 404s included, even when an onRequest hook failed.
  fastify.addHook('onSend', async (request, reply, payload) => {
    varyOn(reply, 'Authorization')
    if (!storable(request)) void reply.header('cache-control', 'private, no-store')
    return payload
  })
}, { name: 'cache-policy', dependencies: ['http', 'auth'] })
