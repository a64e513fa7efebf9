interface Waiting<K> { key: K, resolve: () => void, reject: (err: Error) => void }

/**
 * Gathers keys that arrive close together into one call of `run`: a BullMQ
 * worker runs many jobs at once, each of which names one object, and Solr
 * should get one update request for all of them rather than one each. A
 * batch leaves when it is full or `lingerMs` after its first key. `run`
 * answers with the keys that failed (the others succeeded); when it throws,
 * every key of the batch fails with that error.
 */
export class Batcher<K> {
  private waiting: Array<Waiting<K>> = []
  private timer: NodeJS.Timeout | null = null

  constructor (private readonly size: number, private readonly lingerMs: number, private readonly run: (keys: K[]) => Promise<Map<K, Error>>) {}

  /** Resolves when the batch holding `key` succeeded for it; rejects with its failure. */
  async add (key: K): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      this.waiting.push({ key, resolve, reject })
      if (this.waiting.length >= this.size) this.send()
      else this.timer ??= setTimeout(() => { this.send() }, this.lingerMs)
    })
  }

  private send (): void {
    if (this.timer !== null) clearTimeout(this.timer)
    this.timer = null
    const batch = this.waiting
    this.waiting = []
    this.run(batch.map(w => w.key)).then(failures => {
      for (const w of batch) {
        const failure = failures.get(w.key)
        if (failure === undefined) w.resolve()
        else w.reject(failure)
      }
    }, (err: unknown) => {
      const failure = err instanceof Error ? err : new Error(String(err))
      for (const w of batch) w.reject(failure)
    })
  }
}
