import multipart, { type MultipartFile } from '@fastify/multipart'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { BadRequest } from '../../core/errors.js'

/**
 * The few routes that take a file as `multipart/form-data` (a form's upload,
 * as Volto and plone.restapi's clients send one) do so in a scope of their
 * own, which this gives the parser: one file of at most `fileSize` bytes
 * (413 beyond), a few fields of at most `fieldSize` bytes each. Every other
 * route takes JSON only (plugins/app/bodies.ts).
 */
export async function acceptFormUploads (scope: FastifyInstance, fileSize: number, fieldSize = 1000): Promise<void> {
  await scope.register(multipart, { limits: { fileSize, files: 1, fields: 10, fieldSize, parts: 11, headerPairs: 50 }, throwFileSizeLimit: true })
}

/**
 * The one file of a form upload, in its part `file` (plone.restapi's name),
 * handed to `take` as it arrives, and the text of the fields named
 * `fieldNames` that came (others are ignored); 400 for a file in another
 * part, or none, or a field longer than the scope takes.
 */
export async function takeUploadedForm<T> (request: FastifyRequest, take: (part: MultipartFile) => Promise<T>, fieldNames: readonly string[]): Promise<{ file: T, fields: Map<string, string> }> {
  let taken: { value: T } | undefined
  const fields = new Map<string, string>()
  for await (const part of request.parts()) {
    if (part.type === 'field') {
      if (!fieldNames.includes(part.fieldname)) continue
      if (part.valueTruncated || typeof part.value !== 'string') throw BadRequest(`The field '${part.fieldname}' is too long, or no text.`)
      fields.set(part.fieldname, part.value)
      continue
    }
    if (part.fieldname !== 'file' || taken !== undefined) {
      part.file.resume()
      throw BadRequest('The upload takes one file, in its part \'file\'.')
    }
    taken = { value: await take(part) }
  }
  if (taken === undefined) throw BadRequest('No file uploaded: the file goes in the part \'file\'.')
  return { file: taken.value, fields }
}

/** The one file of a form upload (as `takeUploadedForm`), without fields. */
export async function takeUploadedFile<T> (request: FastifyRequest, take: (part: MultipartFile) => Promise<T>): Promise<T> {
  return (await takeUploadedForm(request, take, [])).file
}
