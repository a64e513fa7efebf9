import type { Logger } from '../../log.js'
import type { Outbox } from '../outbox.js'
import { Loop } from '../loop.js'
import type { SolrSettings } from '../../solr/settings.js'
import type { IndexQueue } from './index-queue.js'
import { OutageLog } from '../../log.js'

/** How often the outbox is looked at (ms). */
const INTERVAL_MS = 2_000
/** Operations younger than this are left to the request that recorded them, which queues them itself (ms). */
const GRACE_MS = 5_000

export interface OutboxRelayOptions {
  outbox: Outbox
  queue: IndexQueue
  settings: () => SolrSettings
  log: Logger
}

/**
 * Wakes the workers for what waits in the outbox: every operation committed
 * in PostgreSQL reaches Solr even when Redis was down at the time of the
 * write, lost its data, or a process died between the commit and the
 * enqueue. A wake-up while one waits costs nothing (deduplication), so every
 * process may run a relay. Operations whose document Solr refused are left
 * alone until a new operation or `retry` comes.
 */
export class OutboxRelay {
  private readonly loop = new Loop(async () => await this.pass())
  private readonly outage: OutageLog

  constructor (private readonly o: OutboxRelayOptions) {
    this.outage = new OutageLog(o.log, 'The outbox relay', 'it tries again; the operations stay in the outbox')
  }

  /** One pass: wakes the workers when operations wait; answers whether it did. */
  async relay (): Promise<boolean> {
    if (!this.o.settings().active || !await this.o.outbox.waiting(GRACE_MS)) return false
    await this.o.queue.wake(0)
    return true
  }

  /** Starts the loop (idempotent); its timer does not keep the process alive. */
  start (): void {
    this.loop.start(INTERVAL_MS)
  }

  async stop (): Promise<void> {
    await this.loop.stop()
  }

  private async pass (): Promise<number> {
    try {
      await this.relay()
      this.outage.recovered()
    } catch (err) {
      this.outage.failed(err)
    }
    return INTERVAL_MS
  }
}
