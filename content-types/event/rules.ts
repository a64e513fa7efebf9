import type { Invariant } from '../../core/content/declaration.js'
import type { FieldError } from '../../core/errors.js'

/** An Event has a start and, unless it is open ended, an end (plone.app.event requires both; the talk's are optional). */
export const startAndEndGiven: Invariant = data => {
  const missing = (name: string): boolean => typeof data[name] !== 'string' || data[name] === ''
  const required = (field: string): FieldError => ({ field, message: 'Required input is missing.', error: 'ValidationError' })
  return [...missing('start') ? [required('start')] : [], ...missing('end') && data.open_end !== true ? [required('end')] : []]
}
