import { refuse } from './refusal.js'

/**
 * Reads a file front to back, each read checked against its end: a read past
 * the end refuses the image as cut short, naming what it was reading.
 */
export class Cursor {
  constructor (readonly bytes: Buffer, readonly format: string, public offset = 0, readonly end = bytes.length) {}

  get remaining (): number { return this.end - this.offset }

  /** The next `length` bytes of `what`. */
  take (length: number, what: string): Buffer {
    if (length > this.remaining) refuse(this.format, `the data ends inside ${what}`)
    const taken = this.bytes.subarray(this.offset, this.offset + length)
    this.offset += length
    return taken
  }

  u8 (what: string): number { return this.take(1, what)[0] }
  u16be (what: string): number { return this.take(2, what).readUInt16BE() }
  u16le (what: string): number { return this.take(2, what).readUInt16LE() }
  u24le (what: string): number { return this.take(3, what).readUIntLE(0, 3) }
  u32be (what: string): number { return this.take(4, what).readUInt32BE() }
  u32le (what: string): number { return this.take(4, what).readUInt32LE() }
  latin1 (length: number, what: string): string { return this.take(length, what).toString('latin1') }
}
