import Type from 'typebox'

/** The error body every failing request gets (docs/api.md, "Errors"). */
export const ErrorSchema = Type.Object({
  type: Type.String({ description: 'Error name, e.g. BadRequest, Unauthorized, NotFound' }),
  message: Type.String({ description: 'A human sentence' }),
  errors: Type.Optional(Type.Array(Type.Object({
    field: Type.Optional(Type.String()),
    message: Type.String(),
    error: Type.Literal('ValidationError')
  }))),
  context: Type.Optional(Type.String({ description: 'URL of the nearest ancestor the caller may view' }))
}, { $id: 'Error', title: 'Error' })
