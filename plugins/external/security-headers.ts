import helmet from 'helmet'
import fp from 'fastify-plugin'

/**
 * Helmet's headers, on every answer (issue 11): JSON, errors, 404s, image
 * downloads and `@openapi`. It lives among the external plugins because they
 * are registered before the service's own: helmet's onRequest hook then runs
 * before the auth hook, whose 400 (expired token) and 401 (invalid token)
 * would otherwise skip it.
 *
 * Kept, because they protect what this API serves:
 * - `X-Content-Type-Options: nosniff`: a JSON body or an uploaded image is
 *   never run as HTML or script because a browser guessed its type;
 * - `Content-Security-Policy: default-src 'none'; frame-ancestors 'none'`:
 *   an answer opened as a document loads nothing and runs nothing, and no
 *   page may frame it; `X-Frame-Options: DENY` says the same to old browsers;
 * - `Cross-Origin-Resource-Policy: cross-origin`: Volto may run on another
 *   origin and show a talk's image with `<img>` (a no-cors request, which
 *   helmet's default `same-origin` blocks). It gives nothing away: browsers
 *   send no credentials with such a request (this API authenticates Bearer
 *   tokens only; its login device cookie authorizes nothing), so what they
 *   load is what anyone may load.
 *
 * Left out, because they are about HTML documents or belong elsewhere:
 * Cross-Origin-Opener-Policy and Origin-Agent-Cluster (the browsing context
 * of a page, and this API serves none), Cross-Origin-Embedder-Policy (what a
 * page may embed: it would be Volto's page to set), Referrer-Policy and
 * X-DNS-Prefetch-Control (requests a document makes; a JSON answer makes
 * none), X-Download-Options, X-Permitted-Cross-Domain-Policies and
 * X-XSS-Protection (Internet Explorer, Flash and Acrobat, and a filter no
 * browser has any more), and Strict-Transport-Security: the service speaks
 * plain HTTP behind the TLS terminator, whose domain-wide policy it is.
 *
 * Helmet itself, not @fastify/helmet: the plugin builds helmet's middleware
 * anew on every request (its options parsed, the CSP directives joined) and
 * adds a second hook for per-route options and CSP nonces this API has no
 * use for: 2 % of a read's CPU (docs/performance-history.md). The headers never vary,
 * so the middleware is built once and only sets them.
 */
export default fp(async fastify => {
  const setHeaders = helmet({
    contentSecurityPolicy: { useDefaults: false, directives: { defaultSrc: ["'none'"], frameAncestors: ["'none'"] } },
    xContentTypeOptions: true,
    xFrameOptions: { action: 'deny' },
    crossOriginResourcePolicy: { policy: 'cross-origin' },
    crossOriginOpenerPolicy: false,
    crossOriginEmbedderPolicy: false,
    originAgentCluster: false,
    referrerPolicy: false,
    strictTransportSecurity: false,
    xDnsPrefetchControl: false,
    xDownloadOptions: false,
    xPermittedCrossDomainPolicies: false,
    xXssProtection: false
  })
  fastify.addHook('onRequest', (request, reply, done) => { setHeaders(request.raw, reply.raw, err => { done(err as Error | undefined) }) })
}, { name: 'security-headers' })
