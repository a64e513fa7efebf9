import cors from '@fastify/cors'
import fp from 'fastify-plugin'

/** What Volto and `@plone/client` send beyond the simple headers (Lock-Token: the edit form's lock). */
const REQUEST_HEADERS = ['Accept', 'Authorization', 'Content-Type', 'If-Match', 'Lock-Token', 'Prefer', 'X-Requested-With',
  // resumable uploads (plugins/routes/tus.ts)
  'Tus-Resumable', 'Upload-Length', 'Upload-Metadata', 'Upload-Offset']
/** What a browser client may read of an answer besides the simple headers. */
const EXPOSED_HEADERS = ['Location', 'ETag', 'X-Request-Id', 'X-Search-Engine', 'X-Search-Fallback', 'Retry-After',
  'Tus-Resumable', 'Tus-Version', 'Tus-Max-Size', 'Tus-Extension', 'Upload-Offset', 'Upload-Length', 'Upload-Expires']

/**
 * CORS for a browser client on another origin (Volto calling the API
 * directly), for the origins in `CORS_ALLOW_ORIGIN` only; empty = off, and
 * `OPTIONS` is then 404 like any unknown route. Preflights are answered in
 * the onRequest hook, before authentication. Credentials are allowed so that
 * a client may send its Authorization header; the one cookie the API sets,
 * `@login`'s device cookie, authorizes nothing (core/security/device-cookies.ts),
 * so a page on an allowed origin can only act with a token it holds itself.
 */
export default fp(async fastify => {
  const setting = fastify.config.CORS_ALLOW_ORIGIN.split(',').map(o => o.trim().replace(/\/+$/, '')).filter(Boolean)
  if (setting.length === 0) return
  await fastify.register(cors, {
    origin: setting.includes('*') ? true : setting,
    credentials: true,
    methods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'],
    allowedHeaders: REQUEST_HEADERS,
    exposedHeaders: EXPOSED_HEADERS,
    maxAge: 600,
    // An OPTIONS without the preflight headers gets the same 204, not a plain-text 400.
    strictPreflight: false
  })
}, { name: 'cors' })
