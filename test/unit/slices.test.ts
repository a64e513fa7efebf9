import fc from 'fast-check'
import t from 'tap'
import { fixedSlices } from '../../core/slices.js'

/**
 * core/slices.ts against what slicing means, written apart from it: the
 * slices put together are the bytes sent, every slice but the last is
 * `size` bytes long, and a source that fails mid-way gives what it brought
 * before its error.
 */
async function * chunksOf (chunks: Buffer[], failure?: Error): AsyncGenerator<Buffer> {
  for (const chunk of chunks) yield chunk
  if (failure !== undefined) throw failure
}

const chunks = fc.array(fc.uint8Array({ maxLength: 300 }).map(bytes => Buffer.from(bytes)), { maxLength: 20 })

t.test('the slices are the bytes, cut every `size` bytes', async () => {
  await fc.assert(fc.asyncProperty(chunks, fc.integer({ min: 1, max: 257 }), async (sent, size) => {
    const slices: Buffer[] = []
    for await (const slice of fixedSlices(chunksOf(sent), size)) slices.push(Buffer.from(slice))
    const whole = Buffer.concat(sent)
    const expected = Math.ceil(whole.length / size)
    return Buffer.concat(slices).equals(whole) && slices.length === expected &&
      slices.every((slice, i) => i === slices.length - 1 ? slice.length > 0 && slice.length <= size : slice.length === size)
  }), { numRuns: 300 })
})

t.test('a source that fails: every byte it brought comes out, then its error', async () => {
  await fc.assert(fc.asyncProperty(chunks, fc.integer({ min: 1, max: 257 }), async (sent, size) => {
    const slices: Buffer[] = []
    const failure = new Error('the client went away')
    let thrown: unknown
    try {
      for await (const slice of fixedSlices(chunksOf(sent, failure), size)) slices.push(Buffer.from(slice))
    } catch (err) {
      thrown = err
    }
    return thrown === failure && Buffer.concat(slices).equals(Buffer.concat(sent))
  }), { numRuns: 300 })
})
