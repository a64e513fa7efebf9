import type { Field } from './declaration.js'
import type { ContentType } from './registry.js'
import type { Vocabularies } from './vocabularies.js'

/** Annotations that drive the service but mean nothing to a client. */
const INTERNAL = new Set(['index', 'indexName', 'metadata', 'searchable', 'kind', 'maxTextLength', 'vocabulary', 'suggestions', 'writePermission', '~kind', '~optional'])

function factoryOf (field: Field): { factory: string, widget?: string, type?: string } {
  if (field.kind === 'richtext') return { type: 'string', factory: 'Rich Text', widget: 'richtext' }
  if (field.kind === 'image') return { factory: 'Image' }
  if (field.kind === 'file') return { factory: 'File' }
  // As plone.restapi describes its JSONField (Volto edits a type whose schema has `blocks` with its blocks editor).
  if (field.kind === 'blocks' || field.kind === 'blocks_layout') return { type: 'dict', factory: 'JSONField', widget: 'json' }
  if (field.vocabulary !== undefined) return { factory: field.type === 'array' ? 'Multiple Choice' : 'Choice' }
  if (field.format === 'date-time') return { factory: 'Date/Time', widget: 'datetime' }
  if (field.format === 'email') return { factory: 'Email', widget: 'email' }
  // Without a widget, as plone.restapi describes zope.schema's Bool, Int and Float: Volto then
  // chooses its checkbox and number widgets by the type (a widget name would win over it).
  if (field.type === 'boolean') return { factory: 'Yes/No' }
  if (field.type === 'integer') return { factory: 'Integer' }
  if (field.type === 'number') return { factory: 'Floating-point number' }
  if (field.type === 'array') return { factory: field.suggestions !== undefined ? 'Tuple' : 'List' }
  if (typeof field.pattern === 'string') return { factory: 'Text line (String)' }
  return { factory: 'Text', widget: 'textarea' }
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v)

/** A schema without the service's annotations, at any depth (`properties` keys are names, not annotations). */
function clean (schema: Record<string, unknown>): Record<string, unknown> {
  const subschema = (v: unknown): unknown => isObject(v) ? clean(v) : Array.isArray(v) ? v.map(subschema) : v
  return Object.fromEntries(Object.entries(schema).filter(([k]) => !INTERNAL.has(k)).map(([k, v]) =>
    [k, k === 'properties' && isObject(v) ? Object.fromEntries(Object.entries(v).map(([name, s]) => [name, subschema(s)])) : subschema(v)]))
}

/**
 * The JSON Schema of `@types/<name>`, generated from the same TypeBox
 * declaration that validates writes, in plone.restapi's shape (fieldsets,
 * factory, widget, vocabulary links).
 */
export async function typeSchema (type: ContentType, baseUrl: string, vocabularies: Vocabularies): Promise<Record<string, unknown>> {
  const properties: Record<string, unknown> = {}
  const behaviorOf = new Map(type.declaration.behaviors.flatMap(b => Object.keys(b.schema.properties).map(name => [name, b.name])))
  for (const [name, field] of type.fields) {
    const schema = clean(field as unknown as Record<string, unknown>)
    // A field of several shapes is described by its first, as Plone declares the field (rich text a
    // string, a collection's query its criteria): a client's own checks of that shape (Volto's
    // maxItems) would refuse the others, which the service checks.
    const shape = Array.isArray(schema.anyOf) ? schema.anyOf[0] as { type?: string, items?: unknown } : undefined
    if (shape !== undefined) {
      delete schema.anyOf
      schema.type = shape.type
      if (shape.items !== undefined) schema.items = shape.items
    }
    // Blocks are JSON to a client (a dict): their shape is the blocks' own business.
    if (field.kind === 'blocks' || field.kind === 'blocks_layout') for (const key of ['patternProperties', 'properties', 'required']) delete schema[key]
    const property: Record<string, unknown> = { description: '', ...schema, ...factoryOf(shape !== undefined ? { ...field, type: shape.type } : field), behavior: behaviorOf.get(name) ?? type.name }
    if (field.vocabulary !== undefined) {
      property.vocabulary = { '@id': `${baseUrl}/@vocabularies/${field.vocabulary}` }
      const tokens = await vocabularies.tokens(field.vocabulary)
      if (field.type === 'array') property.items = { type: 'string', enum: tokens }
      else property.enum = tokens
    }
    if (field.suggestions !== undefined) property.widgetOptions = { vocabulary: { '@id': `${baseUrl}/@vocabularies/${field.suggestions}` } }
    if (field.maxTextLength !== undefined) property.maxLength = field.maxTextLength
    if (field.writePermission !== undefined) property.writePermission = field.writePermission
    properties[name] = property
  }
  // As Plone: the default fieldset first (forms open on it), with the title and description (Plone's
  // basic behavior) before the type's own fields; each behavior's other fields in a fieldset after it.
  const basic = ['title', 'description'].filter(name => type.fields.has(name))
  const fieldsets = [
    { id: 'default', title: 'Default', behavior: type.name, fields: [...basic, ...Object.keys(type.declaration.schema.properties).filter(name => !basic.includes(name))] },
    ...type.declaration.behaviors.map(b => ({ id: b.fieldset?.id ?? b.name.replace(/\W/g, '_'), title: b.fieldset?.title ?? b.name, behavior: b.name, fields: Object.keys(b.schema.properties).filter(name => !basic.includes(name)) }))
  ].filter(f => f.fields.length > 0)
  return { title: type.title, description: type.declaration.description ?? '', type: 'object', properties, required: [...type.required], fieldsets, layouts: [type.layout] }
}
