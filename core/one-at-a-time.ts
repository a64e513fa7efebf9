/**
 * Tasks run one at a time per key, in the order they were asked for; tasks
 * of different keys run together. A key holds memory only while a task of it
 * runs or waits.
 */
export class OneAtATime {
  /** Per key, the end of its last task asked for (settled, never rejected). */
  private readonly tails = new Map<string, Promise<void>>()

  /** Runs `task` once every task of `key` asked for before it has ended; `waited`: whether there was one. */
  async run<T> (key: string, task: (waited: boolean) => Promise<T>): Promise<T> {
    const before = this.tails.get(key)
    const result = before === undefined ? task(false) : before.then(async () => await task(true))
    const tail = result.then(() => {}, () => {})
    this.tails.set(key, tail)
    try {
      return await result
    } finally {
      if (this.tails.get(key) === tail) this.tails.delete(key)
    }
  }
}
