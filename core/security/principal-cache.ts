import type { Notifications } from '../db/notifications.js'
import type { Principal } from './roles.js'

/** The notification topics that end cached principals: a user changed or went, a token was revoked. */
export const USER_CHANGED = 'user'
export const TOKEN_REVOKED = 'token'

/** Tokens whose principal is kept (the least recently used go first). */
const MAX_ENTRIES = 10_000

interface Entry { principal: Principal, expiresAt: number }

/**
 * The principal each verified token stands for, so that an authenticated
 * request costs no database round trip. Revocation still takes effect at
 * once in every process: a user's change (roles, password, deletion) and a
 * token's revocation are notified in the transaction that makes them, and
 * every process drops what they end; while notifications are not heard,
 * nothing is kept and every request asks the database.
 */
export class PrincipalCache {
  private readonly byToken = new Map<string, Entry>()
  private readonly tokensOf = new Map<string, Set<string>>()

  constructor (private readonly notifications: Notifications) {
    notifications.onChange(USER_CHANGED, userId => { if (userId === null) this.clear(); else this.dropUser(userId) })
    notifications.onChange(TOKEN_REVOKED, hash => { if (hash === null) this.clear(); else this.drop(hash) })
  }

  get (hash: string, now = Date.now()): Principal | undefined {
    if (!this.notifications.listening) return undefined
    const entry = this.byToken.get(hash)
    if (entry === undefined) return undefined
    if (now >= entry.expiresAt) {
      this.drop(hash)
      return undefined
    }
    this.byToken.delete(hash)
    this.byToken.set(hash, entry)
    return entry.principal
  }

  /** `expiresAt` (ms): the token's own expiry. Kept only while notifications are heard (else a revocation could be missed). */
  set (hash: string, principal: Principal, expiresAt: number): void {
    if (!this.notifications.listening || principal.userId === null) return
    this.byToken.set(hash, { principal, expiresAt })
    const tokens = this.tokensOf.get(principal.userId) ?? new Set()
    tokens.add(hash)
    this.tokensOf.set(principal.userId, tokens)
    if (this.byToken.size > MAX_ENTRIES) this.drop(this.byToken.keys().next().value!)
  }

  /** This process's own changes apply before its answer, whatever the notification's timing. */
  dropUser (userId: string): void {
    for (const hash of this.tokensOf.get(userId) ?? []) this.byToken.delete(hash)
    this.tokensOf.delete(userId)
  }

  drop (hash: string): void {
    const entry = this.byToken.get(hash)
    this.byToken.delete(hash)
    if (entry?.principal.userId != null) this.tokensOf.get(entry.principal.userId)?.delete(hash)
  }

  private clear (): void {
    this.byToken.clear()
    this.tokensOf.clear()
  }
}
