import type { FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import Type from 'typebox'
import { denied, requireContext } from '../support/access.js'
import { acceptFormUploads } from '../support/form-uploads.js'
import { MAX_MAPPING_BYTES } from '../../core/exchange/mapping.js'
import { importUploadedSite } from '../support/site-upload.js'
import { checkWritePermissions, writeContext } from '../support/writes.js'
import { creationEntry, newObject, type NewObject } from '../../core/content/new-object.js'
import { withChanges, type HistoryEntry, type Located } from '../../core/content/rows.js'
import { checkWrite, type CheckedWrite } from '../../core/content/validation.js'
import type { ContentType } from '../../core/content/registry.js'
import { urlOf } from '../../core/content/urls.js'
import { ApiError, Conflict, Forbidden, MethodNotAllowed, ValidationFailed, quote, type FieldError } from '../../core/errors.js'
import { Pacer } from '../../core/pacing.js'
import { can } from '../../core/security/permissions.js'
import { Permission } from '../../core/security/roles.js'

const errorResponses = Object.fromEntries([400, 401, 403, 404, 405, 409, 413, 415].map(s => [s, { $ref: 'Error#' }]))
/** plone.exportimport's answer to a site import: the report's counts and problems (kind, count, examples, why). */
const SiteImported = Type.Object({
  status: Type.Union([Type.Literal('success'), Type.Literal('incomplete')]),
  report: Type.Object({
    counts: Type.Record(Type.String(), Type.Integer()),
    problems: Type.Array(Type.Object({ kind: Type.String(), count: Type.Integer(), examples: Type.Array(Type.String()), why: Type.String() }))
  })
})
const Imported = Type.Object({
  '@id': Type.String(),
  '@type': Type.String(),
  id: Type.String(),
  UID: Type.String(),
  review_state: Type.Union([Type.String(), Type.Null()]),
  title: Type.String()
})

/** At most this many transitions an item (the workflow's longest path is two). */
const MAX_TRANSITIONS = 10

const isObject = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value)
const fieldError = (field: string, message: string): FieldError => ({ field, message, error: 'ValidationError' })

/** An item's error as the item's: its message and its fields prefixed with `items/<i>`. */
function ofItem (i: number, err: unknown): unknown {
  if (!(err instanceof ApiError)) return err
  const errors = err.errors?.map(e => ({ ...e, field: e.field !== undefined ? `items/${i}/${e.field}` : `items/${i}` }))
  return new ApiError(err.statusCode, err.type, errors !== undefined ? err.message : `items/${i}: ${err.message}`, { errors, headers: err.headers })
}

/**
 * `POST <folder>/@import` (docs/api.md, "Bulk import"): creates many objects
 * in a folder, each as POST creates it and then taken through its
 * `transitions` as `@workflow/<transition>` would, all or nothing, in one
 * transaction of a few statements. This service's own extension: Plone has
 * no such service (collective.exportimport imports on the server).
 */
export default fp(async fastify => {
  const { content, contentTypes: types, transitions } = fastify
  const max = fastify.config.IMPORT_MAX_ITEMS

  /** The item checked as POST checks its body: 403 for a type it may not add here, validation errors collected in `errors`. */
  async function checkItem (req: FastifyRequest, parent: Located, item: unknown, i: number, errors: FieldError[], memo: Map<string, Promise<string[]>>, pacer: Pacer):
  Promise<{ type: ContentType, write: CheckedWrite, transitions: string[] } | null> {
    if (!isObject(item)) {
      errors.push(fieldError(`items/${i}`, 'Must be an object (the body of a create).'))
      return null
    }
    const { transitions: names = [], ...body } = item
    const namesValid = Array.isArray(names) && names.length <= MAX_TRANSITIONS && names.every(n => typeof n === 'string')
    if (!namesValid) errors.push(fieldError(`items/${i}/transitions`, `Must be a list of at most ${MAX_TRANSITIONS} transition names.`))
    const typeName = body['@type']
    if (typeof typeName !== 'string' || typeName === '') {
      errors.push(fieldError(`items/${i}/@type`, "Property '@type' is required."))
      return null
    }
    const type = types.get(typeName)
    if (type === undefined || type === types.siteRoot) throw Forbidden(`items/${i}: Invalid '@type' parameter. No content type with the name '${quote(typeName)}' found.`)
    if (!parent.type.allows(type)) throw Forbidden(`items/${i}: Disallowed subobject type: ${quote(typeName)}.`)
    try {
      const write = await checkWrite(type, body, { ...writeContext(fastify, req.baseUrl, {}, 'create', undefined, memo), pacer })
      checkWritePermissions(req, { lineage: parent.lineage, type }, write, {})
      return namesValid ? { type, write, transitions: names as string[] } : null
    } catch (err) {
      const itemError = ofItem(i, err)
      if (itemError instanceof ApiError && itemError.type === 'BadRequest' && itemError.errors !== undefined) {
        errors.push(...itemError.errors)
        return null
      }
      throw itemError
    }
  }

  // A scope of its own: at the site root the route also takes the zip of a Plone site's export as a
  // form upload (plone.exportimport's REST import, plugins/support/site-upload.ts).
  await fastify.register(async scoped => {
    await acceptFormUploads(scoped, fastify.config.UPLOAD_MAX_BYTES, MAX_MAPPING_BYTES)
    scoped.post('/@import', {
      config: { bodyKind: 'import' },
      schema: {
        summary: 'Create many objects in a folder, with their workflow transitions, all or nothing (on any folder path, JSON); at the site root, import a zip of a Plone site\'s export (multipart, part `file`; Manager, Site Administrator)',
        tags: ['content'],
        security: [{ bearer: [] }],
        response: { 200: SiteImported, 201: Type.Object({ '@id': Type.String(), items: Type.Array(Imported), items_total: Type.Integer() }), ...errorResponses }
      }
    }, async (req, reply) => req.isMultipart() ? await importUploadedSite(fastify, req) : await bulkImport(req, reply))
  })

  async function bulkImport (req: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
    const body = req.body
    if (!isObject(body)) throw ValidationFailed([{ message: 'The request body must be a JSON object.', error: 'ValidationError' }])
    const unknown = Object.keys(body).filter(key => key !== 'items' && !key.startsWith('@'))
    if (unknown.length > 0) throw ValidationFailed(unknown.map(key => fieldError(key, `Unknown field '${quote(key)}'.`)))
    const { items } = body
    if (!Array.isArray(items)) throw ValidationFailed([fieldError('items', 'Must be a list of objects.')])
    if (items.length === 0) throw ValidationFailed([fieldError('items', 'At least one item is required.')])
    if (items.length > max) throw ValidationFailed([fieldError('items', `At most ${max} items per request (IMPORT_MAX_ITEMS); ${items.length} were sent.`)])

    // As POST: the folder, then the add permission, then the bodies; positions are taken by the write (ContentStore.createMany).
    const parent = await requireContext(content, req)
    if (!parent.type.folderish) throw MethodNotAllowed(`${parent.obj.path} is not a folder; content can only be added to folders.`)
    if (!can(req.principal, Permission.Add, parent)) throw denied(req, `You may not add content to ${parent.obj.path}.`)

    const errors: FieldError[] = []
    const memo = new Map<string, Promise<string[]>>()
    // The items are checked one field at a time, other requests served between (core/pacing.ts).
    const pacer = new Pacer()
    const checked = []
    for (const [i, item] of items.entries()) checked.push(await checkItem(req, parent, item, i, errors, memo, pacer))
    if (errors.length > 0) throw ValidationFailed(errors)
    const given = new Map<string, number>()
    for (const [i, c] of checked.entries()) {
      const id = c?.write.id
      if (id === undefined) continue
      if (given.has(id)) throw Conflict(`items/${i}: the id '${id}' is given twice (also items/${given.get(id)}).`)
      given.set(id, i)
    }

    const now = Date.now()
    const objects: NewObject[] = []
    for (const [i, c] of checked.entries()) {
      await pacer.pace()
      const { type, write, transitions: names } = c!
      // Created a millisecond apart, the last now: the catalogue's creation order (searches without sort_on) is the items' order.
      const created = new Date(now - (checked.length - 1 - i))
      let located = newObject(parent, type, write, req.principal, created)
      const history: HistoryEntry[] = []
      const creation = creationEntry(located, req.principal)
      if (creation !== undefined) history.push(creation)
      // Each transition checked against the object as the ones before left it, a millisecond apart, as two requests would.
      for (const [k, name] of names.entries()) {
        const time = new Date(created.getTime() + k + 1)
        try {
          const { changes, history: entry } = transitions.changeOf(located, name, req.principal, '', {}, time)
          located = withChanges(located, { ...changes, modified: time })
          history.push(entry)
        } catch (err) { throw ofItem(i, err) }
      }
      objects.push({ located, write, history })
    }

    const written = await content.createMany(parent, objects)
    return reply.code(201).send({
      '@id': `${urlOf(req.baseUrl, parent.obj.path)}/@import`,
      items: written.map(({ obj }) => ({
        '@id': urlOf(req.baseUrl, obj.path),
        '@type': obj.portal_type,
        id: obj.id,
        UID: obj.uid,
        review_state: obj.review_state,
        title: typeof obj.data.title === 'string' ? obj.data.title : ''
      })),
      items_total: written.length
    })
  }
}, { name: 'import-routes', dependencies: ['content', 'auth', 'http'] })
