/**
 * Every error the API can answer with is declared here, once: its HTTP status
 * and its `type`. The body shape is the contract's (docs/api.md, "Errors"):
 * `{type, message, errors?, context?}`. docs/api.md lists them.
 */

import { STATUS_CODES } from 'node:http'

export interface FieldError {
  field?: string
  message: string
  error: 'ValidationError'
}

/** A line of an uploaded CSV file that cannot be taken (plone.restapi's `csv_errors` of `@aliases`). */
export interface CsvLineError { line_number: number, line: string, message: string }

export interface ErrorBody {
  type: string
  message: string
  errors?: FieldError[]
  context?: string
  csv_errors?: CsvLineError[]
}

export class ApiError extends Error {
  readonly statusCode: number
  readonly type: string
  readonly errors?: FieldError[]
  context?: string
  readonly headers?: Record<string, string>
  readonly csvErrors?: CsvLineError[]

  constructor (statusCode: number, type: string, message: string, extra: { errors?: FieldError[], context?: string, headers?: Record<string, string>, csvErrors?: CsvLineError[] } = {}) {
    // A 4xx is the caller's doing: its stack is never logged, and capturing one cost more than the
    // rest of a 401's work (1.4 % of the service's time under a crowd of GETs, a third of them 401).
    const stackTraceLimit = Error.stackTraceLimit
    if (statusCode < 500) Error.stackTraceLimit = 0
    try {
      super(message)
    } finally {
      Error.stackTraceLimit = stackTraceLimit
    }
    this.statusCode = statusCode
    this.type = type
    this.errors = extra.errors
    this.context = extra.context
    this.headers = extra.headers
    this.csvErrors = extra.csvErrors
  }

  /** The body of the answer, its texts cut to a readable length (`quote`: whatever a message quotes of the request). */
  toBody (): ErrorBody {
    const body: ErrorBody = { type: this.type, message: quote(this.message, MAX_MESSAGE) }
    if (this.errors !== undefined) {
      body.errors = this.errors.map(e => ({ ...e, ...(e.field !== undefined ? { field: quote(e.field) } : {}), message: quote(e.message, MAX_MESSAGE) }))
    }
    if (this.context !== undefined) body.context = this.context
    if (this.csvErrors !== undefined) body.csv_errors = this.csvErrors.map(e => ({ ...e, line: quote(e.line), message: quote(e.message, MAX_MESSAGE) }))
    return body
  }
}

/** Characters of a value (or a key) a message quotes at most. */
const MAX_QUOTED = 100
/** Characters of a message an answer gives at most (a summary of many field errors). */
const MAX_MESSAGE = 2000
/** Field errors an answer lists at most (a body of ten thousand unknown keys is ten thousand problems). */
const MAX_FIELD_ERRORS = 100

/**
 * What a message quotes of the request ("'…' is not one of …", "Unknown field
 * '…'"), cut to `max` characters: a value of megabytes is neither sent back
 * (twice, in the message and in `errors`) nor copied and searched on its way
 * into a sentence.
 */
export const quote = (text: string, max = MAX_QUOTED): string => text.length > max ? `${text.slice(0, max)}… (${text.length - max} more characters)` : text

/** A sentence: capitalised, with a full stop (Ajv writes "must match format \"email\""). */
export const sentence = (text: string): string => text.charAt(0).toUpperCase() + text.slice(1) + (/[.!?]$/.test(text) ? '' : '.')

/** Joins field errors into plain sentences for `message`: "title: Required input is missing. email: …". */
function summarise (errors: FieldError[]): string {
  return errors.map(e => e.field !== undefined ? `${e.field}: ${sentence(e.message)}` : sentence(e.message)).join(' ')
}

/** An error for a client status that has no factory of its own; its type is the status's name (`413` → `PayloadTooLarge`). */
export const errorForStatus = (statusCode: number, message: string): ApiError =>
  new ApiError(statusCode, (STATUS_CODES[statusCode] ?? 'Bad Request').replace(/[^A-Za-z]/g, ''), message)

export const BadRequest = (message: string): ApiError => new ApiError(400, 'BadRequest', message)
export const MalformedUrl = (): ApiError => BadRequest('The URL is not valid: a percent sign must start a valid UTF-8 escape (%XX).')
/** A validation failure; a body of ten thousand problems lists (and words) the first MAX_FIELD_ERRORS. */
export function ValidationFailed (errors: FieldError[]): ApiError {
  const listed = errors.slice(0, MAX_FIELD_ERRORS)
  const more = errors.length - listed.length
  return new ApiError(400, 'BadRequest', `Invalid input. ${summarise(listed)}${more > 0 ? ` And ${more} more.` : ''}`, { errors: listed })
}
export const ExpiredSignature = (): ApiError =>
  new ApiError(400, 'ExpiredSignatureError', 'Signature has expired. Log in again to get a new token.')
export const WorkflowException = (message: string): ApiError => new ApiError(400, 'WorkflowException', message)
export const Unauthorized = (message = 'You are not authorized to access this resource.'): ApiError =>
  new ApiError(401, 'Unauthorized', message, { headers: { 'www-authenticate': 'Bearer realm="api"' } })
export const Forbidden = (message: string): ApiError => new ApiError(403, 'Forbidden', message)
export const NotFound = (url: string, message = `Resource not found: ${url}`): ApiError => new ApiError(404, 'NotFound', message)
export const MethodNotAllowed = (message: string): ApiError => new ApiError(405, 'MethodNotAllowed', message)
export const NotAcceptable = (): ApiError =>
  new ApiError(406, 'NotAcceptable', 'This service answers in JSON: send Accept: application/json or use the ++api++ path.')
export const Conflict = (message: string): ApiError => new ApiError(409, 'Conflict', message)
/** A request whose protocol version the server does not speak (TUS's `Tus-Resumable`). */
export const PreconditionFailed = (message: string): ApiError => new ApiError(412, 'PreconditionFailed', message)
export const PayloadTooLarge = (message: string): ApiError => new ApiError(413, 'PayloadTooLarge', message)
/** A `Range` no byte of the file lies in; `Content-Range` says how long it is (RFC 9110). */
export const RangeNotSatisfiable = (size: number): ApiError =>
  new ApiError(416, 'RangeNotSatisfiable', `No byte of the range asked lies in the file (${size} bytes).`, { headers: { 'content-range': `bytes */${size}` } })
export const UnsupportedMediaType = (message = 'Request bodies must be JSON (Content-Type: application/json).'): ApiError =>
  new ApiError(415, 'UnsupportedMediaType', message)
export const TooManyRequests = (retryAfterSeconds: number, message = `Too many failed logins. Try again in ${retryAfterSeconds} seconds.`): ApiError =>
  new ApiError(429, 'TooManyRequests', message, { headers: { 'retry-after': String(retryAfterSeconds) } })
export const InternalServerError = (requestId: string): ApiError =>
  new ApiError(500, 'InternalServerError', `An internal error occurred. Quote request id ${requestId} when reporting it.`)
export const ServiceUnavailable = (message: string, retryAfterSeconds?: number): ApiError =>
  new ApiError(503, 'ServiceUnavailable', message, retryAfterSeconds === undefined ? {} : { headers: { 'retry-after': String(retryAfterSeconds) } })
