import type { Notifications } from '../db/notifications.js'
import type { CacheFigures } from '../kept.js'
import { RecencyMap } from '../recency.js'
import type { Principal } from './roles.js'
import type { TokenClaims } from './token-form.js'

/** The notification topics that end cached principals: a user changed or went (no key: a group did, which ends all), a session was revoked (keyed by its `jti`). */
export const USER_CHANGED = 'user'
export const TOKEN_REVOKED = 'token'

/** Tokens whose principal is kept (the least recently used go first: core/recency.ts). */
const MAX_ENTRIES = 10_000

/** A verified token's session: who it stands for, and the claims it was verified with. */
export interface KnownSession { principal: Principal, claims: TokenClaims }

/**
 * The principal each verified token stands for, so that an authenticated
 * request costs no database round trip — nor, for a token seen before, the
 * signature check: an entry exists only for a token whose signature and
 * claims were checked, it ends with the token's own expiry, and nothing but
 * the expiry in a token's claims changes with time. Looked up by the token as
 * sent (a Map key; a JWT is a few hundred bytes), so that the fast path
 * decodes nothing; ended by what the token names — its session (`jti`) or its
 * user — so that a revocation ends every text that carries the session
 * (only canonically spelled tokens are ever kept: core/security/token-form.ts).
 *
 * Revocation still takes effect at once in every process: a user's change
 * (roles, password, deletion) and a session's revocation are notified in the
 * transaction that makes them, and every process drops what they end; while
 * notifications are not heard, nothing is kept and every request asks the
 * database. A principal read from the database while something was dropped
 * is not kept (`generation`): the read may predate the revocation that the
 * drop was for, and keeping it would bring the session back.
 */
export class PrincipalCache {
  private readonly byToken = new RecencyMap<string, KnownSession>()
  private readonly tokensOfSession = new Map<string, Set<string>>()
  private readonly tokensOfUser = new Map<string, Set<string>>()
  private drops = 0
  private hits = 0
  private misses = 0

  constructor (private readonly notifications: Notifications) {
    notifications.onChange(USER_CHANGED, userId => { if (userId === null) this.dropAll(); else this.dropUser(userId) })
    notifications.onChange(TOKEN_REVOKED, jti => { if (jti === null) this.dropAll(); else this.dropSession(jti) })
  }

  /** Changes whenever anything is dropped: read it before asking the database for what `set` will keep. */
  get generation (): number { return this.drops }

  /** The session of a token verified before and not expired since (undefined: verify it). */
  get (token: string, now = Date.now()): KnownSession | undefined {
    if (!this.notifications.listening) return undefined
    const entry = this.byToken.use(token)
    if (entry === undefined || now >= entry.claims.exp * 1000) {
      if (entry !== undefined) this.forget(token)
      this.misses++
      return undefined
    }
    this.hits++
    return entry
  }

  /** Its entries and look-ups, for the metrics (its bound is in entries: MAX_ENTRIES). */
  figures (): CacheFigures {
    return { entries: this.byToken.size, hits: this.hits, misses: this.misses }
  }

  /**
   * Keeps a session read from the database when nothing was dropped since
   * `generation` was read, and only while notifications are heard (else a
   * revocation could be missed).
   */
  set (token: string, session: KnownSession, generation: number): void {
    if (!this.notifications.listening || generation !== this.drops || session.principal.userId === null) return
    this.byToken.set(token, session)
    indexed(this.tokensOfSession, session.claims.jti).add(token)
    indexed(this.tokensOfUser, session.principal.userId).add(token)
    if (this.byToken.size > MAX_ENTRIES) this.forget(this.byToken.oldestKey()!)
  }

  /** This process's own changes apply before its answer, whatever the notification's timing. */
  dropUser (userId: string): void {
    this.drops++
    for (const token of this.tokensOfUser.get(userId) ?? []) this.forget(token)
  }

  /** Ends every token of a session (logout, renewal). */
  dropSession (jti: string): void {
    this.drops++
    for (const token of this.tokensOfSession.get(jti) ?? []) this.forget(token)
  }

  private forget (token: string): void {
    const entry = this.byToken.peek(token)
    if (entry === undefined) return
    this.byToken.delete(token)
    unindex(this.tokensOfSession, entry.claims.jti, token)
    unindex(this.tokensOfUser, entry.principal.userId!, token)
  }

  /** Everything may have changed (a lost connection; a group's members or roles, which many users' principals hold). */
  dropAll (): void {
    this.drops++
    this.byToken.clear()
    this.tokensOfSession.clear()
    this.tokensOfUser.clear()
  }
}

function indexed (index: Map<string, Set<string>>, key: string): Set<string> {
  let tokens = index.get(key)
  if (tokens === undefined) index.set(key, tokens = new Set())
  return tokens
}

/** An empty set is removed, so that the indexes hold no more keys than there are entries. */
function unindex (index: Map<string, Set<string>>, key: string, token: string): void {
  const tokens = index.get(key)
  tokens?.delete(token)
  if (tokens?.size === 0) index.delete(key)
}
