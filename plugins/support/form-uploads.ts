import multipart, { type MultipartFile } from '@fastify/multipart'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { BadRequest } from '../../core/errors.js'

/**
 * The few routes that take a file as `multipart/form-data` (a form's upload,
 * as Volto and plone.restapi's clients send one) do so in a scope of their
 * own, which this gives the parser: one file of at most `fileSize` bytes
 * (413 beyond), a few small fields. Every other route takes JSON only
 * (plugins/app/bodies.ts).
 */
export async function acceptFormUploads (scope: FastifyInstance, fileSize: number): Promise<void> {
  await scope.register(multipart, { limits: { fileSize, files: 1, fields: 10, fieldSize: 1000, parts: 11, headerPairs: 50 }, throwFileSizeLimit: true })
}

/**
 * The one file of a form upload, in its part `file` (plone.restapi's name),
 * handed to `take` as it arrives; 400 for a file in another part, or none.
 */
export async function takeUploadedFile<T> (request: FastifyRequest, take: (part: MultipartFile) => Promise<T>): Promise<T> {
  let taken: { value: T } | undefined
  for await (const part of request.parts()) {
    if (part.type !== 'file') continue
    if (part.fieldname !== 'file' || taken !== undefined) {
      part.file.resume()
      throw BadRequest('The upload takes one file, in its part \'file\'.')
    }
    taken = { value: await take(part) }
  }
  if (taken === undefined) throw BadRequest('No file uploaded: the file goes in the part \'file\'.')
  return taken.value
}
