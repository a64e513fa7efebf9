import type { FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import Type from 'typebox'
import { aliasesOfCsv } from '../../core/content/alias-csv.js'
import { aliasPath, Redirects, type Alias, type NewAlias } from '../../core/content/redirects.js'
import type { Located } from '../../core/content/rows.js'
import { urlOf } from '../../core/content/urls.js'
import { BadRequest, UnsupportedMediaType } from '../../core/errors.js'
import { batchingLinks, batchOf } from '../../core/query/paging.js'
import { parseBoolean, parseDate, parseZopeQuery } from '../../core/query/zope.js'
import { can } from '../../core/security/permissions.js'
import { Permission } from '../../core/security/roles.js'
import { callerOf, requireContext, requireManager } from '../support/access.js'
import { acceptFormUploads, takeUploadedFile } from '../support/form-uploads.js'
import { addressOf, queryOf } from '../support/url.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** Old paths of moved objects and aliases added by hand (plone.app.redirector). */
    redirects: Redirects
  }
}

/** Aliases one request may add or remove. */
export const MAX_ALIASES = 1000
/** Bytes of an uploaded CSV file of aliases at most (100,000 lines of two paths of about 50 characters). */
const MAX_CSV_BYTES = 10 * 1024 * 1024
/** The types of a CSV file (Plone's upload takes these two). */
const CSV_TYPES = new Set(['text/csv', 'application/csv'])
/** Lines of the CSV download at most (all of a site's aliases, read in one statement). */
const MAX_CSV_LINES = 100_000
/**
 * How a redirect answers (plone.rest): 302 for GET and HEAD; 307 for the other methods, which
 * tells the client to send the same request, body included, to the new address — where it is
 * checked as any request is (the 404 here wrote nothing).
 */
const redirectStatus = (method: string): number => method === 'GET' || method === 'HEAD' ? 302 : 307

const Item = Type.Object({
  path: Type.String({ maxLength: 2000 }),
  'redirect-to': Type.Optional(Type.String({ maxLength: 2000 })),
  datetime: Type.Optional(Type.String({ maxLength: 64 }))
}, { additionalProperties: false })
const Items = Type.Object({ items: Type.Array(Item, { maxItems: MAX_ALIASES }) }, { additionalProperties: false })
const errorResponses = Object.fromEntries([400, 401, 403, 404].map(s => [s, { $ref: 'Error#' }]))

/** A date as plone.restapi lists an alias's: ISO 8601 to the second, no offset (UTC). */
const listedDate = (date: Date): string => date.toISOString().slice(0, 19)
/** The same in the redirects control panel's CSV: `2022/05/05 00:00:00 GMT+0`. */
const csvDate = (date: Date): string => `${listedDate(date).replace(/-/g, '/').replace('T', ' ')} GMT+0`
/** A CSV field, quoted when it must be (RFC 4180); a leading formula character is neutralised for spreadsheets. */
const csvField = (value: string): string => {
  const safe = /^[=+\-@]/.test(value) ? `'${value}` : value
  return /[",\r\n]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe
}

/** Whether the client asked for CSV (the site-wide listing's download). */
const wantsCsv = (request: FastifyRequest): boolean => /(^|,)\s*(text|application)\/csv\b/i.test(String(request.headers.accept ?? ''))

/**
 * `@aliases` (plone.restapi over plone.app.redirector): an object's aliases
 * (GET with View; POST and DELETE `{items: [{path}]}` with Modify portal
 * content), the site's at the root (Manage portal: listed with `query`,
 * `manual`, `start`, `end` and batching, as JSON or CSV; added with
 * `redirect-to`). And the redirects themselves: a GET or HEAD of a path that
 * names nothing but was an object's (or an alias of it) answers 302 to where
 * the object is now, with the rest of the path and the query kept — only to
 * a caller who may view the object: to anyone else it stays a 404, so that
 * a redirect never tells where a private object went.
 */
export default fp(async fastify => {
  const { content } = fastify
  const redirects = new Redirects(fastify.db)
  fastify.decorate('redirects', redirects)

  const listed = (alias: Alias): Record<string, unknown> => ({ datetime: listedDate(alias.created), manual: alias.manual, path: alias.path, 'redirect-to': alias.target })

  async function objectAliases (request: FastifyRequest, located: Located): Promise<Record<string, unknown>> {
    const items = (await redirects.of(located.obj.uid)).map(listed)
    return { '@id': `${urlOf(request.baseUrl, located.obj.path)}/@aliases`, items, items_total: items.length }
  }

  async function siteAliases (request: FastifyRequest, reply: FastifyReply): Promise<unknown> {
    requireManager(request, 'Listing the site\'s aliases needs the permission to manage the portal.')
    const query = parseZopeQuery(queryOf(request.url))
    const batch = batchOf(query)
    const csv = wantsCsv(request)
    // An empty filter is none, as plone.restapi reads them (Volto's Aliases panel sends `start=&end=&manual=&q=`).
    const given = (key: string): unknown => query[key] === '' ? undefined : query[key]
    const q = given('query') ?? given('q')
    const { items, total } = await redirects.list({
      q: q === undefined ? undefined : String(q),
      manual: given('manual') === undefined ? undefined : parseBoolean(query.manual, 'manual'),
      start: given('start') === undefined ? undefined : parseDate(query.start, 'start'),
      end: given('end') === undefined ? undefined : parseDate(query.end, 'end'),
      // The CSV download is the whole list (bounded), not a page of it.
      offset: csv ? 0 : batch.start,
      limit: csv ? MAX_CSV_LINES : batch.size
    })
    if (csv) {
      const lines = ['old path,new path,datetime,manual', ...items.map(a => [a.path, a.target, csvDate(a.created), a.manual ? 'True' : 'False'].map(csvField).join(','))]
      return reply.type('text/csv; charset=utf-8').send(lines.join('\n') + '\n')
    }
    const url = callerOf(request).url
    const batching = batchingLinks(url, total, batch)
    return { '@id': `${request.baseUrl}/@aliases`, items: items.map(listed), items_total: total, ...(batching !== undefined ? { batching } : {}) }
  }

  fastify.get('/@aliases', {
    config: { binary: true },
    schema: { summary: 'The aliases of an object; at the site root every alias of the site, as JSON or CSV (Accept: text/csv)', tags: ['aliases'], security: [{ bearer: [] }], response: { ...errorResponses } }
  }, async (request, reply) => {
    const located = await requireContext(content, request)
    if (located.obj.path === '/') return await siteAliases(request, reply)
    return await objectAliases(request, located)
  })
  fastify.components.add('aliases', objectAliases)

  /** The aliases of the body, checked: paths, and at the root the objects they name (`redirect-to`). */
  async function aliasesOf (request: FastifyRequest, located: Located): Promise<NewAlias[]> {
    const { items } = request.body as { items: Array<{ path: string, 'redirect-to'?: string, datetime?: string }> }
    const aliases: NewAlias[] = []
    for (const item of items) {
      const path = aliasPath(item.path)
      let uid = located.obj.uid
      if (located.obj.path === '/') {
        const target = (await content.locate(aliasPath(item['redirect-to']))).found
        if (target === null || target.obj.path === '/') throw BadRequest(`'${String(item['redirect-to']).slice(0, 100)}' names no object of the site.`)
        uid = target.obj.uid
      }
      aliases.push({ path, uid, created: item.datetime === undefined ? undefined : parseDate(item.datetime, 'datetime') })
    }
    return aliases
  }

  /** The text of the CSV file of a form upload, bounded; 415 for another kind of file. */
  const uploadedCsv = async (request: FastifyRequest): Promise<string> => await takeUploadedFile(request, async part => {
    if (!CSV_TYPES.has(part.mimetype.split(';')[0].trim().toLowerCase())) {
      part.file.resume()
      throw UnsupportedMediaType('Uploaded file is not a valid CSV file (text/csv).')
    }
    return new TextDecoder('utf-8', { fatal: false }).decode(await part.toBuffer())
  })

  // A scope of its own: only this route takes a form upload (a CSV file of aliases, as Volto's control panel sends it).
  await fastify.register(async scoped => {
    await acceptFormUploads(scoped, MAX_CSV_BYTES)
    scoped.post('/@aliases', {
      schema: {
        summary: 'Add aliases of an object; at the site root, of any object (`redirect-to`), also from a CSV file (multipart, part `file`)',
        tags: ['aliases'],
        security: [{ bearer: [] }],
        body: { content: { 'application/json': { schema: Items }, 'multipart/form-data': { schema: {} } } },
        response: { 204: Type.Null(), ...errorResponses }
      }
    }, async (request, reply) => {
      const located = await requireContext(content, request, Permission.Modify)
      const site = located.obj.path === '/'
      if (site) requireManager(request, 'Adding aliases of the site needs the permission to manage the portal.')
      if (request.isMultipart()) {
        if (!site) throw BadRequest('A CSV file of aliases is uploaded at the site root.')
        await redirects.add(await aliasesOfCsv(fastify.db, await uploadedCsv(request)))
      } else {
        if (request.body === undefined) throw BadRequest('The body lists the aliases: {"items": [...]}.')
        await redirects.add(await aliasesOf(request, located))
      }
      return reply.code(204).send()
    })
  })

  fastify.delete('/@aliases', {
    schema: { summary: 'Remove aliases of an object; at the site root, any alias', tags: ['aliases'], security: [{ bearer: [] }], body: Items, response: { 204: Type.Null(), ...errorResponses } }
  }, async (request, reply) => {
    const located = await requireContext(content, request, Permission.Modify)
    const site = located.obj.path === '/'
    if (site) requireManager(request, 'Removing aliases of the site needs the permission to manage the portal.')
    const paths = (request.body as { items: Array<{ path: string }> }).items.map(item => aliasPath(item.path))
    await redirects.remove(paths, site ? undefined : located.obj.uid)
    return reply.code(204).send()
  })

  /** The address a redirect sends a request to: the object's URL, the rest of the path below the alias, the service and the query. */
  function redirectUrl (request: FastifyRequest, target: string, rest: string): string {
    const address = addressOf(request.raw)
    // `++api++` where the client wrote it (a virtual host's proxy that adds it in the physical part is not written to).
    const api = address.viaApiSegment && /\/\+\+api\+\+(\/|\?|$)/.test(address.originalUrl) ? '/++api++' : ''
    const queryAt = request.url.indexOf('?')
    const tail = address.service !== null ? request.url : queryAt < 0 ? '' : request.url.slice(queryAt)
    return urlOf(request.baseUrl + api, target + rest) + tail
  }

  fastify.addHook('onSend', async (request, reply, payload) => {
    // OPTIONS is a browser's CORS preflight, answered for the address asked.
    if (reply.statusCode !== 404 || request.method === 'OPTIONS') return payload
    const address = addressOf(request.raw)
    if (address.outsideSite || address.contextPath === '/') return payload
    const hit = await redirects.find(address.contextPath)
    if (hit === null) return payload
    const located = (await content.locateMany([hit.uid])).get(hit.uid)
    if (located === undefined || !can(request.principal, Permission.View, located)) return payload
    void reply.code(redirectStatus(request.method)).header('location', redirectUrl(request, hit.target, hit.rest)).header('content-length', '0')
    return ''
  })
}, { name: 'aliases', dependencies: ['content', 'auth', 'http', 'components'] })
