import type { ContentRow } from './rows.js'

/**
 * The guard of a write against a sharing change that races it
 * (infra/migrations/023_access_guard.sql): an SQL condition, true when the
 * local roles (and their blocking) of `lineage` are still those the write
 * computed its catalogue access from, an error with SQLSTATE
 * `ACCESS_CHANGED` otherwise, after waiting for a sharing change under way.
 * `lineage`: the objects whose roles count on the one written (a create's
 * folder and those above it; an update's object too).
 */
export function accessGuard (p: (value: unknown) => string, lineage: readonly ContentRow[]): string {
  const expected = lineage.map(o => [o.local_roles, o.local_roles_block ?? false])
  return `access_unchanged(${p(lineage.map(o => o.uid))}::uuid[], ${p(JSON.stringify(expected))}::jsonb)`
}

/** The SQLSTATE of a write whose lineage's local roles changed while it ran: it starts over from them as they are now. */
export const ACCESS_CHANGED = 'TKACL'
