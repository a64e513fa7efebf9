import { readFileSync } from 'node:fs'
import Type, { type Static } from 'typebox'
import { Compile } from 'typebox/compile'
import Value from 'typebox/value'
import type { Config } from '../config/config.js'
import type { Db } from '../db/db.js'
import { BadRequest, ValidationFailed, quote, type FieldError } from '../errors.js'
import { untrustedJsonProblems } from '../security/untrusted-input.js'

/** collective.solr's default pattern for simple SearchableText queries. */
export const DEFAULT_SEARCH_PATTERN =
  '+(Title:{value}^5 OR Description:{value}^2 OR SearchableText:{value} OR SearchableText:({base_value}) OR searchwords:({base_value})^1000) +showinsearch:True'

/**
 * Bounds of the time settings: within what a timer (at most 2³¹ − 1 ms) and
 * Solr's 32-bit parameters take, and more than any deployment needs: an hour
 * for a call to Solr, a commit or a slow query. "Now" may be rounded by up
 * to ~32 years (beyond every date a talk has), never past the year 9999 that
 * dates end at.
 */
const HOUR_S = 3600
const HOUR_MS = HOUR_S * 1000
const MAX_EFFECTIVE_STEPS = 1_000_000_000

/** The search-server settings (docs/search.md, "Search settings"), with their defaults. */
export const SolrSettingsSchema = Type.Object({
  active: Type.Boolean({ default: false, title: 'Active', description: 'Master switch of the Solr integration' }),
  host: Type.String({ default: '127.0.0.1', title: 'Host', minLength: 1 }),
  port: Type.Integer({ default: 8983, minimum: 1, maximum: 65535, title: 'Port' }),
  base: Type.String({ default: '/solr/plone', pattern: '^/', title: 'Base', description: 'Path of the core, or of the SolrCloud collection (on any node or a load balancer)' }),
  login: Type.String({ default: '', title: 'Login' }),
  password: Type.String({ default: '', title: 'Password', writeOnly: true }),
  async_indexing: Type.Boolean({ default: false, title: 'Asynchronous indexing', description: 'Index through the BullMQ queue; writes do not wait for Solr' }),
  auto_commit: Type.Boolean({ default: true, title: 'Automatic commit', description: 'Commit after each content transaction' }),
  commit_within: Type.Integer({ default: 0, minimum: 0, maximum: HOUR_MS, title: 'Commit within (ms)', description: '> 0: send commitWithin instead of commits' }),
  index_timeout: Type.Number({ default: 10, minimum: 0, maximum: HOUR_S, title: 'Index timeout (s)', description: '0 = no limit' }),
  search_timeout: Type.Number({ default: 5, minimum: 0, maximum: HOUR_S, title: 'Search timeout (s)', description: '0 = no limit' }),
  max_results: Type.Integer({ default: 500, minimum: 1, maximum: 1_000_000_000, title: 'Maximum search results' }),
  required: Type.Array(Type.String(), { default: ['SearchableText'], title: 'Required query parameters' }),
  search_pattern: Type.String({ default: DEFAULT_SEARCH_PATTERN, title: 'Pattern for simple search queries' }),
  facets: Type.Array(Type.String(), { default: ['portal_type', 'review_state'], title: 'Default search facets' }),
  filter_queries: Type.Array(Type.String(), { default: ['portal_type'], title: 'Filter query parameters' }),
  slow_query_threshold: Type.Integer({ default: 0, minimum: 0, maximum: HOUR_MS, title: 'Slow query threshold (ms)' }),
  effective_steps: Type.Integer({ default: 60, minimum: 1, maximum: MAX_EFFECTIVE_STEPS, title: 'Effective date steps (s)' }),
  exclude_user: Type.Boolean({ default: false, title: 'Exclude user from allowedRolesAndUsers' }),
  highlight_fields: Type.Array(Type.String(), { default: [], title: 'Highlighting fields' }),
  highlight_formatter_pre: Type.String({ default: '[', title: 'Highlight formatter: pre' }),
  highlight_formatter_post: Type.String({ default: ']', title: 'Highlight formatter: post' }),
  highlight_fragsize: Type.Integer({ default: 100, minimum: 1, maximum: 100_000, title: 'Highlight fragment size' }),
  field_list: Type.Array(Type.String(), { default: [], title: 'Default fields to be returned' }),
  levenshtein_distance: Type.Integer({ default: 0, minimum: 0, maximum: 2, title: 'Levenshtein distance' }),
  atomic_updates: Type.Boolean({ default: true, title: 'Enable atomic updates' }),
  // Written into the query as `^<boost>`: Lucene reads plain decimals only, never 1e-7 or 1e+21.
  boost_rules: Type.Record(Type.String(), Type.Number({ minimum: 0.0001, maximum: 1_000_000 }), {
    default: {},
    title: 'Boost rules',
    description: 'As data, never code: `field` → boost of full-text matches in that field; `field:value` → boost of documents with that value'
  })
}, { additionalProperties: false })

export type SolrSettings = Static<typeof SolrSettingsSchema>
export type SettingName = keyof SolrSettings
/** A check of the effective settings beyond their schema: the problems found, one per setting. */
export type SettingsCheck = (settings: SolrSettings) => FieldError[]

/** Environment variables that declare a setting (they win over the control panel). */
const ENVIRONMENT: Partial<Record<keyof Config, SettingName>> = {
  SOLR_ACTIVE: 'active',
  SOLR_HOST: 'host',
  SOLR_PORT: 'port',
  SOLR_BASE: 'base',
  SOLR_LOGIN: 'login',
  SOLR_PASSWORD: 'password',
  SOLR_ASYNC: 'async_indexing',
  SOLR_AUTO_COMMIT: 'auto_commit',
  SOLR_COMMIT_WITHIN: 'commit_within',
  SOLR_INDEX_TIMEOUT: 'index_timeout',
  SOLR_SEARCH_TIMEOUT: 'search_timeout',
  SOLR_MAX_RESULTS: 'max_results'
}

export const fieldError = (field: string, message: string): FieldError => ({ field, message, error: 'ValidationError' })
const STORAGE_KEY = 'controlpanel:solr-controlpanel'
/** The notification topic of a change (core/db/notifications.ts). */
const NOTIFICATION = 'solr-settings'

/** Converts and checks declared values; an operator's mistake stops the start with a clear message. */
function declared (config: Config): Partial<SolrSettings> {
  const values: Record<string, unknown> = {}
  if (config.SOLR_CONFIG_FILE !== undefined) {
    const parsed: unknown = JSON.parse(readFileSync(config.SOLR_CONFIG_FILE, 'utf8'))
    const problems = untrustedJsonProblems(parsed).map(e => `${e.field ?? 'file'}: ${e.message}`)
    if (problems.length > 0) throw new Error(`Invalid declarative Solr settings in ${config.SOLR_CONFIG_FILE}: ${problems.join('; ')}`)
    Object.assign(values, parsed)
  }
  for (const [variable, setting] of Object.entries(ENVIRONMENT)) {
    const value = config[variable as keyof Config]
    if (value === undefined) continue
    const schema = SolrSettingsSchema.properties[setting as SettingName]
    values[setting as string] = schema.type === 'array' ? String(value).split(',').map(s => s.trim()).filter(Boolean) : value
  }
  const partial = Type.Partial(SolrSettingsSchema)
  const converted = Value.Convert(partial, values) as Record<string, unknown>
  const problems = [...Value.Errors(partial, converted)].map(e => `${e.instancePath.slice(1)}: ${e.message}`)
  if (problems.length > 0) throw new Error(`Invalid declarative Solr settings: ${problems.join('; ')}`)
  return converted as Partial<SolrSettings>
}

/**
 * The Solr control panel's values: declarative ones (environment, config
 * file) win and are locked; the rest are stored in the database and may be
 * changed at run time. Listeners hear every change, made by this process or
 * by any other (a PostgreSQL notification makes each process reload the
 * stored values), so that changes apply everywhere without a restart.
 */
export class SolrSettingsStore {
  private stored: Partial<SolrSettings> = {}
  private readonly locked: Partial<SolrSettings>
  /** `effective(stored)`, computed when `stored` changes: every write and search reads it. */
  private snapshot: Readonly<SolrSettings>
  private readonly listeners: Array<(settings: SolrSettings) => void | Promise<void>> = []
  private readonly partialCheck = Compile(Type.Partial(SolrSettingsSchema))
  private readonly checks: SettingsCheck[] = []

  constructor (private readonly db: Db, config: Config) {
    this.locked = declared(config)
    this.snapshot = this.keep({})
  }

  /** Stores these values and returns the settings they make. */
  private keep (stored: Partial<SolrSettings>): Readonly<SolrSettings> {
    this.stored = stored
    this.snapshot = Object.freeze(this.effective(stored))
    return this.snapshot
  }

  /** Reads the stored values, and from now on follows every process's changes. */
  async load (): Promise<void> {
    this.keep(await this.read())
    this.db.notifications.onChange(NOTIFICATION, () => { void this.reload() })
  }

  private async read (): Promise<Partial<SolrSettings>> {
    const { rows } = await this.db.query<{ value: Partial<SolrSettings> }>('SELECT value FROM settings WHERE key = $1', [STORAGE_KEY])
    return rows[0]?.value ?? {}
  }

  /** Another process changed the settings (or this one: then nothing is new, and nobody hears it twice). */
  private async reload (): Promise<void> {
    let next: Partial<SolrSettings>
    try {
      next = await this.read()
    } catch {
      return // the database is unavailable; the next notification (or reconnection) reads again
    }
    if (JSON.stringify(next) === JSON.stringify(this.stored)) return
    this.keep(next)
    for (const listener of this.listeners) await listener(this.current)
  }

  get current (): SolrSettings {
    return this.snapshot
  }

  /** Defaults, then the stored values, then the declarative ones. */
  private effective (stored: Partial<SolrSettings>): SolrSettings {
    return { ...Value.Default(SolrSettingsSchema, {}) as SolrSettings, ...stored, ...this.locked }
  }

  isLocked (name: string): boolean { return Object.hasOwn(this.locked, name) }

  lockedNames (): string[] { return Object.keys(this.locked) }

  /**
   * Adds a check that needs more than the schema (e.g. field names the
   * content types define); it runs on every change and at once on the
   * declarative values, so that an operator's mistake stops the start.
   */
  addCheck (check: SettingsCheck): void {
    const problems = check(this.current).filter(e => e.field !== undefined && this.isLocked(e.field))
    if (problems.length > 0) throw new Error(`Invalid declarative Solr settings: ${problems.map(e => `${e.field}: ${e.message}`).join('; ')}`)
    this.checks.push(check)
  }

  onChange (listener: (settings: SolrSettings) => void | Promise<void>): void { this.listeners.push(listener) }

  /** Validates and stores changes; a locked setting cannot be changed here. */
  async update (changes: unknown): Promise<void> {
    if (changes === null || typeof changes !== 'object' || Array.isArray(changes)) throw BadRequest('The request body must be a JSON object.')
    const errors: FieldError[] = []
    for (const key of Object.keys(changes)) {
      if (!Object.hasOwn(SolrSettingsSchema.properties, key)) errors.push(fieldError(key, `Unknown setting '${quote(key)}'.`))
      else if (this.isLocked(key)) errors.push(fieldError(key, `'${key}' is set declaratively (environment or config file) and cannot be changed here.`))
    }
    if (errors.length === 0 && !this.partialCheck.Check(changes)) {
      for (const e of this.partialCheck.Errors(changes)) errors.push(fieldError(e.instancePath.split('/')[1] ?? '', e.message))
    }
    if (errors.length > 0) throw ValidationFailed(errors)
    // Merged into the stored values under their row lock, not into this
    // process's copy: two changes of different settings at once both stay.
    const next = await this.db.transaction(async tx => {
      await tx.query('INSERT INTO settings (key, value) VALUES ($1, \'{}\') ON CONFLICT (key) DO NOTHING', [STORAGE_KEY])
      const { rows: [row] } = await tx.query<{ value: Partial<SolrSettings> }>('SELECT value FROM settings WHERE key = $1 FOR UPDATE', [STORAGE_KEY])
      const merged = { ...row.value, ...changes as Partial<SolrSettings> }
      const problems = this.checks.flatMap(check => check(this.effective(merged)).filter(e => e.field !== undefined && Object.hasOwn(changes, e.field)))
      if (problems.length > 0) throw ValidationFailed(problems)
      await tx.query('UPDATE settings SET value = $2 WHERE key = $1', [STORAGE_KEY, JSON.stringify(merged)])
      await this.db.notifications.notify(tx, NOTIFICATION)
      return merged
    })
    this.keep(next)
    for (const listener of this.listeners) await listener(this.current)
  }
}
