import type { FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import Type from 'typebox'
import type { ContentType } from '../../core/content/registry.js'
import type { Located } from '../../core/content/rows.js'
import { Uploads, UPLOAD_SLICE_BYTES, type Upload, type UploadMode } from '../../core/content/uploads.js'
import { checkWrite, type ReceivedFile } from '../../core/content/validation.js'
import { urlOf } from '../../core/content/urls.js'
import { BadRequest, Conflict, Forbidden, MethodNotAllowed, NotFound, PayloadTooLarge, PreconditionFailed, TooManyRequests, UnsupportedMediaType, quote } from '../../core/errors.js'
import { can } from '../../core/security/permissions.js'
import { Permission } from '../../core/security/roles.js'
import { denied, requireContext } from '../support/access.js'
import { uploadMetadata } from '../support/upload-metadata.js'
import { addressOf } from '../support/url.js'
import { fixedSlices } from '../../core/slices.js'
import { checkWritePermissions, lockToken, writeContext } from '../support/writes.js'

/** The one version of the protocol there is, and what of it is served (termination: DELETE of an upload). */
const TUS_VERSION = '1.0.0'
const TUS_EXTENSIONS = 'creation,expiration,termination'
const UPLOAD_BODY = 'application/offset+octet-stream'

const errorResponses = Object.fromEntries([400, 401, 403, 404, 409, 412, 413, 415, 429].map(s => [s, { $ref: 'Error#' }]))
const UploadParams = Type.Object({ upload: Type.String() })

/** A header's whole non-negative number, or null (`Upload-Length`, `Upload-Offset`: digits only, as the protocol says). */
function count (header: string | string[] | undefined): number | null {
  const value = Array.isArray(header) ? undefined : header
  return value !== undefined && /^\d{1,16}$/.test(value) && Number.isSafeInteger(Number(value)) ? Number(value) : null
}

/** The first image or file field a type declares: the one an upload fills unless it names another (Plone's primary field). */
const primaryField = (type: ContentType): string | undefined =>
  [...type.fields].find(([, field]) => field.kind === 'file' || field.kind === 'image')?.[0]

/**
 * Resumable uploads (TUS 1.0.0, as plone.restapi serves them; docs/types.md,
 * "Resumable uploads"): POST `<folder>/@tus-upload` opens an upload that
 * creates an object (a File, or an Image for an image type, unless
 * `Upload-Metadata` names `@type`), POST `<object>/@tus-replace` one that
 * replaces the object's file; PATCH `…/@tus-upload/<id>` appends bytes at the
 * offset reached, HEAD tells it, DELETE gives the upload up. The last PATCH
 * creates or changes the object, answering its URL in `Location`. An upload
 * is its opener's: anyone else is told it does not exist.
 */
export default fp(async fastify => {
  const { content, contentTypes: types, config } = fastify
  const uploads = new Uploads(fastify.db, config.UPLOAD_LIFETIME)

  const expiresHeader = (upload: Upload): string => upload.expires.toUTCString()

  function requireVersion (request: FastifyRequest): void {
    if (request.headers['tus-resumable'] !== TUS_VERSION) throw PreconditionFailed(`This server speaks TUS ${TUS_VERSION}: send Tus-Resumable: ${TUS_VERSION}.`)
  }

  /** The type and field an upload fills, checked before a byte is sent: what the last PATCH would refuse is refused when it is opened. */
  function target (located: Located, mode: UploadMode, metadata: Record<string, string>, length: number): { type: ContentType, field: string } {
    let type = located.type
    if (mode === 'create') {
      const named = metadata['@type'] ?? (/^image\//i.test(metadata['content-type'] ?? '') && types.get('Image') !== undefined ? 'Image' : 'File')
      const found = types.get(named)
      if (found === undefined || found === types.siteRoot) throw Forbidden(`Invalid '@type' parameter. No content type with the name '${quote(named)}' found.`)
      if (!located.type.allows(found)) throw Forbidden(`Disallowed subobject type: ${quote(named)}.`)
      type = found
    }
    const field = metadata.fieldname ?? primaryField(type)
    const kind = field === undefined ? undefined : type.fields.get(field)?.kind
    if (field === undefined || (kind !== 'file' && kind !== 'image')) throw BadRequest(`'${type.name}' has no file or image field${metadata.fieldname !== undefined ? ` named '${quote(metadata.fieldname)}'` : ''} to upload into.`)
    const max = kind === 'image' ? config.IMAGE_MAX_BYTES : config.UPLOAD_MAX_BYTES
    if (length > max) throw PayloadTooLarge(`The upload is ${length} bytes; at most ${max} are accepted into '${field}' of '${type.name}'.`)
    return { type, field }
  }

  async function open (request: FastifyRequest, reply: FastifyReply, mode: UploadMode): Promise<FastifyReply> {
    const located = await requireContext(content, request, mode === 'create' ? Permission.Add : Permission.Modify)
    if (mode === 'create' && !located.type.folderish) throw MethodNotAllowed(`${located.obj.path} is not a folder; content can only be added to folders.`)
    if (mode === 'replace') await fastify.locks.assertWritable(located.obj.uid, lockToken(request), located.lock)
    requireVersion(request)
    const length = count(request.headers['upload-length'])
    if (length === null) throw BadRequest('Missing or invalid Upload-Length header.')
    const header = request.headers['upload-metadata']
    const metadata = uploadMetadata(Array.isArray(header) ? header.join(',') : header)
    const { type, field } = target(located, mode, metadata, length)
    const upload = await uploads.open({
      context: located.obj.uid,
      mode,
      owner: request.principal.userId!,
      length,
      metadata: { ...metadata, '@type': type.name, fieldname: field }
    }, config.UPLOAD_MAX_OPEN)
    if (upload === null) throw TooManyRequests(config.UPLOAD_LIFETIME, `You have ${config.UPLOAD_MAX_OPEN} uploads under way; finish or delete one first.`)
    return reply.code(201).header('location', `${urlOf(request.baseUrl, located.obj.path)}/@tus-upload/${upload.id}`)
      .header('upload-expires', expiresHeader(upload)).send()
  }

  /**
   * The context and the caller's upload on it, the caller still holding the
   * permission the upload needs. An upload of someone else, of another
   * object, ended or expired is not found: its id tells nothing.
   */
  async function ownUpload (request: FastifyRequest): Promise<{ located: Located, upload: Upload }> {
    const located = await requireContext(content, request)
    const { upload: id } = request.params as { upload: string }
    const upload = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(id) ? await uploads.get(id) : null
    if (upload === null || upload.owner !== request.principal.userId || upload.context !== located.obj.uid) {
      throw NotFound(request.absoluteUrl(addressOf(request.raw).originalUrl))
    }
    const permission = upload.mode === 'create' ? Permission.Add : Permission.Modify
    if (!can(request.principal, permission, located)) throw denied(request, `You lack the permission '${permission}' on ${located.obj.path}.`)
    requireVersion(request)
    return { located, upload }
  }

  /** The bytes of a PATCH, appended a slice at a time; what arrived before the client went away is kept. Answers the offset reached. */
  async function receive (request: FastifyRequest, upload: Upload, offset: number): Promise<number> {
    let reached = offset
    for await (const slice of fixedSlices(request.body as AsyncIterable<Buffer>, UPLOAD_SLICE_BYTES)) {
      if (reached + slice.length > upload.length) throw PayloadTooLarge(`The upload is ${upload.length} bytes long; this PATCH goes past its end.`)
      const appended = await uploads.append(upload.id, reached, slice)
      if (appended === null) throw Conflict(`The upload is no longer at offset ${reached}: another request wrote it. Ask where it is (HEAD) and go on from there.`)
      reached = appended
    }
    return reached
  }

  /** Ends a finished upload into its object: created in the folder, or its field replaced. Answers the object. */
  async function end (request: FastifyRequest, located: Located, upload: Upload): Promise<Located> {
    const { metadata } = upload
    const field = metadata.fieldname
    const received: ReceivedFile = {
      upload: upload.id,
      filename: metadata.filename ?? null,
      contentType: metadata['content-type'] ?? 'application/octet-stream',
      size: upload.length,
      bytes: async () => await uploads.bytes(upload.id)
    }
    const files = new Map([[field, received]])
    if (upload.mode === 'replace') {
      await fastify.locks.assertWritable(located.obj.uid, lockToken(request), located.lock)
      return await content.update(located, async (current, tx) => {
        if (!can(request.principal, Permission.Modify, current)) throw denied(request, `You lack the permission '${Permission.Modify}' on ${current.obj.path}.`)
        const write = await checkWrite(current.type, {}, { ...writeContext(fastify, request.baseUrl, current.obj.data, 'update', tx), received: files })
        checkWritePermissions(request, current, write, current.obj.data)
        return write
      })
    }
    const type = types.get(metadata['@type'])
    if (type === undefined || !located.type.allows(type)) throw Forbidden(`Disallowed subobject type: ${quote(metadata['@type'])}.`)
    // As Plone names an uploaded file: its title and id come from the file's name.
    const write = await checkWrite(type, { title: metadata.filename ?? type.title }, { ...writeContext(fastify, request.baseUrl, {}, 'create'), received: files })
    checkWritePermissions(request, { lineage: located.lineage, type }, write, {})
    return await content.create(located, type, write, request.principal)
  }

  // The routes of the protocol in a scope of their own: only they get its headers and take its bodies.
  await fastify.register(async scoped => {
    scoped.addHook('onSend', async (_request, reply) => {
      void reply.header('tus-resumable', TUS_VERSION).header('tus-version', TUS_VERSION)
        .header('tus-extension', TUS_EXTENSIONS).header('tus-max-size', String(config.UPLOAD_MAX_BYTES))
    })
    // An upload's bytes are read as they arrive (never parsed, never whole): only the PATCH of an upload takes them.
    scoped.addContentTypeParser(UPLOAD_BODY, (request, payload, done) => {
      if (request.method === 'PATCH') done(null, payload)
      else done(UnsupportedMediaType(), undefined)
    })

    scoped.post('/@tus-upload', {
      schema: { summary: 'Open a resumable upload (TUS) that creates a File or an Image in this folder (on any folder path)', tags: ['content'], security: [{ bearer: [] }], response: { 201: Type.Null(), ...errorResponses } }
    }, async (request, reply) => await open(request, reply, 'create'))

    scoped.post('/@tus-replace', {
      schema: { summary: 'Open a resumable upload (TUS) that replaces this object\'s file or image (on any content path)', tags: ['content'], security: [{ bearer: [] }], response: { 201: Type.Null(), ...errorResponses } }
    }, async (request, reply) => await open(request, reply, 'replace'))

    scoped.head('/@tus-upload/:upload', {
      schema: { summary: 'How many bytes of the upload have arrived (Upload-Offset)', tags: ['content'], security: [{ bearer: [] }], params: UploadParams }
    }, async (request, reply) => {
      const { upload } = await ownUpload(request)
      return reply.header('upload-length', String(upload.length)).header('upload-offset', String(upload.received))
        .header('upload-expires', expiresHeader(upload)).header('cache-control', 'no-store').send()
    })

    scoped.patch('/@tus-upload/:upload', {
      config: { bodyKind: 'bytes' },
      schema: { summary: 'Append bytes to the upload at its offset (Content-Type: application/offset+octet-stream); the last ones create or change the object, whose URL is answered in Location', tags: ['content'], security: [{ bearer: [] }], params: UploadParams, response: { 204: Type.Null(), ...errorResponses } },
      // Before any parser reads the body: bytes sent as JSON are 415 (TUS), not a JSON syntax error.
      onRequest: async request => {
        if (request.headers['content-type']?.split(';')[0].trim().toLowerCase() !== UPLOAD_BODY) throw UnsupportedMediaType(`An upload's bytes are sent as ${UPLOAD_BODY}.`)
      }
    }, async (request, reply) => {
      const { located, upload } = await ownUpload(request)
      const offset = count(request.headers['upload-offset'])
      if (offset === null) throw BadRequest('Missing or invalid Upload-Offset header.')
      if (offset !== upload.received) throw Conflict(`The upload is at offset ${upload.received}, not ${offset}.`)
      const declared = count(request.headers['content-length'])
      if (declared !== null && offset + declared > upload.length) throw PayloadTooLarge(`The upload is ${upload.length} bytes long; ${declared} bytes at ${offset} go past its end.`)
      const reached = await receive(request, upload, offset)
      void reply.header('upload-offset', String(reached))
      if (reached < upload.length) return reply.code(204).header('upload-expires', expiresHeader(upload)).send()
      if (!await uploads.claim(upload.id)) throw Conflict('The upload is being ended by another request.')
      try {
        const ended = await end(request, located, upload)
        return reply.code(204).header('location', urlOf(request.baseUrl, ended.obj.path)).send()
      } catch (err) {
        await uploads.unclaim(upload.id)
        throw err
      }
    })

    scoped.delete('/@tus-upload/:upload', {
      schema: { summary: 'Give the upload up: its bytes are dropped (TUS termination)', tags: ['content'], security: [{ bearer: [] }], params: UploadParams, response: { 204: Type.Null(), ...errorResponses } }
    }, async (request, reply) => {
      const { upload } = await ownUpload(request)
      await uploads.remove(upload.id)
      return reply.code(204).send()
    })

    // What the server speaks, as plone.restapi answers it (the scope's onSend hook adds the headers).
    for (const url of ['/@tus-upload', '/@tus-replace']) {
      scoped.options(url, { schema: { summary: 'The TUS version, extensions and largest upload this server takes', tags: ['content'] } }, async (_request, reply) => reply.code(204).send())
    }
  })
}, { name: 'tus-routes', dependencies: ['content', 'auth', 'http'] })
