import type { ContentRow } from './rows.js'

/**
 * The guard of a write against a sharing change that races it
 * (infra/migrations/023_access_guard.sql): an SQL condition, true when the
 * local roles (and their blocking) of `lineage` are still those the write
 * computed its catalogue access from, an error with SQLSTATE
 * `ACCESS_CHANGED` otherwise, after waiting for a sharing change under way.
 * `lineage`: the folders whose roles count on the object written (a create's
 * folder and those above it; for an update, those above the object, whose own
 * row is guarded by `ownAccessUnchanged`).
 */
export function accessGuard (p: (value: unknown) => string, lineage: readonly ContentRow[]): string {
  if (lineage.length === 0) return 'true'
  const expected = lineage.map(o => [o.local_roles, o.local_roles_block ?? false])
  return `access_unchanged(${p(lineage.map(o => o.uid))}::uuid[], ${p(JSON.stringify(expected))}::jsonb)`
}

/**
 * The guard of an update on the object's own row, in its WHERE: its local
 * roles as the write read them. Not through `access_unchanged`, whose share
 * lock of the row would make two updates of it, each holding one and waiting
 * for the other's to end before it locks the row for itself, a deadlock; the
 * UPDATE's own lock and its re-check of the newest row version do the work.
 */
export const ownAccessUnchanged = (p: (value: unknown) => string, obj: ContentRow): string =>
  `local_roles = ${p(JSON.stringify(obj.local_roles))}::jsonb AND local_roles_block = ${p(obj.local_roles_block ?? false)}`

/** The SQLSTATE of a write whose lineage's local roles changed while it ran: it starts over from them as they are now. */
export const ACCESS_CHANGED = 'TKACL'
