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
/** Objects offered per pass; the next pass goes on from there, so a large outbox is covered in turn. */
const PAGE = 1_000

export interface OutboxRelayOptions {
  outbox: Outbox
  queue: IndexQueue
  settings: () => SolrSettings
  log: Logger
}

/**
 * Moves the outbox into the queue: every operation committed in PostgreSQL
 * reaches the queue even when Redis was down at the time of the write, lost
 * its data, or a process died between the commit and the enqueue. Offering
 * an object that already has a job costs nothing (jobs are deduplicated by
 * UID), so every process may run a relay. Operations whose document Solr
 * refused are left alone until a new operation or `retry` comes.
 */
export class OutboxRelay {
  private readonly loop = new Loop(async () => await this.pass())
  /** The smallest outbox id of the last object offered: the next page starts after it. */
  private after = 0
  private readonly outage: OutageLog

  constructor (private readonly o: OutboxRelayOptions) {
    this.outage = new OutageLog(o.log, 'The outbox relay', 'it tries again; the operations stay in the outbox')
  }

  /** One pass: offers a page of objects with pending operations, oldest first; returns how many. */
  async relay (): Promise<number> {
    if (!this.o.settings().active) return 0
    const rows = await this.o.outbox.page(this.after, GRACE_MS, PAGE)
    this.after = rows.length < PAGE ? 0 : rows[rows.length - 1].first
    await this.o.queue.enqueue(rows.map(r => r.uid))
    return rows.length
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
