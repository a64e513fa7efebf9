import { isDeepStrictEqual } from 'node:util'
import type { Field, StoredQuery } from './declaration.js'
import { PayloadTooLarge, ValidationFailed, quote, type FieldError } from '../errors.js'
import { mediaType, type BinaryStore } from './blobs.js'
import { linksOf, linksOfHtml, mapBlocks, mapHtmlLinks } from './links.js'
import { imageDigest, type ImageMeta } from './image/scales.js'
import { NotAnImage, checkImageStructure } from './image/structure.js'
import type { ContentType } from './registry.js'
import { Pacer } from '../pacing.js'
import { blocksProblem } from './blocks.js'
import { markupProblem, textLength, toRichText } from './richtext.js'

/**
 * Keys a client may send back from what it read: ignored on writes (docs/api.md, "Decisions"),
 * like every key that starts with `@`. `selected` is Volto's own: its edit form of the home page
 * sends the block it had selected.
 */
const READ_ONLY_KEYS = new Set([
  'UID', 'created', 'modified', 'review_state', 'creators', 'contributors', 'is_folderish', 'parent', 'layout',
  'items', 'items_total', 'batching', 'type_title', 'lock', 'version', 'language', 'allow_discussion', 'exclude_from_nav',
  'previous_item', 'next_item', 'rights', 'changeNote', 'versioning_enabled', 'working_copy', 'working_copy_of', 'relatedItems',
  'selected'
])

/**
 * The bytes of an image or file field, kept apart from the object's data
 * (core/content/blobs.ts says where): in hand, or, for a file that came by a
 * resumable upload, already in that upload's large object. `upload`: the
 * upload they came from, ended by the write (core/content/uploads.ts).
 */
export type BinaryUpload = { bytes: Buffer, store: BinaryStore, upload?: string } | { store: 'files', upload: string }

/** A file received before its write, by a resumable upload that the write ends (core/content/uploads.ts). */
export interface ReceivedFile {
  upload: string
  filename: string | null
  contentType: string
  size: number
  /** Its bytes, read whole: only for an image field, whose bytes are checked and kept whole. */
  bytes: () => Promise<Buffer>
}

/** A checked write: the values to store (`null` clears) and the binaries to keep apart. */
export interface CheckedWrite {
  values: Record<string, unknown>
  binaries: Map<string, BinaryUpload>
  /** An explicit `id` (create only). */
  id?: string
}

export interface WriteContext {
  mode: 'create' | 'update'
  /** Stored data (update), for invariants across fields. */
  stored: Record<string, unknown>
  /** Current tokens of a vocabulary. */
  tokens: (vocabulary: string) => Promise<string[]>
  imageMaxBytes: number
  /** The largest file a body may carry (decoded). */
  fileMaxBytes: number
  /** Paces the checks of one request (a bulk import's items share it): rich text and images are read a field at a time, yielding between. */
  pacer?: Pacer
  /** How links are kept: those to objects of the site by UID, by link (core/content/links.ts, `keptLinks`). */
  keepLinks?: (links: string[]) => Promise<ReadonlyMap<string, string>>
  /** Why a query an object stores (its type's `storedQuery`) could not run, as a search would refuse it; null when it runs. */
  queryProblem?: (stored: StoredQuery) => string | null
  /** Files the write takes besides its body, by field (a resumable upload's end): as if the body carried them. */
  received?: ReadonlyMap<string, ReceivedFile>
}

const fieldError = (field: string, message: string): FieldError => ({ field, message, error: 'ValidationError' })

/** TypeBox's messages, as sentences. */
function sentence (message: string): string {
  const text = message.replace(/^must /, 'Must ')
  return text.endsWith('.') ? text : `${text}.`
}

/**
 * Checks that an upload is a whole image of an accepted format (its declared
 * content type is not trusted: the bytes decide) and describes it.
 */
async function checkImage (name: string, bytes: Buffer, filename: string | null, maxBytes: number, errors: FieldError[], pacer?: Pacer): Promise<{ bytes: Buffer, meta: ImageMeta } | null> {
  if (bytes.length > maxBytes) throw PayloadTooLarge(`The image '${name}' is ${bytes.length} bytes; at most ${maxBytes} are accepted.`)
  try {
    const { contentType, width, height } = await checkImageStructure(bytes, pacer)
    return { bytes, meta: { filename, 'content-type': contentType, size: bytes.length, width, height, digest: imageDigest(bytes) } }
  } catch (err) {
    if (!(err instanceof NotAnImage)) throw err
    errors.push(fieldError(name, err.message))
    return null
  }
}

/** The date-time format admits year 0, which PostgreSQL (and Plone's DateTime) do not. */
function storableDate (value: string): boolean {
  const year = new Date(value).getUTCFullYear()
  return year >= 1 && year <= 9999
}

const INTEGER_TEXT = /^\s*[+-]?\d{1,15}\s*$/
const NUMBER_TEXT = /^\s*[+-]?(?:\d{1,15}(?:\.\d{0,15})?|\.\d{1,15})(?:[eE][+-]?\d{1,2})?\s*$/

/**
 * A number field's value sent as its text (Volto's number widget sends what
 * was typed, a string), read as plone.restapi reads it (zope.schema's
 * `fromUnicode`: `int()`, `float()`), then checked as any number; other text
 * is left for the schema to refuse.
 */
function numberFromText (field: Field, value: unknown): unknown {
  if (typeof value !== 'string') return value
  if (field.type === 'integer' && INTEGER_TEXT.test(value)) return Number(value)
  if (field.type === 'number' && NUMBER_TEXT.test(value)) return Number(value)
  return value
}

/** What a file field stores of its upload, however it came: the declared type only if it is a type/subtype token. */
const fileValue = (filename: string | null, declaredType: unknown, size: number): Record<string, unknown> =>
  ({ filename, 'content-type': mediaType(declaredType), size })

/** The form a GET gives an image or a file (`download`, no `data`): sent back, it changes nothing. */
function isBinaryAsRead (field: Field, value: unknown): boolean {
  return (field.kind === 'image' || field.kind === 'file') && typeof value === 'object' && value !== null && !('data' in value) && 'download' in value
}

/** Normalises one field value after its schema check; pushes errors. */
async function normalise (name: string, field: Field, value: unknown, ctx: WriteContext, errors: FieldError[], binaries: Map<string, BinaryUpload>): Promise<unknown> {
  if (field.kind === 'richtext') {
    const raw = value as string | { data: string, 'content-type'?: string }
    const mime = typeof raw === 'string' ? 'text/html' : raw['content-type'] ?? 'text/html'
    if (mime !== 'text/html' && mime !== 'text/plain') {
      errors.push(fieldError(name, `Content type '${quote(mime)}' is not accepted; use text/html or text/plain.`))
      return undefined
    }
    const problem = markupProblem(typeof raw === 'string' ? raw : raw.data, field.maxTextLength)
    if (problem !== null) {
      errors.push(fieldError(name, problem))
      return undefined
    }
    let rich = toRichText(raw)
    if (ctx.keepLinks !== undefined) {
      const kept = await ctx.keepLinks(linksOfHtml(rich.data))
      if (kept.size > 0) rich = { ...rich, data: mapHtmlLinks(rich.data, link => kept.get(link) ?? link) }
    }
    const length = textLength(rich.data)
    if (field.maxTextLength !== undefined && length > field.maxTextLength) {
      errors.push(fieldError(name, `Text is too long: ${length} characters; at most ${field.maxTextLength} are allowed.`))
    }
    return rich
  }
  if (field.kind === 'blocks') {
    const problem = blocksProblem(value as Record<string, unknown>)
    if (problem !== null) {
      errors.push(fieldError(name, problem))
      return undefined
    }
    const blocks = value as Record<string, unknown>
    if (ctx.keepLinks === undefined) return blocks
    const kept = await ctx.keepLinks(linksOf(blocks))
    return kept.size === 0 ? blocks : mapBlocks(blocks, link => kept.get(link) ?? link)
  }
  if (field.kind === 'file') {
    const file = value as { data: string, filename?: string, 'content-type'?: string }
    const bytes = Buffer.from(file.data, 'base64')
    if (bytes.length > ctx.fileMaxBytes) throw PayloadTooLarge(`The file '${name}' is ${bytes.length} bytes; at most ${ctx.fileMaxBytes} are accepted.`)
    binaries.set(name, { bytes, store: 'files' })
    return fileValue(file.filename ?? null, file['content-type'], bytes.length)
  }
  if (field.kind === 'image') {
    const image = value as { data: string, filename?: string }
    const upload = await checkImage(name, Buffer.from(image.data, 'base64'), image.filename ?? null, ctx.imageMaxBytes, errors, ctx.pacer)
    if (upload !== null) binaries.set(name, { bytes: upload.bytes, store: 'blobs' })
    return upload?.meta
  }
  if (field.vocabulary !== undefined) {
    const tokens = await ctx.tokens(field.vocabulary)
    const values = Array.isArray(value) ? [...new Set(value as string[])] : [value as string]
    // A term taken out of an editable vocabulary stays valid where it is stored, so a client can send back what it read.
    const stored = [ctx.stored[name]].flat()
    const wrong = values.filter(v => !tokens.includes(v) && !stored.includes(v))
    if (wrong.length > 0) {
      errors.push(fieldError(name, `${wrong.map(w => `'${quote(w)}'`).join(', ')} is not one of ${tokens.map(t => `'${t}'`).join(', ')}.`))
    }
    return Array.isArray(value) ? values : value
  }
  if (field.format === 'date-time' && !storableDate(value as string)) {
    errors.push(fieldError(name, `Invalid date: ${String(value)} (years 1 to 9999).`))
    return undefined
  }
  if (typeof value === 'string' && field.type === 'string' && field.format === undefined) {
    const trimmed = value.trim()
    if (name === 'title' && trimmed === '') errors.push(fieldError(name, 'Required input is missing.'))
    return trimmed
  }
  return value
}

/** A received file as the value of its field (`field`: the field the upload names, if the type has it); pushes errors. */
async function receive (name: string, field: Field | undefined, file: ReceivedFile, ctx: WriteContext, errors: FieldError[], binaries: Map<string, BinaryUpload>): Promise<unknown> {
  if (field?.kind === 'file') {
    binaries.set(name, { store: 'files', upload: file.upload })
    return fileValue(file.filename, file.contentType, file.size)
  }
  if (field?.kind === 'image') {
    const image = await checkImage(name, await file.bytes(), file.filename, ctx.imageMaxBytes, errors, ctx.pacer)
    if (image !== null) binaries.set(name, { bytes: image.bytes, store: 'blobs', upload: file.upload })
    return image?.meta
  }
  errors.push(fieldError(name, `'${quote(name)}' is not a file or image field.`))
  return undefined
}

/** An id an object may have: 1 to 255 letters, digits, dots, dashes or underscores, not starting with `++`. */
export const isValidId = (value: unknown): value is string => typeof value === 'string' && /^[a-z0-9][a-z0-9._-]{0,254}$/i.test(value) && !value.startsWith('++')

/**
 * Checks a create or update body against a content type: unknown keys, each
 * field's schema, vocabularies, rich-text and image rules, required fields and
 * the type's invariants. Every problem is reported at once.
 */
export async function checkWrite (type: ContentType, body: unknown, ctx: WriteContext): Promise<CheckedWrite> {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw ValidationFailed([{ message: 'The request body must be a JSON object.', error: 'ValidationError' }])
  }
  const errors: FieldError[] = []
  const values: Record<string, unknown> = {}
  const binaries = new Map<string, BinaryUpload>()
  let id: string | undefined
  const pacer = ctx.pacer ?? new Pacer()
  const paced = { ...ctx, pacer }
  for (const [key, value] of Object.entries(body)) {
    await pacer.pace()
    if (key.startsWith('@') || READ_ONLY_KEYS.has(key)) continue
    if (key === 'id') {
      if (ctx.mode === 'update') continue
      if (!isValidId(value)) {
        errors.push(fieldError('id', 'An id is 1 to 255 letters, digits, dots, dashes or underscores.'))
      } else id = value
      continue
    }
    const field = type.fields.get(key)
    if (field === undefined) {
      errors.push(fieldError(key, `Unknown field '${quote(key)}' for type '${type.name}'.`))
      continue
    }
    if (isBinaryAsRead(field, value)) continue
    if (value === null) {
      if (type.required.has(key)) errors.push(fieldError(key, `${key} is a required field. Setting it to null is not allowed.`))
      else values[key] = null
      continue
    }
    // Far longer than its field allows: refused as the schema would, before a pattern or a format reads megabytes,
    // or its error report walks every item of a list (TypeBox's Errors: 200,000 tags held the event loop 0.7 s).
    const { maxLength, maxItems } = field as { maxLength?: number, maxItems?: number }
    if (typeof value === 'string' && maxLength !== undefined && value.length > 2 * maxLength) {
      errors.push(fieldError(key, `Must not have more than ${maxLength} characters.`))
      continue
    }
    if (Array.isArray(value) && maxItems !== undefined && value.length > maxItems) {
      errors.push(fieldError(key, `Must not have more than ${maxItems} items.`))
      continue
    }
    const validator = type.validators.get(key)!
    const typed = numberFromText(field, value)
    if (!validator.Check(typed)) {
      const first = validator.Errors(typed)[0]
      errors.push(fieldError(key, sentence(first?.message ?? 'Invalid value')))
      continue
    }
    const normalised = await normalise(key, field, typed, paced, errors, binaries)
    if (normalised !== undefined) values[key] = normalised
  }
  for (const [name, file] of ctx.received ?? []) {
    const normalised = await receive(name, type.fields.get(name), file, ctx, errors, binaries)
    if (normalised !== undefined) values[name] = normalised
  }
  if (ctx.mode === 'create') {
    for (const name of type.required) {
      if (!Object.hasOwn(body, name) && ctx.received?.has(name) !== true && !errors.some(e => e.field === name)) errors.push(fieldError(name, 'Required input is missing.'))
    }
  }
  // Invariants see the valid part of the write, so that every problem is reported at once;
  // a field that already has an error is not blamed twice.
  const merged: Record<string, unknown> = { ...ctx.stored, ...values }
  for (const invariant of type.invariants) {
    errors.push(...invariant(merged).filter(e => !errors.some(known => known.field !== undefined && known.field === e.field)))
  }
  const { storedQuery } = type.declaration
  if (storedQuery !== undefined && ctx.queryProblem !== undefined && errors.length === 0) {
    const problem = ctx.queryProblem(storedQuery(merged))
    if (problem !== null) errors.push({ message: `The stored query cannot run: ${problem}`, error: 'ValidationError' })
  }
  if (errors.length > 0) throw ValidationFailed(errors)
  return { values, binaries, ...(id !== undefined ? { id } : {}) }
}

/** The fields whose value the write changes, compared with what is stored. */
export function changedFields (values: Record<string, unknown>, stored: Record<string, unknown>): string[] {
  return Object.keys(values).filter(k => !isDeepStrictEqual(values[k] ?? null, stored[k] ?? null))
}
