import { BadRequest, ValidationFailed, type FieldError } from '../errors.js'

/**
 * Keys that reach an object's prototype instead of the object when they are
 * assigned (`obj['__proto__'] = …`) or looked up (`obj['constructor']`). No
 * name of this API is one of them, so wherever a key comes from outside (a
 * query parameter, a JSON body, a settings file) they are refused outright.
 */
const PROTOTYPE_KEYS = new Set(['__proto__', 'constructor', 'prototype'])

export const isPrototypeKey = (key: string): boolean => PROTOTYPE_KEYS.has(key)

/**
 * PostgreSQL's text and jsonb cannot hold NUL, and a lone UTF-16 surrogate is
 * not a character at all (jsonb refuses its escape): text with either is
 * refused at the edge, with the field named, rather than failing in the database.
 */
export function badTextReason (text: string): string | null {
  if (text.includes('\0')) return 'contains a NUL character'
  if (!text.isWellFormed()) return 'contains a lone surrogate (not valid Unicode)'
  return null
}

/**
 * JSON bodies of this API are shallow (a rich-text value is two levels deep);
 * the limit keeps a body of a million nested arrays from costing more than
 * its parse, and the walk below from needing a stack as deep as the input.
 */
export const MAX_JSON_DEPTH = 32

/**
 * Every problem of a parsed JSON document that no handler should meet:
 * prototype keys, keys and strings that are not storable text, nesting
 * deeper than MAX_JSON_DEPTH. Each names the top-level field it is under.
 * `at`: where the document lies in a larger one that is checked a part at
 * a time (core/security/json-body.ts): its top-level field and its depth.
 */
export function untrustedJsonProblems (document: unknown, at: { field?: string, depth?: number } = {}): FieldError[] {
  const problems: FieldError[] = []
  const report = (field: string | undefined, message: string): void => {
    if (problems.length < 20) problems.push({ ...(field !== undefined ? { field } : {}), message, error: 'ValidationError' })
  }
  // Iterative: the depth is checked before anything is pushed, so the stack stays bounded.
  const stack: Array<{ value: unknown, field: string | undefined, depth: number }> = [{ value: document, field: at.field, depth: at.depth ?? 0 }]
  while (stack.length > 0) {
    const { value, field, depth } = stack.pop()!
    if (typeof value === 'string') {
      const reason = badTextReason(value)
      if (reason !== null) report(field, `The text ${reason}.`)
      continue
    }
    if (typeof value !== 'object' || value === null) continue
    if (depth >= MAX_JSON_DEPTH) { report(field, `The value is nested deeper than ${MAX_JSON_DEPTH} levels.`); continue }
    if (Array.isArray(value)) {
      for (const item of value) stack.push({ value: item, field, depth: depth + 1 })
      continue
    }
    for (const [key, item] of Object.entries(value)) {
      const at = field ?? key
      const reason = badTextReason(key)
      if (isPrototypeKey(key)) report(at, `The key '${key}' is not allowed.`)
      else if (reason !== null) report(at, `A key ${reason}.`)
      else stack.push({ value: item, field: at, depth: depth + 1 })
    }
  }
  return problems
}

/** Refuses (400, every problem listed) a parsed JSON document with any of the problems above. */
export function assertTrustworthyJson (document: unknown): void {
  const problems = untrustedJsonProblems(document)
  if (problems.length > 0) throw ValidationFailed(problems)
}

/** Refuses a query parameter's name that would reach a prototype (400). */
export function assertPlainName (name: string, parameter: string): void {
  if (isPrototypeKey(name)) throw BadRequest(`The query parameter '${parameter}' is not allowed: '${name}' is not a name this API knows.`)
}
