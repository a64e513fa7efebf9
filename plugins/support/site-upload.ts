import { createWriteStream } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pipeline } from 'node:stream/promises'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { BadRequest } from '../../core/errors.js'
import { DEFAULT_MAX_OBJECTS, importSite, JSON_MAX_BYTES } from '../../core/exchange/site.js'
import type { ProblemSummary } from '../../core/exchange/report.js'
import { MappingProblem, NO_MAPPING, parseMapping, type ImportMapping } from '../../core/exchange/mapping.js'
import { typeNamed } from '../../core/exchange/reader.js'
import type { ContentTypeRegistry } from '../../core/content/registry.js'
import { Groups } from '../../core/security/groups.js'
import { denied, requireContext } from './access.js'
import { takeUploadedForm } from './form-uploads.js'

/** The form's field of the mapping file's JSON (docs/moving-a-plone-site.md, "Mapping"), beside the part `file`. */
export const MAPPING_FIELD = 'mapping'

/** What a zip may unpack to, per byte uploaded: an export's JSON compresses; its images and files hardly do. */
const UNPACKED_PER_UPLOADED_BYTE = 4

/** What the REST import answers: plone.exportimport's `{status, report}`, the report as the command line's (counts, then problems with examples and why). */
export interface SiteUploadAnswer { status: 'success' | 'incomplete', report: { counts: Record<string, number>, problems: ProblemSummary[] } }

/**
 * plone.exportimport's `POST /@import`: the zip of an export, uploaded as
 * `multipart/form-data` in the part `file`, imported into the site as
 * `npm run site -- import` does (core/exchange/site.ts), by a Manager or
 * Site Administrator, at the site root only. The zip goes to disk as it
 * arrives (at most UPLOAD_MAX_BYTES, the route's multipart limit) and is
 * unpacked within the command line's bounds; the request lasts as long as
 * the import does, so a large site is better imported from the command line.
 * `incomplete` when anything was left out (the report says what and why).
 * A mapping, as the command line's `--map` file, comes in the field
 * `mapping`; one that fails its checks is a 400 before anything is imported.
 */
export async function importUploadedSite (fastify: FastifyInstance, request: FastifyRequest): Promise<SiteUploadAnswer> {
  const { roles } = request.principal
  if (!roles.includes('Manager') && !roles.includes('Site Administrator')) throw denied(request, 'Importing a site needs the Manager or Site Administrator role.')
  const located = await requireContext(fastify.content, request)
  if (located.obj.path !== '/') throw BadRequest('A site export is imported at the site root (POST /@import); in a folder, @import takes JSON items.')
  const { config } = fastify
  const dir = await mkdtemp(join(tmpdir(), 'plone-upload-'))
  try {
    const zip = join(dir, 'export.zip')
    const { fields } = await takeUploadedForm(request, async part => { await pipeline(part.file, createWriteStream(zip)) }, [MAPPING_FIELD])
    const mapping = mappingOf(fields.get(MAPPING_FIELD), fastify.contentTypes)
    const report = await importSite(zip, { db: fastify.db, content: fastify.content, types: fastify.contentTypes, users: fastify.users, groups: new Groups(fastify.db) },
      { jsonMaxBytes: JSON_MAX_BYTES, maxObjects: DEFAULT_MAX_OBJECTS, imageMaxBytes: config.IMAGE_MAX_BYTES, fileMaxBytes: config.UPLOAD_MAX_BYTES, zipMaxBytes: config.UPLOAD_MAX_BYTES * UNPACKED_PER_UPLOADED_BYTE },
      { writeContext: { tokens: async name => await fastify.vocabularies.tokens(name), imageMaxBytes: config.IMAGE_MAX_BYTES, fileMaxBytes: config.UPLOAD_MAX_BYTES }, mapping })
    const answer = report.toJSON()
    return { status: answer.problems.length === 0 ? 'success' : 'incomplete', report: answer }
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
}

/** The mapping a form sent (none: NO_MAPPING), checked as the command line checks its file; 400 with why. */
function mappingOf (text: string | undefined, types: ContentTypeRegistry): ImportMapping {
  if (text === undefined || text.trim() === '') return NO_MAPPING
  try {
    return parseMapping(text, types, name => typeNamed(types, name))
  } catch (err) {
    if (err instanceof MappingProblem) throw BadRequest(`The mapping: ${err.message}`)
    throw err
  }
}
