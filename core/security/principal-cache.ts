import type { Notifications } from '../db/notifications.js'
import type { Principal } from './roles.js'

/** The notification topics that end cached principals: a user changed or went, a token was revoked. */
export const USER_CHANGED = 'user'
export const TOKEN_REVOKED = 'token'

/** Tokens whose principal is kept (the least recently used go first). */
const MAX_ENTRIES = 10_000

interface Entry { principal: Principal, expiresAt: number, hash: string }

/**
 * The principal each verified token stands for, so that an authenticated
 * request costs no database round trip — nor, for a token seen before, the
 * signature check and hash: an entry exists only for a token whose signature
 * was verified, it ends with the token's own expiry, and nothing but the
 * expiry in a token's claims changes with time. Kept by the token as sent
 * (a Map key; a JWT is a few hundred bytes); revocation names the token by
 * its hash, which each entry keeps.
 *
 * Revocation still takes effect at once in every process: a user's change
 * (roles, password, deletion) and a token's revocation are notified in the
 * transaction that makes them, and every process drops what they end; while
 * notifications are not heard, nothing is kept and every request asks the
 * database.
 */
export class PrincipalCache {
  private readonly byToken = new Map<string, Entry>()
  private readonly tokenOfHash = new Map<string, string>()
  private readonly tokensOf = new Map<string, Set<string>>()

  constructor (private readonly notifications: Notifications) {
    notifications.onChange(USER_CHANGED, userId => { if (userId === null) this.clear(); else this.dropUser(userId) })
    notifications.onChange(TOKEN_REVOKED, hash => { if (hash === null) this.clear(); else this.drop(hash) })
  }

  /** The principal of a token verified before and not expired since (undefined: verify it). */
  get (token: string, now = Date.now()): Principal | undefined {
    if (!this.notifications.listening) return undefined
    const entry = this.byToken.get(token)
    if (entry === undefined) return undefined
    if (now >= entry.expiresAt) {
      this.drop(entry.hash)
      return undefined
    }
    this.byToken.delete(token)
    this.byToken.set(token, entry)
    return entry.principal
  }

  /** `expiresAt` (ms): the token's own expiry. Kept only while notifications are heard (else a revocation could be missed). */
  set (token: string, hash: string, principal: Principal, expiresAt: number): void {
    if (!this.notifications.listening || principal.userId === null) return
    this.byToken.set(token, { principal, expiresAt, hash })
    this.tokenOfHash.set(hash, token)
    const tokens = this.tokensOf.get(principal.userId) ?? new Set()
    tokens.add(token)
    this.tokensOf.set(principal.userId, tokens)
    if (this.byToken.size > MAX_ENTRIES) this.drop(this.byToken.values().next().value!.hash)
  }

  /** This process's own changes apply before its answer, whatever the notification's timing. */
  dropUser (userId: string): void {
    for (const token of this.tokensOf.get(userId) ?? []) {
      const entry = this.byToken.get(token)
      if (entry !== undefined) this.tokenOfHash.delete(entry.hash)
      this.byToken.delete(token)
    }
    this.tokensOf.delete(userId)
  }

  /** Ends the entry of the token with this hash (a revocation names tokens by their hash). */
  drop (hash: string): void {
    const token = this.tokenOfHash.get(hash)
    if (token === undefined) return
    this.tokenOfHash.delete(hash)
    const entry = this.byToken.get(token)
    this.byToken.delete(token)
    if (entry?.principal.userId != null) this.tokensOf.get(entry.principal.userId)?.delete(token)
  }

  private clear (): void {
    this.byToken.clear()
    this.tokenOfHash.clear()
    this.tokensOf.clear()
  }
}
