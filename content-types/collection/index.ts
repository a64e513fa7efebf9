import Type from 'typebox'
import { defineContentType } from '../../core/content/declaration.js'
import { dublinCore } from '../../schemas/dublincore.js'
import { TextLine } from '../../schemas/fields.js'

/** The most criteria a stored query may have: Volto's query widget makes a handful. */
const MAX_CRITERIA = 50
/** Plone's default limit of a collection's results. */
const DEFAULT_LIMIT = 1000

/** Criteria as `@querystring-search` takes them: `{i, o, v}` rows. */
const Criteria = Type.Array(Type.Object({
  i: Type.String({ minLength: 1, maxLength: 200 }),
  o: Type.String({ minLength: 1, maxLength: 200 }),
  v: Type.Optional(Type.Unknown())
}), { maxItems: MAX_CRITERIA })

/** A count as Volto's number inputs write it: a number, or its digits. */
const Count = Type.Union([Type.Integer({ minimum: 0, maximum: 100000 }), Type.String({ pattern: '^[0-9]{1,6}$' })])

/**
 * What Volto 18's content form writes for a field named `query`: its
 * querystring widget (a listing block's), which keeps the criteria with their
 * sorting and limits. Its batch size is the GET's own, as for every collection.
 */
const QuerystringWidgetValue = Type.Object({
  query: Type.Optional(Criteria),
  sort_on: Type.Optional(Type.String({ maxLength: 200 })),
  sort_order: Type.Optional(Type.Union([Type.Literal('ascending'), Type.Literal('descending')])),
  sort_order_boolean: Type.Optional(Type.Boolean()),
  limit: Type.Optional(Count),
  b_size: Type.Optional(Count),
  depth: Type.Optional(Count)
}, { additionalProperties: false })

const isWidgetValue = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value)

/**
 * Plone's Collection: a stored query whose GET lists its results, as
 * plone.restapi serializes a collection (`items`, `items_total`, `batching`),
 * each reader seeing what they may see. A query a search would refuse is
 * refused when it is written (the editor's 400, not every reader's).
 */
export default defineContentType({
  name: 'Collection',
  title: 'Collection',
  description: 'A listing of the items a stored query finds.',
  folderish: false,
  behaviors: [dublinCore],
  schema: Type.Object({
    // Criteria as Plone keeps them, or as Volto's form writes them (kept as sent, so that its form shows them again).
    query: Type.Optional(Type.Union([Criteria, QuerystringWidgetValue], {
      title: 'Search terms', description: 'Define the search terms for the items you want to list by choosing what to match on.', widget: 'querystring'
    })),
    sort_on: Type.Optional(TextLine({ title: 'Sort on', description: 'Sort the collection on this index', maxLength: 200 })),
    sort_reversed: Type.Optional(Type.Boolean({ title: 'Reversed order', description: 'Sort the results in reversed order' })),
    limit: Type.Optional(Type.Integer({ title: 'Limit', description: 'Limit Search Results', minimum: 0, maximum: 100000, default: DEFAULT_LIMIT })),
    item_count: Type.Optional(Type.Integer({ title: 'Item count', description: 'Number of items that will show up in one batch.', minimum: 1, maximum: 500, default: 30 })),
    customViewFields: Type.Optional(Type.Array(TextLine({ title: 'Column', maxLength: 200 }), { title: 'Table Columns', description: 'Select which fields to display when \'Tabular view\' is selected in the display menu.', maxItems: 50 }))
  }),
  layout: 'listing_view',
  // The widget's sorting and limit, where it has them, are part of its query; else the collection's own fields.
  storedQuery: data => {
    const widget = isWidgetValue(data.query) ? data.query : {}
    return {
      query: isWidgetValue(data.query) ? widget.query : data.query,
      sort_on: widget.sort_on ?? data.sort_on,
      sort_order: widget.sort_order ?? (data.sort_reversed === true ? 'descending' : 'ascending'),
      limit: widget.limit !== undefined ? Number(widget.limit) : data.limit ?? DEFAULT_LIMIT
    }
  }
})
