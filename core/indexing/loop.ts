/**
 * A background task that runs again after the delay its pass answers; the
 * timer does not keep the process alive. `schedule` brings the next pass
 * forward (a write failed, settings changed); `stop` waits for a pass in
 * progress. A pass must not throw: it handles its own failures.
 */
export class Loop {
  private timer: NodeJS.Timeout | null = null
  private running: Promise<void> | null = null
  private stopped = true

  constructor (private readonly pass: () => Promise<number>) {}

  /** Starts the loop (idempotent): the first pass after `delayMs`. */
  start (delayMs: number): void {
    this.stopped = false
    this.schedule(delayMs)
  }

  schedule (delayMs: number): void {
    if (this.stopped) return
    if (this.timer !== null) clearTimeout(this.timer)
    this.timer = setTimeout(() => {
      this.timer = null
      this.running = this.pass().then(next => { this.schedule(next) })
    }, delayMs)
    this.timer.unref()
  }

  async stop (): Promise<void> {
    this.stopped = true
    if (this.timer !== null) clearTimeout(this.timer)
    this.timer = null
    await this.running
  }
}
