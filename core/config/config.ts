import Type, { type Static } from 'typebox'
import Value from 'typebox/value'
import { publicOrigin } from '../content/origin.js'
import { DEFAULT_VERSIONS_KEPT, MAX_VERSIONS_KEPT } from '../content/versions.js'
import { proxyTrust } from './proxy-trust.js'

/**
 * The one environment schema of the service. It is read once, at start, into
 * `fastify.config`; nothing else reads `process.env`. Names are part of the
 * operator contract (README, docs/configuration.md): keep them.
 */
export const ConfigSchema = Type.Object({
  PORT: Type.Integer({ default: 8080, minimum: 0, maximum: 65535, description: 'TCP port to listen on' }),
  HOST: Type.String({ default: '127.0.0.1', description: 'Interface to listen on' }),
  SITE_PATH: Type.String({ default: '', pattern: '^(/[A-Za-z0-9._~-]+)*$', description: 'Path of the site root, e.g. /Plone' }),
  PUBLIC_URL: Type.String({ default: '', description: 'The public origin of the service, http(s)://host[:port] (e.g. https://cms.example.org): every URL in answers is built from it instead of Host and X-Forwarded-*; empty = from the request' }),
  DATABASE_URL: Type.String({ default: '', description: 'PostgreSQL URL; empty = embedded PostgreSQL (PGlite) in DATA_DIR' }),
  DATA_DIR: Type.String({ default: './var/data', description: 'Where the embedded PostgreSQL keeps its files' }),
  ADMIN_PASSWORD: Type.String({ default: '', description: 'Password of the first admin user; empty = random, printed once' }),
  // RFC 7518 §3.2: an HS256 key has at least 256 bits.
  JWT_SECRET: Type.String({ default: '', pattern: '^(|.{32,})$', description: 'HS256 secret of at least 32 characters; empty = generated once and kept in the database' }),
  // Bounded so that every expiry a token of this service carries is one PostgreSQL stores (revoked_sessions).
  JWT_TTL: Type.Integer({ default: 43200, minimum: 1, maximum: 31_536_000, description: 'Token lifetime in seconds, at most a year' }),
  LOG_LEVEL: Type.Union([
    Type.Literal('fatal'), Type.Literal('error'), Type.Literal('warn'), Type.Literal('info'),
    Type.Literal('debug'), Type.Literal('trace'), Type.Literal('silent')
  ], { default: 'info' }),
  CORS_ALLOW_ORIGIN: Type.String({ default: '', pattern: '^(\\s*(\\*|https?://[^\\s,/]+)/?\\s*)?(,\\s*(\\*|https?://[^\\s,/]+)/?\\s*)*$', description: 'Origins allowed to call the API from a browser, comma-separated (https://volto.example.org); * = any; empty = no CORS' }),
  TRUST_PROXY: Type.Refine(Type.String({ default: 'false', description: 'Proxies whose X-Forwarded-For/Proto/Host are honoured: false, true, a hop count, or proxy addresses and CIDR ranges, comma-separated' }),
    value => proxyTrust(value) !== undefined, () => 'must be false, true, a hop count, or a comma-separated list of IP addresses, CIDR ranges, loopback, linklocal, uniquelocal'),
  BODY_LIMIT: Type.Integer({ default: 16 * 1024 * 1024, minimum: 1024, description: 'Largest @import body in bytes, and the ceiling of every body (core/security/body-bounds.ts)' }),
  IMAGE_MAX_BYTES: Type.Integer({ default: 8 * 1024 * 1024, minimum: 1, description: 'Largest image in bytes (decoded)' }),
  FILE_MAX_BYTES: Type.Integer({ default: 8 * 1024 * 1024, minimum: 1, description: 'Largest file a JSON body may carry, in bytes (decoded)' }),
  UPLOAD_MAX_BYTES: Type.Integer({ default: 4 * 1024 * 1024 * 1024, minimum: 1, description: 'Largest file a resumable upload (@tus-upload) may bring, in bytes (Tus-Max-Size); an image\'s stays IMAGE_MAX_BYTES' }),
  UPLOAD_LIFETIME: Type.Integer({ default: 3600, minimum: 1, description: 'Seconds an unfinished resumable upload is kept after its last bytes arrived' }),
  UPLOAD_MAX_OPEN: Type.Integer({ default: 10, minimum: 1, description: 'Unfinished resumable uploads one user may have at a time' }),
  VERSIONS_KEPT: Type.Integer({ default: DEFAULT_VERSIONS_KEPT, minimum: 0, maximum: MAX_VERSIONS_KEPT, description: 'Versions kept per object of a versionable type (docs/versions.md); each edit deletes those older than the newest this many; 0: versioning off, no edit keeps a version' }),
  IMPORT_MAX_ITEMS: Type.Integer({ default: 1000, minimum: 1, description: 'Most objects one POST <folder>/@import may create' }),
  // A budget keeps its failures' times in one row, rewritten at each failure: bounded.
  LOGIN_MAX_FAILURES: Type.Integer({ default: 5, minimum: 1, maximum: 10000, description: 'Failed logins per account from unknown clients, and per known device, before throttling' }),
  LOGIN_MAX_FAILURES_PER_IP: Type.Integer({ default: 20, minimum: 1, maximum: 10000, description: 'Failed logins per client address from unknown clients before throttling' }),
  LOGIN_THROTTLE_WINDOW: Type.Integer({ default: 900, minimum: 1, description: 'Throttling window in seconds' }),
  LOGIN_DEVICE_COOKIE_TTL: Type.Integer({ default: 180 * 24 * 3600, minimum: 1, description: 'Lifetime in seconds of the cookie that makes a browser a known device of its user' }),
  RESIDENT_CATALOG: Type.Boolean({ default: true, description: 'Whether each process holds the catalogue in memory and answers listings and searches from it (docs/architecture.md, "The resident catalogue"); false = every query asks PostgreSQL' }),
  RESIDENT_FILTER_BYTES: Type.Integer({ default: 64 * 1024 * 1024, minimum: 0, description: 'Bytes the resident catalogue may hold in kept filters (a set of documents each: 125 kB a filter at a million objects); a quarter of it holds the documents of common pairs of adjacent words that phrases asked' }),
  // Caches of a web process (docs/architecture.md, "What a process keeps"), in bytes as core/heap-size.ts counts them: two to five times what they hold.
  KEPT_OBJECTS_BYTES: Type.Integer({ default: 128 * 1024 * 1024, minimum: 0, description: 'Bytes of objects kept for GET and HEAD (a talk some 6 kB as counted: about 20,000 talks)' }),
  KEPT_ROWS_BYTES: Type.Integer({ default: 64 * 1024 * 1024, minimum: 0, description: 'Bytes of catalogue rows kept for the pages of listings and searches (a talk\'s row some 1.5 kB as counted: about 40,000 rows)' }),
  // Operators' metrics (docs/operations.md, "Metrics"): never on the service's own port, never public unless asked.
  METRICS_PORT: Type.Optional(Type.Integer({ minimum: 0, maximum: 65535, description: 'Port of the Prometheus metrics endpoint (GET /metrics), a listener of its own; unset = no metrics; 0 = any free port' })),
  METRICS_HOST: Type.String({ default: '127.0.0.1', description: 'Interface the metrics endpoint listens on (loopback unless an operator opens it)' }),
  METRICS_TOKEN: Type.String({ default: '', description: 'When set, GET /metrics must send Authorization: Bearer <token>' }),
  // Tracing (docs/operations.md, "Tracing"): OpenTelemetry's own variables. These four decide whether a process
  // traces (app/tracing.ts); the SDK reads them and the other OTEL_* variables itself.
  OTEL_SDK_DISABLED: Type.String({ default: '', description: 'true = no tracing, whatever else is set' }),
  OTEL_TRACES_EXPORTER: Type.String({ default: '', description: 'Where spans go: otlp, console, zipkin (comma-separated), or none; set (not none) = tracing on' }),
  OTEL_EXPORTER_OTLP_ENDPOINT: Type.String({ default: '', description: 'The OTLP receiver of every signal (e.g. http://collector:4318); set = tracing on' }),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: Type.String({ default: '', description: 'The OTLP receiver of the traces (the full URL, e.g. http://collector:4318/v1/traces); set = tracing on' }),
  // Stopping (docs/operations.md, "Restarts and rolling deploys"). Bounded so that a timer can hold them (an hour).
  SHUTDOWN_DRAIN_MS: Type.Integer({ default: 5000, minimum: 0, maximum: 3_600_000, description: 'After SIGTERM, how long a web process on a PostgreSQL server keeps serving while @health answers 503 (stopping), so that load balancers take it out before it stops accepting; SIGINT and the embedded database skip it' }),
  SHUTDOWN_TIMEOUT_MS: Type.Integer({ default: 20000, minimum: 1, maximum: 3_600_000, description: 'Then how long a process waits for the requests (web) or index batches (worker) in flight before it cuts them and exits 1' }),
  REDIS_URL: Type.String({ default: 'redis://127.0.0.1:6379', description: 'Redis for the asynchronous index queue' }),
  INDEX_WORKER: Type.Union([Type.Literal('inline'), Type.Literal('external')], { default: 'external' }),
  // Declarative Solr settings (docs/search.md, "Search settings"). Unset means "not declared": the
  // control panel value applies. Parsed by the settings module, not here,
  // because each one is optional and typed by the settings schema.
  SOLR_ACTIVE: Type.Optional(Type.String()),
  SOLR_HOST: Type.Optional(Type.String()),
  SOLR_PORT: Type.Optional(Type.String()),
  SOLR_BASE: Type.Optional(Type.String()),
  SOLR_LOGIN: Type.Optional(Type.String()),
  SOLR_PASSWORD: Type.Optional(Type.String()),
  SOLR_ASYNC: Type.Optional(Type.String()),
  SOLR_AUTO_COMMIT: Type.Optional(Type.String()),
  SOLR_COMMIT_WITHIN: Type.Optional(Type.String()),
  SOLR_INDEX_TIMEOUT: Type.Optional(Type.String()),
  SOLR_SEARCH_TIMEOUT: Type.Optional(Type.String()),
  SOLR_MAX_RESULTS: Type.Optional(Type.String()),
  SOLR_CONFIG_FILE: Type.Optional(Type.String({ description: 'JSON file with declarative Solr settings' }))
})

export type Config = Static<typeof ConfigSchema>

export class ConfigError extends Error {}

/** Reads, converts and checks the environment once. Throws a readable error. */
export function loadConfig (env: Record<string, string | undefined> = process.env): Config {
  const raw: Record<string, unknown> = {}
  for (const key of Object.keys(ConfigSchema.properties)) {
    const value = env[key]
    if (value !== undefined && value !== '') raw[key] = value
  }
  const converted = Value.Convert(ConfigSchema, Value.Default(ConfigSchema, raw))
  if (!Value.Check(ConfigSchema, converted)) {
    const problems = [...Value.Errors(ConfigSchema, converted)].map(e => {
      const name = e.instancePath.slice(1)
      const { description } = (ConfigSchema.properties as Record<string, { description?: string }>)[name] ?? {}
      return `${name || 'configuration'}: ${e.message}${description !== undefined ? ` (${description})` : ''}`
    })
    throw new ConfigError(`Invalid configuration: ${problems.join('; ')}`)
  }
  const config = converted as Config
  if (config.PUBLIC_URL !== '' && publicOrigin(config.PUBLIC_URL) === null) {
    throw new ConfigError(`Invalid configuration: PUBLIC_URL: '${config.PUBLIC_URL}' is not http(s)://host[:port] with a valid host (RFC 3986) and nothing after it`)
  }
  return config
}
