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

  /** Moves past `length` bytes and answers where they start: a number read there makes no Buffer (a million tiny chunks make a million reads). */
  skip (length: number, what: string): number {
    if (length > this.remaining) refuse(this.format, `the data ends inside ${what}`)
    this.offset += length
    return this.offset - length
  }

  u8 (what: string): number { return this.bytes[this.skip(1, what)] }
  u16be (what: string): number { return this.bytes.readUInt16BE(this.skip(2, what)) }
  u16le (what: string): number { return this.bytes.readUInt16LE(this.skip(2, what)) }
  u24le (what: string): number { return this.bytes.readUIntLE(this.skip(3, what), 3) }
  u32be (what: string): number { return this.bytes.readUInt32BE(this.skip(4, what)) }
  u32le (what: string): number { return this.bytes.readUInt32LE(this.skip(4, what)) }
  latin1 (length: number, what: string): string { return this.take(length, what).toString('latin1') }
}
