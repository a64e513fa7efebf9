import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import {
  ApiError, Conflict, BadRequest, InternalServerError, NotFound, PayloadTooLarge, UnsupportedMediaType, ValidationFailed,
  errorForStatus, sentence, type FieldError
} from './errors.js'
import { addressOf } from './url.js'

type SchemaError = NonNullable<FastifyError['validation']>[number]

/** One of Ajv's errors in plain words, as core/validation.ts words its own. */
function fieldError (v: SchemaError, context: string | undefined): FieldError {
  const params = v.params as { missingProperty?: string, additionalProperty?: string, allowedValues?: unknown[] }
  const field = params.missingProperty ?? params.additionalProperty ?? v.instancePath.split('/').filter(Boolean)[0]
  let message: string
  if (params.missingProperty !== undefined) message = 'Required input is missing.'
  else if (params.additionalProperty !== undefined) message = `Unknown field '${params.additionalProperty}'.`
  else if (params.allowedValues !== undefined) message = `Must be one of ${params.allowedValues.map(a => `'${String(a)}'`).join(', ')}.`
  else if (field === undefined && context === 'body' && v.keyword === 'type') message = 'The request body must be a JSON object.'
  else message = sentence(v.message ?? 'invalid value')
  return { ...(field !== undefined ? { field } : {}), message, error: 'ValidationError' }
}

/** Fastify's own request errors, translated into the contract's types. */
function fromFastify (err: FastifyError): ApiError | null {
  if (err.validation !== undefined) {
    const errors = err.validation.map(v => fieldError(v, err.validationContext))
    // Ajv may report one problem several times (once per item of a list): list it once.
    return ValidationFailed(errors.filter((e, i) => errors.findIndex(o => o.field === e.field && o.message === e.message) === i))
  }
  switch (err.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return UnsupportedMediaType()
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return PayloadTooLarge('The request body is larger than the configured limit (BODY_LIMIT).')
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return BadRequest('The request body is not valid JSON.')
    // PostgreSQL's unique_violation: two writers raced for one name; the loser is told so.
    case '23505':
      return Conflict('Someone else just wrote the same name; read the current state and try again.')
  }
  // Fastify's other request errors (a wrong Content-Length, a malformed URL)
  // carry a client status and a message meant for the client.
  if (typeof err.statusCode === 'number' && err.statusCode >= 400 && err.statusCode < 500) return errorForStatus(err.statusCode, err.message)
  return null
}

/** Answers every error in the one shape; 500s never reveal their internals. */
export function installErrorHandling (fastify: FastifyInstance): void {
  fastify.setErrorHandler((err: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    let apiError = err instanceof ApiError ? err : fromFastify(err)
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
