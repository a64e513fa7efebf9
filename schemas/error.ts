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
  context: Type.Optional(Type.String({ description: 'URL of the nearest ancestor the caller may view' })),
  csv_errors: Type.Optional(Type.Array(Type.Object({
    line_number: Type.Integer(),
    line: Type.String(),
    message: Type.String()
  }), { description: 'The lines of an uploaded CSV file that cannot be taken (`@aliases`)' }))
}, { $id: 'Error', title: 'Error' })
