/**
 * The logging the core needs: pino's interface, which Fastify's logger (and
 * the worker's and the CLI's) implement. The core names no logging library.
 */
export interface LogFn {
  (object: object, message?: string): void
  (message: string): void
}
export interface Logger {
  error: LogFn
  warn: LogFn
  info: LogFn
  debug: LogFn
}

/**
 * Logs a backend's outage once, when it starts, and its end once: a Redis or
 * Solr that is down for an hour must not write one line per request, per
 * reconnection attempt or per job.
 */
export class OutageLog {
  private down = false

  /**
   * `what` names the backend; `consequence` tells the operator what happens
   * meanwhile; `level` is the start's (an end is `info`).
   */
  constructor (private readonly log: Logger, private readonly what: string, private readonly consequence: string,
    private readonly level: 'warn' | 'error' = 'warn') {}

  get isDown (): boolean {
    return this.down
  }

  failed (err: unknown): void {
    if (this.down) return
    this.down = true
    this.log[this.level]({ err }, `${this.what} failed: ${err instanceof Error ? err.message : String(err)}; ${this.consequence}`)
  }

  recovered (): void {
    if (!this.down) return
    this.down = false
    this.log.info(`${this.what} answers again`)
  }
}
