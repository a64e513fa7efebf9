import { Readable } from 'node:stream'
import { afterWriting } from '../../core/db/faults.js'
import type { FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import Type from 'typebox'
import { callerOf, denied, requireContext } from '../support/access.js'
import { expandedNames } from '../app/components.js'
import { batchOf } from '../../core/query/paging.js'
import type { Located } from '../../core/content/rows.js'
import type { Queryable } from '../../core/db/db.js'
import { BadRequest, Conflict, Forbidden, MethodNotAllowed, NotFound, quote } from '../../core/errors.js'
import { Permission } from '../../core/security/roles.js'
import { checkWrite, type CheckedWrite, type WriteContext } from '../../core/content/validation.js'
import { checkWritePermissions, lockToken, writeContext as writeContextOf } from '../support/writes.js'
import { byteRange } from '../support/byte-range.js'
import { renameIfAsked } from '../support/rename.js'
import { changesFields, prepareOrdering, splitOrdering } from '../support/ordering.js'
import { disposition, SHOWN_TYPES, type FileMeta } from '../support/downloads.js'
import { addressOf, queryOf } from '../support/url.js'
import { lockInfo } from '../../core/content/locks.js'
import { fileOf, fileStream } from '../../core/content/blobs.js'
import { KeptScales } from '../../core/content/image/kept-scales.js'
import { askedScale, imageVersion, type ImageMeta } from '../../core/content/image/scales.js'
import { linkTargets } from '../../core/content/links.js'
import { urlOf } from '../../core/content/urls.js'
import { changeNoteOf, INITIAL_VERSION_NOTE, versionable } from '../../core/content/versions.js'
import { parseZopeQuery } from '../../core/query/zope.js'
import { can } from '../../core/security/permissions.js'

const etagOf = (located: Located): string => `"${located.obj.uid.slice(0, 8)}-${located.obj.modified.getTime()}"`

const errorResponses = Object.fromEntries([400, 401, 403, 404, 405, 409, 413, 415].map(s => [s, { $ref: 'Error#' }]))
const ContentBody = Type.Object({ '@type': Type.Optional(Type.String()) }, {
  additionalProperties: true,
  description: 'Fields of the content type (see GET @types/<type> for its JSON Schema)'
})
const ContentObject = Type.Object({ '@id': Type.String(), '@type': Type.String(), UID: Type.String() }, { additionalProperties: true })
const docs = (summary: string, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  summary: `${summary} (on any content path)`, tags: ['content'], security: [{ bearer: [] }], ...extra
})

/**
 * Content CRUD on any path (docs/api.md, "Endpoints"): GET an object or folder, POST to a
 * folder, PATCH and DELETE an object, and `@@download/<field>` for images.
 */
export default fp(async fastify => {
  const { content, serializer, contentTypes: types } = fastify
  const writeContext = (request: FastifyRequest, stored: Record<string, unknown>, mode: 'create' | 'update', q?: Queryable): WriteContext => writeContextOf(fastify, request.baseUrl, stored, mode, q)

  /** The object as every answer gives it: its `@components` (expanded as `?expand=` asks), then its fields. */
  async function representation (request: FastifyRequest, located: Located, searchParams = queryOf(request.url)): Promise<Record<string, unknown>> {
    const lock = located.lock !== undefined ? located.lock : await fastify.locks.live(located.obj.uid)
    const links = await linkTargets(request, [located], async uids => await content.locateMany(uids))
    const body = serializer.object(request, located, await fastify.components.of(request, located, expandedNames(searchParams)), links)
    body.lock = lockInfo(request.baseUrl, lock, request.principal.userId, can(request.principal, Permission.Modify, located))
    return body
  }

  /**
   * What a GET of an object that stores a query lists (a Collection, as
   * plone.restapi serializes it): the reader's results, batched by the GET's
   * `b_start` and `b_size`; none while the query is empty.
   */
  async function storedQueryListing (request: FastifyRequest, reply: FastifyReply, located: Located, searchParams: URLSearchParams): Promise<Record<string, unknown>> {
    const stored = located.type.declaration.storedQuery!(located.obj.data)
    if (!Array.isArray(stored.query) || stored.query.length === 0) return { items: [], items_total: 0 }
    const asked = parseZopeQuery(searchParams)
    const { items, items_total: total, batching } = await fastify.queryListing(request, reply, located,
      { ...stored, b_start: asked.b_start, b_size: asked.b_size, metadata_fields: asked.metadata_fields, fullobjects: asked.fullobjects !== undefined }, '')
    return { items, items_total: total, ...(batching !== undefined ? { batching } : {}) }
  }

  /**
   * The object as plone.restapi's serializer gives it (a GET, and the answer to a write that
   * returns the object): its representation, with what it lists — a folder its items, a
   * collection its results (Volto's listing view reads `items` of a collection it just saved).
   */
  async function serialized (request: FastifyRequest, reply: FastifyReply, located: Located): Promise<Record<string, unknown>> {
    const searchParams = queryOf(request.url)
    const body = await representation(request, located, searchParams)
    if (located.type.folderish) {
      const query = parseZopeQuery(searchParams)
      const listing = await fastify.listings.fromCatalog(callerOf(request), {
        criteria: { path: { query: located.obj.path, depth: 1 } },
        sortOn: ['getObjPositionInParent'],
        descending: false,
        batch: batchOf(query),
        metadataFields: serializer.metadataFields(query.metadata_fields),
        fullobjects: query.fullobjects !== undefined
      })
      Object.assign(body, listing)
    } else if (located.type.declaration.storedQuery !== undefined) {
      Object.assign(body, await storedQueryListing(request, reply, located, searchParams))
    }
    return body
  }

  async function getContent (request: FastifyRequest, reply: FastifyReply): Promise<unknown> {
    const located = await requireContext(content, request)
    const body = await serialized(request, reply, located)
    void reply.header('etag', etagOf(located))
    return body
  }

  async function postContent (request: FastifyRequest, reply: FastifyReply): Promise<unknown> {
    const parent = await requireContext(content, request)
    // As in Plone: no POST service on items, then the add permission, then the body.
    if (!parent.type.folderish) throw MethodNotAllowed(`${parent.obj.path} is not a folder; content can only be added to folders.`)
    if (!can(request.principal, Permission.Add, parent)) throw denied(request, `You may not add content to ${parent.obj.path}.`)
    const body = request.body as Record<string, unknown> | null
    if (body === null || typeof body !== 'object' || Array.isArray(body)) throw BadRequest('The request body must be a JSON object.')
    const typeName = body['@type']
    if (typeof typeName !== 'string' || typeName === '') throw BadRequest("Property '@type' is required.")
    const type = types.get(typeName)
    if (type === undefined || type === types.siteRoot) throw Forbidden(`Invalid '@type' parameter. No content type with the name '${quote(typeName)}' found.`)
    if (!parent.type.allows(type)) throw Forbidden(`Disallowed subobject type: ${quote(typeName)}.`)
    const write = await checkWrite(type, body, writeContext(request, {}, 'create'))
    checkWritePermissions(request, { lineage: parent.lineage, type }, write, {})
    const created = await content.create(parent, type, write, request.principal, versionable(type) ? changeNoteOf(body, INITIAL_VERSION_NOTE) : undefined)
    const url = urlOf(request.baseUrl, created.obj.path)
    return reply.code(201).header('location', url).header('etag', etagOf(created)).send(await afterWriting(async () => await serialized(request, reply, created)))
  }

  async function patchContent (request: FastifyRequest, reply: FastifyReply): Promise<unknown> {
    const checked = await requireContext(content, request, Permission.Modify)
    await fastify.locks.assertWritable(checked.obj.uid, lockToken(request), checked.lock)
    // The version the edit leaves (core/content/versions.ts), with the change note the body sends (checked before anything is written).
    const note = versionable(checked.type) ? { actor: request.principal.userId, comment: changeNoteOf(request.body) } : undefined
    // An `id` other than its own renames the object first (plugins/support/rename.ts).
    const located = await renameIfAsked(fastify, request, checked)
    const ifMatch = request.headers['if-match']
    // `ordering` and `sort` reorder a folder's items (plugins/support/ordering.ts); the rest of the body is its fields.
    const { fields, keys } = splitOrdering(request.body)
    const reorder = keys === null ? null : await prepareOrdering(fastify, request, located, keys)
    // Checked against the object as it is now (again on every retry of the store's version
    // check): a concurrent edit or transition may have changed what the caller may do and what the body means.
    const prepare = async (current: Located, tx: Queryable): Promise<CheckedWrite> => {
      if (!can(request.principal, Permission.Modify, current)) {
        throw denied(request, `You lack the permission '${Permission.Modify}' on ${current.obj.path}.`)
      }
      const write = await checkWrite(current.type, fields, writeContext(request, current.obj.data, 'update', tx))
      checkWritePermissions(request, current, write, current.obj.data)
      if (ifMatch !== undefined && ifMatch !== '*' && !ifMatch.split(',').map(s => s.trim().replace(/^W\//, '')).includes(etagOf(current))) {
        throw Conflict('The object was changed since you read it (If-Match does not match its ETag).')
      }
      return write
    }
    const updated = reorder !== null && !changesFields(fields) ? located : await content.update(located, prepare, note)
    if (reorder !== null) await reorder()
    void reply.header('etag', etagOf(updated))
    if (/return=representation/i.test(String(request.headers.prefer ?? ''))) {
      return reply.code(200).send(await afterWriting(async () => await serialized(request, reply, updated)))
    }
    return reply.code(204).send()
  }

  async function deleteContent (request: FastifyRequest, reply: FastifyReply): Promise<unknown> {
    const located = await requireContext(content, request, Permission.Delete)
    if (located.obj.path === '/') throw MethodNotAllowed('The site root cannot be deleted.')
    await fastify.locks.assertWritable(located.obj.uid, lockToken(request), located.lock)
    await content.remove(located)
    return reply.code(204).send()
  }

  // An object's body may carry an image: its bounds are a content body's (plugins/app/bodies.ts).
  const objectBody = { bodyKind: 'content' as const }
  const routes = [
    { method: 'GET' as const, handler: getContent, schema: docs('Read an object; folders include their items', { response: { 200: ContentObject, ...errorResponses } }) },
    { method: 'POST' as const, handler: postContent, config: objectBody, schema: docs('Create an object in a folder', { body: ContentBody, response: { 201: ContentObject, ...errorResponses } }) },
    { method: 'PATCH' as const, handler: patchContent, config: objectBody, schema: docs('Change fields of an object (204, or 200 with Prefer: return=representation)', { body: ContentBody, response: { 200: ContentObject, 204: Type.Null(), ...errorResponses } }) },
    { method: 'DELETE' as const, handler: deleteContent, schema: docs('Delete an object and everything inside it', { response: { 204: Type.Null(), ...errorResponses } }) }
  ]
  for (const { schema, ...route } of routes) {
    fastify.route({ ...route, url: '/', schema: { ...schema, hide: true } })
    fastify.route({ ...route, url: '/*', schema })
  }

  /** An image's bytes, shown in the page (with its file name, for saving it). */
  const sendImage = (reply: FastifyReply, meta: ImageMeta, field: string, bytes: Buffer): FastifyReply =>
    reply.type(meta['content-type']).header('content-disposition', disposition('inline', meta.filename ?? field)).send(bytes)

  /** A file's bytes, streamed a slice at a time (a range of them when `Range` asks), as an attachment or shown in the page. */
  async function sendFile (request: FastifyRequest, reply: FastifyReply, located: Located, field: string, shown: boolean): Promise<FastifyReply> {
    const meta = located.obj.data[field] as FileMeta
    const stored = await fileOf(fastify.db, located.obj.uid, field)
    if (stored === null) throw NotFound(request.absoluteUrl(addressOf(request.raw).originalUrl))
    const range = byteRange(request.headers.range, stored.size)
    const { start, end } = range ?? { start: 0, end: stored.size - 1 }
    void reply.type(meta['content-type']).header('accept-ranges', 'bytes').header('content-length', String(end - start + 1))
      .header('content-disposition', disposition(shown && SHOWN_TYPES.test(meta['content-type']) ? 'inline' : 'attachment', meta.filename ?? field))
    if (range !== null) void reply.code(206).header('content-range', `bytes ${start}-${end}/${stored.size}`)
    // A HEAD is told the length without a byte read (an empty stream: Fastify keeps the length given).
    return reply.send(request.method === 'HEAD' ? Readable.from([]) : fileStream(fastify.db, stored.oid, start, end + 1))
  }

  /** The binary field `field` of the context, or 404: the name comes from the URL, only a declared field holding a value names stored data. */
  async function binaryField (request: FastifyRequest, kinds: ReadonlyArray<string | undefined>): Promise<{ located: Located, field: string, kind: string }> {
    const located = await requireContext(content, request)
    const { field } = request.params as { field: string }
    const kind = located.type.fields.get(field)?.kind
    if (!kinds.includes(kind) || !Object.hasOwn(located.obj.data, field)) throw NotFound(request.absoluteUrl(addressOf(request.raw).originalUrl))
    return { located, field, kind: kind! }
  }

  fastify.get('/@@download/:field', {
    config: { binary: true },
    schema: { summary: 'The bytes of an image or file field, as an attachment for a file; Range asks part of a file (on any content path)', tags: ['content'], params: Type.Object({ field: Type.String() }) }
  }, async (request, reply) => {
    const { located, field, kind } = await binaryField(request, ['image', 'file'])
    if (kind === 'file') return await sendFile(request, reply, located, field, false)
    const bytes = await content.image(located.obj.uid, field)
    if (bytes === null) throw NotFound(request.absoluteUrl(addressOf(request.raw).originalUrl))
    return sendImage(reply, located.obj.data[field] as ImageMeta, field, bytes)
  })

  fastify.get('/@@display-file/:field', {
    config: { binary: true },
    schema: { summary: 'A file field shown in the browser when its type is one a browser shows safely (else as an attachment); Range asks part of it', tags: ['content'], params: Type.Object({ field: Type.String() }) }
  }, async (request, reply) => {
    const { located, field } = await binaryField(request, ['file'])
    return await sendFile(request, reply, located, field, true)
  })

  const scales = new KeptScales(fastify.db)
  fastify.caches.set('image_scales', () => scales.figures())
  /** What a versioned name may be kept for by any cache: the name changes whenever the image does. */
  const FOR_EVER = 'public, max-age=31536000, immutable'

  fastify.get('/@@images/*', {
    config: { binary: true },
    schema: {
      summary: 'An image field or one of its scales, as Plone 6 names them: <field>, <field>/<scale>, or <field>-<width>-<version>.<ext> (on any content path)',
      tags: ['content']
    }
  }, async (request, reply) => {
    const located = await requireContext(content, request)
    const steps = (request.params as { '*': string })['*'].split('/')
    // Only declared image fields that hold an image name stored data: the name comes from the URL.
    for (const [field, declared] of located.type.fields) {
      const meta = located.obj.data[field] as ImageMeta | undefined
      if (declared.kind !== 'image' || meta === undefined) continue
      const version = imageVersion(located.obj.uid, meta, located.obj.modified)
      const asked = askedScale(steps, meta, field, version)
      if (asked === null) continue
      const bytes = asked.scale === null ? await content.image(located.obj.uid, field) : await scales.scale(located.obj.uid, field, asked.scale, version, meta)
      if (bytes === null) break
      const versioned = steps.length === 1 && steps[0] !== field
      if (versioned) void reply.header('cache-control', FOR_EVER)
      return sendImage(reply, meta, field, bytes)
    }
    throw NotFound(request.absoluteUrl(addressOf(request.raw).originalUrl))
  })
}, { name: 'content-routes', dependencies: ['components', 'content', 'auth', 'http', 'querystring'] })
