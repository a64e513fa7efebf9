import type { FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import Type from 'typebox'
import { denied, requireContext } from '../support/access.js'
import { actorOf, mayReadHistory, stateTitle } from '../support/workflow-history.js'
import { checkWritePermissions, lockToken, writeContext } from '../support/writes.js'
import { addressOf } from '../support/url.js'
import { linkTargets } from '../../core/content/links.js'
import { withChanges, type Located } from '../../core/content/rows.js'
import { isoDate, urlOf } from '../../core/content/urls.js'
import { checkWrite } from '../../core/content/validation.js'
import { revertBody, versionable, versionIdOf, Versions, type StoredVersion } from '../../core/content/versions.js'
import { NotFound } from '../../core/errors.js'
import { can } from '../../core/security/permissions.js'
import { Permission } from '../../core/security/roles.js'

const errorResponses = Object.fromEntries([400, 401, 403, 404, 409].map(s => [s, { $ref: 'Error#' }]))
const AnyObject = Type.Object({}, { additionalProperties: true })

/**
 * `@history` (plone.restapi): an object's versions (docs/versions.md) and its
 * workflow history together, newest first; `@history/<version>` the object as
 * that version kept it; PATCH reverts to a version, as a new edit.
 */
/** An entry of `@history`, before its actor is named (the actors' full names are read once for all). */
interface Entry { time: Date, actor: string | null, entry: Record<string, unknown> }

export default fp(async fastify => {
  const { content, transitions, serializer } = fastify
  const versions = new Versions(fastify.db)

  const mayAccessVersions = (request: FastifyRequest, located: Located): boolean =>
    versionable(located.type) && can(request.principal, Permission.AccessPreviousVersions, located)
  const mayRevert = (request: FastifyRequest, located: Located): boolean =>
    can(request.principal, Permission.Modify, located) && can(request.principal, Permission.RevertToPreviousVersions, located)

  /** The workflow's entries, newest first, as plone.restapi lists them. */
  async function workflowEntries (request: FastifyRequest, located: Located): Promise<Entry[]> {
    const workflow = located.type.workflow
    if (workflow === null || !mayReadHistory(located, request.principal)) return []
    const titles = workflow.transitions
    return (await transitions.history(located.obj.uid)).reverse().map(e => ({
      time: e.time,
      actor: e.actor,
      entry: {
        action: e.action ?? 'Create',
        comments: e.comments,
        review_state: e.review_state,
        state_title: stateTitle(located, e.review_state),
        time: isoDate(e.time),
        transition_title: e.action === null ? 'Create' : Object.hasOwn(titles, e.action) ? titles[e.action].title : e.action,
        type: 'workflow'
      }
    }))
  }

  /** The versions kept, newest first. */
  async function versionEntries (request: FastifyRequest, located: Located): Promise<Entry[]> {
    if (!mayAccessVersions(request, located)) return []
    const url = urlOf(request.baseUrl, located.obj.path)
    const revertible = mayRevert(request, located)
    return (await versions.list(located.obj.uid)).map(v => ({
      time: v.time,
      actor: v.actor,
      entry: {
        '@id': `${url}/@history/${v.version}`,
        action: 'Edited',
        comments: v.comment,
        may_revert: revertible,
        time: isoDate(v.time),
        transition_title: 'Edited',
        type: 'versioning',
        version: v.version
      }
    }))
  }

  fastify.get('/@history', {
    schema: { summary: 'Versions and workflow history of the object, newest first (on any content path)', tags: ['history'], security: [{ bearer: [] }], response: { 200: Type.Array(AnyObject), ...errorResponses } }
  }, async request => {
    const located = await requireContext(content, request)
    // Neither versions nor a workflow: nothing to list, as for the site root.
    if (located.type.workflow === null && !versionable(located.type)) return []
    if (!mayReadHistory(located, request.principal) && !mayAccessVersions(request, located)) {
      throw denied(request, `You may not read the history of ${located.obj.path}.`)
    }
    // As plone.app.layout's fullHistory: the workflow's entries, then the versions, sorted newest first (stable).
    const entries = [...await workflowEntries(request, located), ...await versionEntries(request, located)]
    return entries.sort((a, b) => b.time.getTime() - a.time.getTime()).map(e => ({ ...e.entry, actor: actorOf(request.baseUrl, e.actor) }))
  })

  /** The version a request names, of an object whose versions the caller may read: 404 when it has none such. */
  async function requireVersion (request: FastifyRequest, located: Located, id: number | null): Promise<StoredVersion> {
    const version = id === null || !versionable(located.type) ? null : await versions.get(located.obj.uid, id)
    if (version === null) throw NotFound(request.absoluteUrl(addressOf(request.raw).originalUrl), `${located.obj.path} has no such version.`)
    return version
  }

  fastify.get('/@history/:version', {
    schema: {
      summary: 'The object as one of its versions kept it (on any content path)',
      tags: ['history'],
      security: [{ bearer: [] }],
      params: Type.Object({ version: Type.String({ maxLength: 64 }) }),
      response: { 200: AnyObject, ...errorResponses }
    }
  }, async request => {
    const located = await requireContext(content, request)
    if (!can(request.principal, Permission.AccessPreviousVersions, located)) throw denied(request, `You may not read the versions of ${located.obj.path}.`)
    const id = versionIdOf((request.params as { version: string }).version)
    const version = await requireVersion(request, located, id)
    const asWas = withChanges(located, { data: version.data, review_state: version.review_state, creators: version.creators, modified: version.time })
    const links = await linkTargets(request, [asWas], async uids => await content.locateMany(uids))
    // plone.restapi's serializer answers the version it was asked for, as it was named.
    return { ...serializer.object(request, asWas, undefined, links), version: String(id) }
  })

  fastify.patch('/@history', {
    schema: {
      summary: 'Revert the object to one of its versions: a new edit, itself a new version (on any content path)',
      tags: ['history'],
      security: [{ bearer: [] }],
      body: Type.Object({ version: Type.Integer({ minimum: 0, maximum: 2 ** 31 - 1 }) }, { additionalProperties: false }),
      response: { 200: Type.Object({ message: Type.String() }), ...errorResponses }
    }
  }, async request => {
    const located = await requireContext(content, request, Permission.Modify)
    if (!mayRevert(request, located)) throw denied(request, `You may not revert ${located.obj.path}.`)
    await fastify.locks.assertWritable(located.obj.uid, lockToken(request), located.lock)
    const { version: id } = request.body as { version: number }
    const version = await requireVersion(request, located, id)
    // Checked and written as a PATCH of the version's values, against the object as it is now (again on every retry).
    const reverted = await content.update(located, async (current, tx) => {
      if (!mayRevert(request, current)) throw denied(request, `You may not revert ${current.obj.path}.`)
      const write = await checkWrite(current.type, revertBody(current.type, version.data, current.obj.data), writeContext(fastify, request.baseUrl, current.obj.data, 'update', tx))
      checkWritePermissions(request, current, write, current.obj.data)
      return write
    }, { actor: request.principal.userId, comment: `Reverted to revision ${id}` })
    const title = typeof reverted.obj.data.title === 'string' && reverted.obj.data.title !== '' ? reverted.obj.data.title : reverted.obj.id
    return { message: `${title} has been reverted to revision ${id}.` }
  })
}, { name: 'history', dependencies: ['content', 'auth', 'http'] })
