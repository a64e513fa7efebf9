/**
 * What a value holds of the heap, estimated from above (bytes, V8 on 64 bits):
 * every string as if it took two bytes a character, every number boxed,
 * every property of an object as a property of a large one (a hash table
 * entry with room to grow, and its own copy of its key). What a process keeps
 * (core/kept.ts) is budgeted in these bytes: the estimate counts too much
 * (two to five times what rows hold; a shared string or object once per place
 * it appears), never too little for plain data — strings, numbers, dates,
 * buffers, arrays and objects of them, as rows and JSON are made of
 * (test/unit/heap-size.test.ts holds it to V8's own count).
 */
const HEADER = 32
const SLOT = 8
const PROPERTY = 96
const STRING_HEADER = 40
const BOXED = 16

export const stringBytes = (text: string): number => STRING_HEADER + 2 * text.length

export function heapBytes (value: unknown): number {
  let bytes = 0
  const pending: unknown[] = [value]
  while (pending.length > 0) {
    const item = pending.pop()
    if (typeof item === 'string') bytes += stringBytes(item)
    else if (typeof item === 'number' || typeof item === 'bigint') bytes += BOXED
    else if (typeof item !== 'object' || item === null) bytes += SLOT
    else if (item instanceof Date) bytes += HEADER + BOXED
    else if (ArrayBuffer.isView(item)) bytes += HEADER + item.byteLength
    else if (Array.isArray(item)) {
      bytes += HEADER + SLOT * item.length
      for (const element of item) pending.push(element)
    } else {
      for (const [key, property] of Object.entries(item)) {
        bytes += PROPERTY + stringBytes(key)
        pending.push(property)
      }
      bytes += HEADER
    }
  }
  return bytes
}
