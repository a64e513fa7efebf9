/**
 * The bytes of `source` in slices of `size` bytes (the last one shorter), as
 * they arrive, holding at most one slice: how a stream is written a
 * fixed-size statement at a time. When the source fails (a client that went
 * away), what it brought of the slice under way is yielded before its error
 * is thrown, so that nothing received is lost.
 */
export async function * fixedSlices (source: AsyncIterable<Buffer>, size: number): AsyncGenerator<Buffer> {
  let pending: Buffer[] = []
  let pendingBytes = 0
  try {
    for await (const chunk of source) {
      for (let at = 0; at < chunk.length;) {
        const taken = chunk.subarray(at, at + size - pendingBytes)
        pending.push(taken)
        pendingBytes += taken.length
        at += taken.length
        if (pendingBytes === size) {
          yield Buffer.concat(pending, size)
          pending = []
          pendingBytes = 0
        }
      }
    }
  } catch (err) {
    if (pendingBytes > 0) yield Buffer.concat(pending, pendingBytes)
    throw err
  }
  if (pendingBytes > 0) yield Buffer.concat(pending, pendingBytes)
}
