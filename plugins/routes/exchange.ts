import { createReadStream } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import fp from 'fastify-plugin'
import Type from 'typebox'
import { exportSite } from '../../core/exchange/exporter.js'
import { zipFolder } from '../../core/exchange/zip.js'
import { denied, requireContext } from '../support/access.js'

const errorResponses = Object.fromEntries([400, 401, 403, 404].map(s => [s, { $ref: 'Error#' }]))

/**
 * `POST <path>/@export`: the site, or the subtree at the path, as a zip in
 * plone.exportimport's format (README of plone.exportimport, "Export
 * Endpoint"), for Managers and Site Administrators only — it holds every
 * object, private ones too, and the users' password hashes. The import is
 * `npm run site -- import` (docs/moving-a-plone-site.md): `POST @import` is
 * this service's bulk import of JSON items.
 */
export default fp(async fastify => {
  fastify.post('/@export', {
    schema: {
      summary: 'Export the site or a subtree as a zip in plone.exportimport\'s format (Manager, Site Administrator)',
      tags: ['content'],
      security: [{ bearer: [] }],
      // It reads no parameter: one it would ignore is refused, as every write's.
      querystring: Type.Object({}, { additionalProperties: false }),
      response: { 200: { type: 'string', format: 'binary' }, ...errorResponses }
    }
  }, async (req, reply) => {
    const { roles } = req.principal
    if (!roles.includes('Manager') && !roles.includes('Site Administrator')) throw denied(req, 'Exporting the site needs the Manager or Site Administrator role.')
    const context = await requireContext(fastify.content, req)
    // Written to disk, then sent: files are streamed from their large objects and the zip from its file, never whole in memory.
    const dir = await mkdtemp(join(tmpdir(), 'plone-export-'))
    const zip = join(dir, 'export.zip')
    try {
      await exportSite(fastify.db, fastify.contentTypes, join(dir, 'export'), { path: context.obj.path })
      await zipFolder(join(dir, 'export'), zip)
    } catch (err) {
      await rm(dir, { recursive: true, force: true })
      throw err
    }
    const stream = createReadStream(zip)
    stream.on('close', () => { rm(dir, { recursive: true, force: true }).catch(() => {}) })
    return await reply.type('application/zip').header('content-disposition', 'attachment; filename="export.zip"').send(stream)
  })
}, { name: 'exchange-routes', dependencies: ['content', 'auth', 'http'] })
