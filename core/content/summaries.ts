import { can } from '../security/permissions.js'
import { Permission, type Principal } from '../security/roles.js'
import type { ContentType } from './registry.js'
import type { ContentRow } from './rows.js'
import { urlOf } from './urls.js'

/** Whom an answer is written for: their principal decides what it says of other objects, their base URL its addresses. */
export interface Reader { principal: Principal, baseUrl: string }

/** A summary of another object: its `@id`, and what the reader may know of it. */
export type Summary = { '@id': string } & Record<string, unknown>

/**
 * The one gate of every summary of another object that an answer names by
 * traversal (a parent, a breadcrumb, next/previous items): `describe` says
 * what it is only when the reader may View it, as a GET of it would answer
 * 200; otherwise the summary is its `@id` alone — where it is, never what it
 * is (title, description, state, type). Plone summarises without asking
 * (docs/api.md, "Decisions"): a private folder's title reached anonymous
 * callers through the published talks inside it.
 *
 * `lineage` is the object's ancestors and itself, root first, as traversal
 * reads them with the object the answer is about: deciding costs no query.
 * An object of a type this process does not know cannot be checked, so
 * nothing is said of it.
 *
 * Summaries of search results and listed items are written from the rows of
 * the reader's own query, whose security filter (allowedRolesAndUsers, and
 * the effective-date rules) is this same rule as an index
 * (`allowedRolesAndUsers` in core/security/permissions.ts): they need no gate.
 */
export function summaryOf (reader: Reader, lineage: ContentRow[], typeOf: (obj: ContentRow) => ContentType | undefined,
  describe: (obj: ContentRow, type: ContentType) => Record<string, unknown>): Summary {
  const obj = lineage[lineage.length - 1]
  const url = urlOf(reader.baseUrl, obj.path)
  const type = typeOf(obj)
  if (type === undefined || !can(reader.principal, Permission.View, { lineage, type })) return { '@id': url }
  return { '@id': url, ...describe(obj, type) }
}
