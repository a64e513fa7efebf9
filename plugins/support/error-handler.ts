import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { STATUS_CODES } from 'node:http'
import type { Duplex } from 'node:stream'
import { DatabaseUnavailable } from '../../core/db/faults.js'
import {
  ApiError, Conflict, BadRequest, InternalServerError, MalformedUrl, NotFound, PayloadTooLarge, ServiceUnavailable, UnsupportedMediaType, ValidationFailed,
  errorForStatus, quote, sentence, type FieldError
} from '../../core/errors.js'
import { addressOf } from './url.js'

type SchemaError = NonNullable<FastifyError['validation']>[number]

/** One of Ajv's errors in plain words, as core/validation.ts words its own. */
function fieldError (v: SchemaError, context: string | undefined): FieldError {
  const params = v.params as { missingProperty?: string, additionalProperty?: string, allowedValues?: unknown[] }
  const field = params.missingProperty ?? params.additionalProperty ?? v.instancePath.split('/').filter(Boolean)[0]
  let message: string
  if (params.missingProperty !== undefined) message = 'Required input is missing.'
  else if (params.additionalProperty !== undefined) message = `Unknown field '${quote(params.additionalProperty)}'.`
  else if (params.allowedValues !== undefined) message = `Must be one of ${params.allowedValues.map(a => `'${String(a)}'`).join(', ')}.`
  else if (field === undefined && context === 'body' && v.keyword === 'type') message = 'The request body must be a JSON object.'
  else message = sentence(v.message ?? 'invalid value')
  return { ...(field !== undefined ? { field } : {}), message, error: 'ValidationError' }
}

/** Fastify's own request errors, translated into the contract's types. */
function fromFastify (err: FastifyError, request: FastifyRequest): ApiError | null {
  if (err.validation !== undefined) {
    // Ajv may report one problem several times (once per item of a list): list it once. By key, in
    // one pass: a body of ten thousand unknown keys is ten thousand problems (comparing each with
    // every other held the process for seconds).
    const unique = new Map(err.validation.map(v => fieldError(v, err.validationContext)).map(e => [`${e.field ?? ''}\0${e.message}`, e]))
    return ValidationFailed([...unique.values()])
  }
  switch (err.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return UnsupportedMediaType()
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return PayloadTooLarge(`The request body is larger than this route accepts: at most ${request.routeOptions.bodyLimit ?? 'the configured'} bytes (BODY_LIMIT and IMAGE_MAX_BYTES set them).`)
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return BadRequest('The request body is not valid JSON.')
    // PostgreSQL's unique_violation: two writers raced for one name; the loser is told so.
    case '23505':
      return Conflict('Someone else just wrote the same name; read the current state and try again.')
    // character_not_in_repertoire, untranslatable_character: text PostgreSQL cannot store
    // (NUL). Input is checked before it gets here; this keeps a check that was missed a 400.
    case '22021':
    case '22P05':
      return BadRequest('The request contains text that cannot be stored (a NUL character or invalid Unicode).')
  }
  // Fastify's other request errors (a wrong Content-Length, a malformed URL)
  // carry a client status and a message meant for the client.
  if (typeof err.statusCode === 'number' && err.statusCode >= 400 && err.statusCode < 500) return errorForStatus(err.statusCode, err.message)
  return null
}

/**
 * When to ask again after the database connection failed (s): the pool opens
 * a new connection at once when PostgreSQL ended one, and a server that
 * restarts or fails over is back within seconds.
 */
const DATABASE_RETRY_AFTER_SECONDS = 2
/** Reading again is always safe. */
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS'])

/** A request whose database connection failed: whether the client may simply send it again. */
function unavailable (err: DatabaseUnavailable, method: string): ApiError {
  const what = `The database connection failed (${err.reason})`
  let advice = 'nothing was changed. Try again.'
  if (!SAFE_METHODS.has(method) && err.mayHaveCommitted) {
    advice = 'the change may or may not have been saved. Read the current state before trying again.'
  }
  return ServiceUnavailable(`${what}; ${advice}`, DATABASE_RETRY_AFTER_SECONDS)
}

/** Answers every error in the one shape; 500s never reveal their internals. */
export function installErrorHandling (fastify: FastifyInstance): void {
  fastify.setErrorHandler((err: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    let apiError = err instanceof ApiError ? err : err instanceof DatabaseUnavailable ? unavailable(err, request.method) : fromFastify(err, request)
    if (apiError === null) {
      request.log.error({ err }, 'request failed')
      apiError = InternalServerError(request.id)
    }
    if (apiError.headers !== undefined) void reply.headers(apiError.headers)
    return reply.code(apiError.statusCode).type('application/json').send(apiError.toBody())
  })

  fastify.setNotFoundHandler((request, reply) => {
    const error = NotFound(request.absoluteUrl(addressOf(request.raw).originalUrl))
    return reply.code(404).type('application/json').send(error.toBody())
  })
}

/**
 * Fastify's errors raised before routing — a URL that is not valid
 * percent-encoding, a path parameter over the length limit — in the contract's shape.
 */
export function frameworkErrors (error: FastifyError, _request: FastifyRequest, reply: FastifyReply): void {
  const apiError = error.code === 'FST_ERR_BAD_URL' ? MalformedUrl() : errorForStatus(error.statusCode ?? 400, sentence(error.message))
  void reply.code(apiError.statusCode).type('application/json').send(apiError.toBody())
}

/**
 * Requests that are not HTTP at all (raw non-ASCII bytes in the path, broken
 * headers), refused by Node's parser before Fastify sees a request: answered
 * on the socket in the contract's shape, with Node's statuses (408 on a
 * timeout, 431 for oversized headers, else 400). No helmet here, so the
 * header that matters for a JSON error is written by hand.
 */
export function clientErrorHandler (err: NodeJS.ErrnoException, socket: Duplex): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return
  const [status, message] = err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
    ? [408, 'The request did not arrive in time.']
    : err.code === 'HPE_HEADER_OVERFLOW'
      ? [431, 'The request headers are larger than the server accepts.']
      : [400, 'The request is not valid HTTP (for instance, bytes that are not allowed in a URL).']
  if (socket.writable) {
    const body = JSON.stringify(errorForStatus(status, message).toBody())
    socket.write(`HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}\r\nContent-Type: application/json\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nX-Content-Type-Options: nosniff\r\nConnection: close\r\n\r\n${body}`)
  }
  socket.destroy(err)
}
