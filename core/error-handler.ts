import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import {
  ApiError, BadRequest, InternalServerError, NotFound, PayloadTooLarge, UnsupportedMediaType, ValidationFailed,
  type FieldError
} from './errors.js'
import { addressOf } from './url.js'

/** Fastify's own request errors, translated into the contract's types. */
function fromFastify (err: FastifyError): ApiError | null {
  if (err.validation !== undefined) {
    const errors: FieldError[] = err.validation.map(v => {
      const missing = (v.params as { missingProperty?: string } | undefined)?.missingProperty
      const extra = (v.params as { additionalProperty?: string } | undefined)?.additionalProperty
      const field = missing ?? extra ?? (v.instancePath ?? '').split('/').filter(Boolean)[0]
      const message = missing !== undefined
        ? 'Required input is missing.'
        : extra !== undefined ? `Unknown field '${extra}'.` : (v.message ?? 'Invalid value.')
      return { ...(field !== undefined ? { field } : {}), message, error: 'ValidationError' as const }
    })
    return ValidationFailed(errors)
  }
  switch (err.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return UnsupportedMediaType()
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return PayloadTooLarge('The request body is larger than the configured limit (BODY_LIMIT).')
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return BadRequest('The request body is empty; send a JSON object.')
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return BadRequest(`The request body is not valid JSON: ${err.message}`)
  }
  if (err instanceof SyntaxError) return BadRequest(`The request body is not valid JSON: ${err.message}`)
  return null
}

/** Answers every error in the one shape; 500s never reveal their internals. */
export function installErrorHandling (fastify: FastifyInstance): void {
  fastify.setErrorHandler((err: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    let apiError = err instanceof ApiError ? err : fromFastify(err)
    if (apiError === null) {
      if (typeof err.statusCode === 'number' && err.statusCode >= 400 && err.statusCode < 500) {
        apiError = new ApiError(err.statusCode, 'BadRequest', err.message)
      } else {
        request.log.error({ err }, 'request failed')
        apiError = InternalServerError(request.id)
      }
    }
    if (apiError.headers !== undefined) void reply.headers(apiError.headers)
    return reply.code(apiError.statusCode).type('application/json').send(apiError.toBody())
  })

  fastify.setNotFoundHandler((request, reply) => {
    const error = NotFound(request.absoluteUrl(addressOf(request.raw).originalUrl))
    return reply.code(404).type('application/json').send(error.toBody())
  })
}
