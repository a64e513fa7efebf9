import { createHash } from 'node:crypto'
import type { ContentType, ContentTypeRegistry } from '../content/registry.js'
import { htmlToText, toRichText } from '../content/richtext.js'
import { isPrototypeKey } from '../security/untrusted-input.js'
import { isObject } from './format.js'

/**
 * An import's mapping file (docs/moving-a-plone-site.md, "Mapping"): types the
 * service lacks mapped onto its own (or to nothing: left out, reported), and
 * fields renamed per exported type (`*`: every type), or to nothing. The
 * target `blocks` of a rich text field makes the page's blocks of it (an old
 * Archetypes Document's `text`): a title block and an HTML block.
 */
export interface ImportMapping {
  types: Record<string, string | null>
  fields: Record<string, Record<string, string | null>>
}

export const NO_MAPPING: ImportMapping = { types: {}, fields: {} }

/** The largest mapping file read: a mapping names types and fields, it holds no content. */
export const MAX_MAPPING_BYTES = 1024 * 1024

/** A field's target that makes blocks of rich text. */
const BLOCKS = 'blocks'

/** An error of the mapping file: the import does not start. */
export class MappingProblem extends Error {}

/** A map of names read from the file: own keys only, none that reaches a prototype, each value a name or null. */
function names (value: unknown, where: string): Record<string, string | null> {
  if (!isObject(value)) throw new MappingProblem(`${where} must be an object of names.`)
  const result: Record<string, string | null> = Object.create(null)
  for (const [key, name] of Object.entries(value)) {
    if (isPrototypeKey(key) || key === '' || key.length > 200) throw new MappingProblem(`${where}: '${key.slice(0, 100)}' is not a name.`)
    if (name !== null && (typeof name !== 'string' || name === '' || name.length > 200)) throw new MappingProblem(`${where}.${key} must be a name or null.`)
    result[key] = name
  }
  return result
}

/**
 * The mapping file's JSON, checked against the service's types: every type it
 * maps onto exists, every renamed field exists on the types it can land on,
 * `blocks` only onto types with blocks. Throws a MappingProblem saying what is wrong.
 */
export function parseMapping (text: string, types: ContentTypeRegistry, typeNamed: (name: string) => ContentType | undefined): ImportMapping {
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch (err) {
    throw new MappingProblem(`The mapping file is not JSON: ${(err as Error).message}`)
  }
  if (!isObject(parsed)) throw new MappingProblem('The mapping file holds one JSON object: {"types": {…}, "fields": {…}}.')
  const unknown = Object.keys(parsed).filter(key => key !== 'types' && key !== 'fields')
  if (unknown.length > 0) throw new MappingProblem(`The mapping file has only "types" and "fields", not ${unknown.map(k => `"${k.slice(0, 50)}"`).join(', ')}.`)
  const mappedTypes = names(parsed.types ?? {}, 'types')
  for (const [from, to] of Object.entries(mappedTypes)) {
    if (to !== null && (typeNamed(to) === undefined || typeNamed(to) === types.siteRoot)) throw new MappingProblem(`types.${from}: the service has no content type '${to}'.`)
  }
  const fieldsByType = Object.create(null) as Record<string, Record<string, string | null>>
  const rawFields = parsed.fields ?? {}
  if (!isObject(rawFields)) throw new MappingProblem('fields must be an object: {"<type>": {"<field>": "<field here>"}}.')
  for (const [typeName, renames] of Object.entries(rawFields)) {
    if (isPrototypeKey(typeName)) throw new MappingProblem(`fields: '${typeName}' is not a type name.`)
    const checked = names(renames, `fields.${typeName.slice(0, 100)}`)
    // The types the fields land on: every type for '*', else the exported type as mapped (or found).
    const landing = typeName === '*'
      ? [...types.types.values()].filter(t => t !== types.siteRoot)
      : [typeNamed(mappedTypes[typeName] ?? typeName)].filter((t): t is ContentType => t !== undefined)
    for (const [field, to] of Object.entries(checked)) {
      if (to === null) continue
      if (to === BLOCKS ? !landing.every(t => t.fields.get(BLOCKS)?.kind === 'blocks') : !landing.some(t => t.fields.has(to))) {
        throw new MappingProblem(`fields.${typeName}.${field}: ${to === BLOCKS ? 'the type here has no blocks' : `no type it lands on has a field '${to}'`}.`)
      }
    }
    fieldsByType[typeName] = checked
  }
  return { types: mappedTypes, fields: fieldsByType }
}

/** The exported type's name as the mapping says: another type's, null (left out), or its own. */
export const mappedType = (mapping: ImportMapping, name: string): string | null => Object.hasOwn(mapping.types, name) ? mapping.types[name] : name

/** An exported field's name here as the mapping says (the exported type's renames first, then every type's), null: left out. */
export function mappedField (mapping: ImportMapping, typeName: string, field: string): string | null {
  for (const renames of [mapping.fields[typeName], mapping.fields['*']]) {
    if (renames !== undefined && Object.hasOwn(renames, field)) return renames[field]
  }
  return field
}

/** Whether a field mapped to `to` makes blocks of rich text. */
export const makesBlocks = (to: string): boolean => to === BLOCKS

/**
 * A page's blocks made of rich text (plone.volto's migration of a Document's
 * text does the same in spirit): a title block and an HTML block holding the
 * sanitised markup, whose text is searchable. Block ids derive from the
 * object's UID, so that a second import writes the same ones. Null when the
 * value is no rich text.
 */
export function richTextBlocks (value: unknown, uid: string): { blocks: Record<string, unknown>, blocks_layout: { items: string[] } } | null {
  const html = typeof value === 'string' ? value : isObject(value) && typeof value.data === 'string' ? value.data : null
  if (html === null) return null
  const { data } = toRichText(html)
  const id = (part: string): string => {
    const hex = createHash('md5').update(`${uid} ${part}`).digest('hex')
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`
  }
  const [title, text] = [id('title'), id('text')]
  return { blocks: { [title]: { '@type': 'title' }, [text]: { '@type': 'html', html: data, searchableText: htmlToText(data) } }, blocks_layout: { items: [title, text] } }
}
