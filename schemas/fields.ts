import Type from 'typebox'
import type { Field, FieldAnnotations } from '../core/content/declaration.js'

type Common = FieldAnnotations & { title: string, description?: string }

/**
 * Rich text: in, a string of HTML or `{data, content-type, encoding}`; out,
 * `{data, content-type, encoding}` with sanitised HTML. `maxTextLength`
 * counts characters of text, not markup.
 */
export function RichText (options: Common & { maxTextLength?: number }): Field {
  return Type.Union([
    Type.String(),
    Type.Object({
      data: Type.String(),
      'content-type': Type.Optional(Type.String()),
      encoding: Type.Optional(Type.String())
    })
  ], { ...options, kind: 'richtext' }) as Field
}

/** An image: in, `{data (base64), encoding, filename, content-type}`; checked from its bytes. */
export function Image (options: Common): Field {
  return Type.Object({
    data: Type.String({ minLength: 1 }),
    encoding: Type.Optional(Type.Literal('base64')),
    filename: Type.Optional(Type.String({ maxLength: 255 })),
    'content-type': Type.Optional(Type.String())
  }, { ...options, kind: 'image' }) as Field
}

/** A file: in, `{data (base64), encoding, filename, content-type}`; kept in a large object, served in slices. */
export function File (options: Common): Field {
  return Type.Object({
    data: Type.String(),
    encoding: Type.Optional(Type.Literal('base64')),
    filename: Type.Optional(Type.String({ maxLength: 255 })),
    'content-type': Type.Optional(Type.String({ maxLength: 255 }))
  }, { ...options, kind: 'file' }) as Field
}

/** One line of text: no line breaks. */
export function TextLine (options: Common & { maxLength?: number, minLength?: number }): Field {
  return Type.String({ pattern: '^[^\\r\\n]*$', ...options }) as Field
}

/** An ISO-8601 date-time. */
export function DateTime (options: Common): Field {
  return Type.String({ format: 'date-time', ...options }) as Field
}

/** One term of a named vocabulary. */
export function Choice (options: Common & { vocabulary: string }): Field {
  return Type.String({ ...options }) as Field
}

/** A set of terms of a named vocabulary (duplicates collapse). */
export function MultiChoice (options: Common & { vocabulary: string, minItems?: number }): Field {
  const { minItems, ...rest } = options
  return Type.Array(Type.String(), { ...rest, ...(minItems !== undefined ? { minItems } : {}) }) as Field
}
