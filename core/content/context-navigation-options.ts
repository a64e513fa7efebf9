import { BadRequest, quote } from '../errors.js'
import { parseInteger } from '../query/zope.js'
import { badTextReason } from '../security/untrusted-input.js'
import { SCALES } from './image/scales.js'

// The settings of plone.restapi's `@contextnavigation` as a query string gives them; the tree they
// ask for is context-navigation.ts's.

/**
 * plone.restapi's `@contextnavigation`: the classic navigation portlet of
 * Plone, its settings given as `expand.contextnavigation.<name>` parameters
 * (docs/api.md, "@contextnavigation", for what each does and what is
 * decided here).
 */
export interface ContextNavigationOptions {
  /** The portlet's title; '' for plone.restapi's "Navigation". */
  name: string
  /** A folder of the site the tree hangs from (a path relative to the site); null: the site root. */
  rootPath: string | null
  includeTop: boolean
  currentFolderOnly: boolean
  /** Levels below the root that the context must be under before a tree shows (0: from the root). */
  topLevel: number
  /** Levels the tree shows (0: all of them, here at most MAX_NAVIGATION_DEPTH; negative: none). */
  bottomLevel: number
  noIcons: boolean
  /** A scale of image thumbnails; '' for the site's (`icon`). */
  thumbScale: string
  noThumbs: boolean
}

/** Characters of `name` and `root_path` at most (a title and a path; Plone's TextLine, one line). */
const MAX_TEXT = 1000
const PREFIX = 'expand.contextnavigation.'

type Kind = 'text' | 'boolean' | 'integer' | 'scale'
/** INavigationPortlet's fields (plone.restapi), by name: a Map, so that a name like `toString` is unknown. */
const PARAMETERS = new Map<string, Kind>([
  ['name', 'text'], ['root_path', 'text'], ['includeTop', 'boolean'], ['currentFolderOnly', 'boolean'],
  ['topLevel', 'integer'], ['bottomLevel', 'integer'], ['no_icons', 'boolean'], ['thumb_scale', 'scale'], ['no_thumbs', 'boolean']
])
/** The names of the parameters, prefixed as clients send them (the route's documented query). */
export const CONTEXT_NAVIGATION_PARAMETERS: readonly string[] = [...PARAMETERS.keys()].map(name => PREFIX + name)

/** zope.schema's Bool.fromUnicode reads `True`, `true` and `on` as true and anything else as false; here the rest is false only when it says so. */
const TRUE = new Set(['True', 'true', 'on'])
const FALSE = new Set(['False', 'false', 'off', ''])
const SCALE_NAMES = new Set(SCALES.map(([name]) => name))

function parsed (kind: Kind, parameter: string, value: string): string | boolean | number {
  switch (kind) {
    case 'integer': return parseInteger(value, parameter)
    case 'boolean':
      if (TRUE.has(value)) return true
      if (FALSE.has(value)) return false
      throw BadRequest(`Invalid ${parameter}: '${quote(value)}' is not a boolean (true or false).`)
    case 'scale':
      if (value !== '' && !SCALE_NAMES.has(value)) throw BadRequest(`Invalid ${parameter}: '${quote(value)}' is not an image scale (${[...SCALE_NAMES].join(', ')}).`)
      return value
    case 'text':
      if (value.length > MAX_TEXT) throw BadRequest(`Invalid ${parameter}: longer than ${MAX_TEXT} characters.`)
      if (/[\r\n]/.test(value)) throw BadRequest(`Invalid ${parameter}: one line of text, without line breaks.`)
      return value
  }
}

/**
 * The portlet's settings from a query string (plone.restapi's
 * `expand.contextnavigation.<field>`, with INavigationPortlet's defaults):
 * 400 for a name the portlet does not have, a name given twice, and a value
 * its field cannot take.
 */
export function contextNavigationOptions (params: URLSearchParams): ContextNavigationOptions {
  const given = new Map<string, string | boolean | number>()
  for (const [key, value] of params) {
    if (!key.startsWith(PREFIX)) continue
    const name = key.slice(PREFIX.length)
    const kind = PARAMETERS.get(name)
    if (kind === undefined) throw BadRequest(`Unknown parameter '${quote(key)}': the navigation portlet takes ${CONTEXT_NAVIGATION_PARAMETERS.join(', ')}.`)
    if (given.has(name)) throw BadRequest(`The parameter '${key}' is given more than once.`)
    const bad = badTextReason(value)
    if (bad !== null) throw BadRequest(`Invalid ${key}: the text ${bad}.`)
    given.set(name, parsed(kind, key, value))
  }
  const option = <T extends string | boolean | number>(name: string, fallback: T): T => (given.get(name) as T | undefined) ?? fallback
  return {
    name: option('name', ''),
    rootPath: given.has('root_path') ? option('root_path', '') : null,
    includeTop: option('includeTop', false),
    currentFolderOnly: option('currentFolderOnly', false),
    topLevel: option('topLevel', 1),
    bottomLevel: option('bottomLevel', 0),
    noIcons: option('no_icons', false),
    thumbScale: option('thumb_scale', ''),
    noThumbs: option('no_thumbs', false)
  }
}
