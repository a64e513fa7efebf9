import type { VocabularyTerm } from '../content/declaration.js'
import type { ContentTypeRegistry } from '../content/registry.js'
import { KEYWORDS_VOCABULARY } from '../content/vocabularies.js'
import { BadRequest } from '../errors.js'
import { UUID } from '../query/index-kinds.js'
import { parseInteger } from '../query/zope.js'
import type { IndexDefinition } from './indexes.js'

/**
 * plone.app.querystring, as `@querystring` describes it and
 * `@querystring-search` takes it: rows `{i: index, o: operation, v: value}`
 * translated into Plone's query language, which the one query model parses
 * (core/query/parse.ts) — so a listing block's query is answered as
 * `@search` would answer it. Operations a query model cannot express
 * ("is not", "none of") are not offered.
 */

const OP = 'plone.app.querystring.operation.'
const PARSER = 'plone.app.querystring.queryparser.'

/** What a row becomes: a criterion on its index, given the caller and the moment. */
interface RowContext { now: Date, userId: string | null, contextPath: string }
type Translate = (value: unknown, row: RowContext) => unknown

interface Operation { title: string, description: string | null, widget: string | null, parser: string, translate: Translate }

const DAY = 24 * 60 * 60 * 1000
const asList = (value: unknown): unknown[] => Array.isArray(value) ? value : value === undefined || value === null || value === '' ? [] : [value]
const first = (value: unknown): unknown => Array.isArray(value) ? value[0] : value
const days = (value: unknown): number => parseInteger(String(first(value) ?? ''), 'v')
const startOfDay = (d: Date): Date => new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate()))

/** A path row's value: `/talks`, `/talks::1` (with a depth), or a UID (kept for the caller to resolve). */
function pathValue (value: unknown, base: string): Record<string, unknown> {
  const text = String(first(value) ?? '')
  const [path, depth] = text.split('::')
  const resolved = path.startsWith('/') || UUID.test(path) ? path : `${base === '/' ? '' : base}/${path}`
  return { query: resolved === '' ? '/' : resolved, ...(depth !== undefined && depth !== '' ? { depth: parseInteger(depth, 'path depth') } : {}) }
}

/** `..` and `.` against the context's path. */
function relativePath (value: unknown, contextPath: string): Record<string, unknown> {
  const text = String(first(value) ?? '.')
  const [relative, depth] = text.split('::')
  const parts = contextPath.split('/').filter(Boolean)
  for (const part of relative.split('/').filter(Boolean)) {
    if (part === '..') parts.pop()
    else if (part !== '.') parts.push(part)
  }
  return { query: '/' + parts.join('/'), ...(depth !== undefined && depth !== '' ? { depth: parseInteger(depth, 'path depth') } : {}) }
}

const op = (title: string, parser: string, widget: string | null, translate: Translate, description: string | null = null): Operation =>
  ({ title, description, widget, parser: PARSER + parser, translate })

export const OPERATIONS = new Map<string, Operation>([
  ['selection.any', op('Matches any of', '_contains', 'MultipleSelectionWidget', v => ({ query: asList(v) }), 'Tip: you can use * to autocomplete.')],
  ['selection.is', op('Is', '_equal', 'MultipleSelectionWidget', v => ({ query: asList(v) }))],
  ['selection.all', op('Matches all of', '_all', 'MultipleSelectionWidget', v => ({ query: asList(v), operator: 'and' }), 'Tip: you can use * to autocomplete.')],
  // What Volto's search block sends for a checkbox or select facet: any of the values.
  ['list.contains', op('Contains', '_contains', 'MultipleSelectionWidget', v => ({ query: asList(v) }))],
  ['string.contains', op('Contains', '_contains', 'StringWidget', v => ({ query: first(v) }))],
  ['string.is', op('Is', '_equal', 'StringWidget', v => ({ query: first(v) }), 'Tip: you can use * to autocomplete.')],
  ['string.currentUser', op('Current logged in user', '_currentUser', null, (_v, row) => ({ query: row.userId ?? '' }))],
  ['boolean.isTrue', op('Yes', '_isTrue', null, () => ({ query: true }))],
  ['boolean.isFalse', op('No', '_isFalse', null, () => ({ query: false }))],
  ['int.is', op('Equals', '_intEqual', 'StringWidget', v => ({ query: parseInteger(String(first(v)), 'v') }))],
  ['int.lessThan', op('Less than', '_intLessThan', 'StringWidget', v => ({ query: parseInteger(String(first(v)), 'v'), range: 'max' }))],
  ['int.largerThan', op('Larger than', '_intLargerThan', 'StringWidget', v => ({ query: parseInteger(String(first(v)), 'v'), range: 'min' }))],
  ['date.lessThan', op('Before date', '_lessThan', 'DateWidget', v => ({ query: first(v), range: 'max' }), 'Please use YYYY/MM/DD.')],
  ['date.largerThan', op('After date', '_largerThan', 'DateWidget', v => ({ query: first(v), range: 'min' }), 'Please use YYYY/MM/DD.')],
  ['date.between', op('Between dates', '_between', 'DateRangeWidget', v => ({ query: asList(v).slice(0, 2), range: 'min:max' }), 'Please use YYYY/MM/DD.')],
  ['date.today', op('Today', '_today', null, (_v, { now }) => ({ query: [startOfDay(now), new Date(startOfDay(now).getTime() + DAY - 1)], range: 'min:max' }), 'Current day')],
  ['date.beforeToday', op('Before today', '_beforeToday', null, (_v, { now }) => ({ query: new Date(startOfDay(now).getTime() - 1), range: 'max' }), 'Before the current day')],
  ['date.afterToday', op('After today', '_afterToday', null, (_v, { now }) => ({ query: new Date(startOfDay(now).getTime() + DAY), range: 'min' }), 'After the current day')],
  ['date.lessThanRelativeDate', op('Within next N days', '_lessThanRelativeDate', 'RelativeDateWidget', (v, { now }) => ({ query: [now, new Date(now.getTime() + days(v) * DAY)], range: 'min:max' }), 'Within the next N days')],
  ['date.largerThanRelativeDate', op('Within last N days', '_largerThanRelativeDate', 'RelativeDateWidget', (v, { now }) => ({ query: [new Date(now.getTime() - days(v) * DAY), now], range: 'min:max' }), 'Within the last N days')],
  ['string.absolutePath', op('Absolute path', '_absolutePath', 'ReferenceWidget', v => pathValue(v, '/'), 'Location in the site structure')],
  ['string.path', op('Navigation path', '_navigationPath', 'ReferenceWidget', v => pathValue(v, '/'), 'Location in the navigation structure')],
  ['string.relativePath', op('Relative path', '_relativePath', 'RelativePathWidget', (v, row) => relativePath(v, row.contextPath), "Use '../' to navigate to parent objects.")]
].map(([name, operation]) => [OP + (name as string), operation as Operation]))

const DATE_OPERATIONS = ['date.lessThan', 'date.largerThan', 'date.between', 'date.today', 'date.beforeToday', 'date.afterToday', 'date.lessThanRelativeDate', 'date.largerThanRelativeDate']

/** Operations by index kind; a field index with a vocabulary is a selection. */
function operationsOf (index: IndexDefinition, hasValues: boolean): string[] {
  switch (index.kind) {
    case 'keyword': return ['selection.any', 'selection.all']
    case 'date': return DATE_OPERATIONS
    case 'boolean': return ['boolean.isTrue', 'boolean.isFalse']
    case 'int':
    case 'long': return ['int.is', 'int.lessThan', 'int.largerThan']
    case 'text': return ['string.contains']
    case 'json': return [] // never a criterion (metadata only)
    case 'dates': return [] // not listed: its date's index is
    case 'uuid': return ['string.is']
    case 'field': return hasValues ? ['selection.any'] : index.name === 'Creator' ? ['string.is', 'string.currentUser'] : ['string.is']
  }
}

/** Titles and groups of the core indexes (the content types' indexes take their field's title). */
const CORE_INDEXES: Record<string, { title: string, description: string, group: string }> = {
  SearchableText: { title: 'Searchable text', description: "Text search of an item's contents", group: 'Text' },
  path: { title: 'Location', description: 'The location of an item', group: 'Metadata' },
  portal_type: { title: 'Type', description: "An item's type (e.g. Event)", group: 'Metadata' },
  review_state: { title: 'Review state', description: "An item's workflow state (e.g. published)", group: 'Metadata' },
  getId: { title: 'Short name (id)', description: 'The short name of an item (used in the url)', group: 'Metadata' },
  Creator: { title: 'Creator', description: 'The person that created an item', group: 'Metadata' },
  UID: { title: 'UID', description: 'The unique identifier of an item', group: 'Metadata' },
  created: { title: 'Creation date', description: 'The date an item was created', group: 'Dates' },
  modified: { title: 'Modification date', description: 'The time and date an item was last modified', group: 'Dates' },
  Date: { title: 'Date', description: 'The publishing date, else the modification date', group: 'Dates' },
  is_folderish: { title: 'Folderish', description: 'Whether an item is a folder', group: 'Metadata' },
  getObjPositionInParent: { title: 'Order in folder', description: 'The order of an item in its parent folder', group: 'Metadata' },
  sortable_title: { title: 'Sortable Title', description: "The item's title, transformed for sorting", group: 'Text' }
}
/** Indexes a query form has no use for: security, the tree's internals, duplicates of others. */
const HIDDEN = new Set(['allowedRolesAndUsers', 'path_parents', 'path_depth', 'path_string', 'object_provides', 'id', 'Type', 'Language'])

export interface QuerystringIndex {
  title: string
  description: string
  group: string
  enabled: boolean
  sortable: boolean
  fetch_vocabulary: boolean
  vocabulary: string | null
  values: Record<string, { title: string }>
  operations: string[]
  operators: Record<string, { title: string, description: string | null, widget: string | null, operation: string }>
}

/**
 * `@querystring`: the indexes a query form offers, from the catalogue's
 * declarations, each with its operations and, for vocabularies, its values.
 * `terms` gives a vocabulary's current terms (rooms are editable).
 */
export async function querystringIndexes (registry: ContentTypeRegistry, terms: (vocabulary: string) => Promise<readonly VocabularyTerm[]>): Promise<{ indexes: Record<string, QuerystringIndex>, sortable_indexes: Record<string, QuerystringIndex> }> {
  const fieldOf = new Map<string, { title: string, description: string, vocabulary?: string, suggestions?: string }>()
  for (const type of registry.types.values()) {
    for (const [name, field] of type.fields) {
      if (field.index === undefined) continue
      const indexName = field.indexName ?? name
      const { title, description } = field as { title?: string, description?: string }
      if (!fieldOf.has(indexName)) fieldOf.set(indexName, { title: title ?? name, description: description ?? '', vocabulary: field.vocabulary, suggestions: field.suggestions })
    }
  }
  const typeValues = Object.fromEntries([...registry.types.values()].filter(t => t !== registry.siteRoot).map(t => [t.name, { title: t.title }]))
  const stateValues: Record<string, { title: string }> = {}
  for (const type of registry.types.values()) for (const [id, state] of Object.entries(type.workflow?.states ?? {})) stateValues[id] = { title: state.title }

  const describe = async (index: IndexDefinition | null, name: string): Promise<QuerystringIndex> => {
    const field = fieldOf.get(name)
    const core = CORE_INDEXES[name]
    let values: Record<string, { title: string }> = {}
    if (name === 'portal_type') values = typeValues
    else if (name === 'review_state') values = stateValues
    else if (field?.vocabulary !== undefined) values = Object.fromEntries((await terms(field.vocabulary)).map(t => [t.token, { title: t.title ?? t.token }]))
    const operations = index === null
      ? (name === 'path' ? ['string.absolutePath', 'string.relativePath', 'string.path'] : ['string.contains'])
      : operationsOf(index, Object.keys(values).length > 0)
    return {
      title: field?.title ?? core?.title ?? name,
      description: field?.description ?? core?.description ?? '',
      group: core?.group ?? (index?.kind === 'date' ? 'Dates' : index?.kind === 'text' ? 'Text' : 'Metadata'),
      enabled: name !== 'sortable_title',
      sortable: index?.sortable === true,
      fetch_vocabulary: true,
      vocabulary: field?.suggestions ?? (name === 'Subject' ? KEYWORDS_VOCABULARY : field?.vocabulary ?? null),
      values,
      operations: operations.map(o => OP + o),
      operators: Object.fromEntries(operations.map(o => {
        const { title, description, widget, parser } = OPERATIONS.get(OP + o)!
        return [OP + o, { title, description, widget, operation: parser }]
      }))
    }
  }
  const indexes: Record<string, QuerystringIndex> = {
    SearchableText: await describe(null, 'SearchableText'),
    path: await describe(null, 'path')
  }
  for (const index of registry.indexes.values()) {
    // A date's further occurrences are searched through the date's own index.
    if (!index.indexed || HIDDEN.has(index.name) || index.kind === 'dates') continue
    indexes[index.name] = await describe(index, index.name)
  }
  const sortable = Object.fromEntries(Object.entries(indexes).filter(([, i]) => i.sortable))
  return { indexes, sortable_indexes: sortable }
}

/** The body of `@querystring-search` (plone.restapi), as sent by Volto's listing and search blocks. */
export interface QuerystringSearchBody {
  query?: unknown
  sort_on?: unknown
  sort_order?: unknown
  b_start?: unknown
  b_size?: unknown
  limit?: unknown
  fullobjects?: unknown
  metadata_fields?: unknown
}

/**
 * The body as the query parameters `@search` takes (after Zope marshalling):
 * one criterion a row (a later row on the same index replaces an earlier
 * one, as plone.app.querystring does), site-wide unless a row says where.
 */
export function querystringQuery (body: QuerystringSearchBody, row: RowContext): Record<string, unknown> {
  if (!Array.isArray(body.query) || body.query.length === 0) throw BadRequest('No query supplied')
  const query: Record<string, unknown> = Object.create(null) as Record<string, unknown>
  for (const [n, item] of body.query.entries()) {
    if (item === null || typeof item !== 'object' || Array.isArray(item)) throw BadRequest(`query[${n}] must be an object {i, o, v}.`)
    const { i, o, v } = item as { i?: unknown, o?: unknown, v?: unknown }
    if (typeof i !== 'string' || i === '') throw BadRequest(`query[${n}].i must name an index.`)
    if (typeof o !== 'string') throw BadRequest(`query[${n}].o must name an operation.`)
    const operation = OPERATIONS.get(o.startsWith(OP) ? o : OP + o)
    if (operation === undefined) throw BadRequest(`Unknown operation '${o}' in query[${n}].`)
    query[i] = operation.translate(v, row)
  }
  query.path ??= { query: '/' }
  const scalar = (value: unknown, name: string): string => {
    if (typeof value !== 'string' && typeof value !== 'number') throw BadRequest(`'${name}' must be a string or a number.`)
    return String(value)
  }
  if (body.sort_on !== undefined && body.sort_on !== null && body.sort_on !== '') query.sort_on = scalar(body.sort_on, 'sort_on')
  if (body.sort_order !== undefined && body.sort_order !== null) query.sort_order = scalar(body.sort_order, 'sort_order') === 'descending' ? 'descending' : 'ascending'
  if (body.b_start !== undefined) query.b_start = scalar(body.b_start, 'b_start')
  if (body.b_size !== undefined) query.b_size = scalar(body.b_size, 'b_size')
  if (body.limit !== undefined && body.limit !== null) query.sort_limit = scalar(body.limit, 'limit')
  if (body.fullobjects === true || body.fullobjects === 1 || body.fullobjects === '1' || body.fullobjects === 'true') query.fullobjects = '1'
  if (body.metadata_fields !== undefined) {
    const fields = Array.isArray(body.metadata_fields) ? body.metadata_fields : [body.metadata_fields]
    query.metadata_fields = fields.map(f => scalar(f, 'metadata_fields'))
  }
  return query
}
