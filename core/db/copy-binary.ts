import { Transform, type TransformCallback } from 'node:stream'

/** PostgreSQL's binary COPY signature, then a flags field and the header extension's length (int32 each). */
const SIGNATURE = Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1')
const HEADER_BYTES = SIGNATURE.length + 8

/**
 * The bytes of the one field of each row of PostgreSQL's binary COPY format
 * (`COPY (SELECT <bytea>) TO STDOUT (FORMAT binary)`), without its framing:
 * the signature, flags and header extension; then each row's field count
 * (int16, -1 after the last row), its field's length (int32) and bytes. The
 * chunks arrive cut anywhere; a field's bytes are passed on as views of them,
 * never gathered. A stream that is not this format, has other than one field
 * a row or a NULL, or ends early fails.
 */
export class BinaryCopyField extends Transform {
  private state: 'header' | 'extension' | 'count' | 'length' | 'bytes' | 'done' = 'header'
  /** The bytes of a header, count or length that a chunk cut. */
  private partial = Buffer.alloc(0)
  /** Bytes still to come: of the header extension, or of the field. */
  private remaining = 0

  override _transform (chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    try {
      this.consume(chunk)
      done()
    } catch (err) {
      done(err as Error)
    }
  }

  override _flush (done: TransformCallback): void {
    done(this.state === 'done' ? null : new Error(`The COPY stream ended inside its ${this.state}`))
  }

  private consume (chunk: Buffer): void {
    let at = 0
    // The next `n` framing bytes, once this chunk (with what earlier ones left) holds them.
    const take = (n: number): Buffer | null => {
      const wanted = n - this.partial.length
      const available = Math.min(wanted, chunk.length - at)
      this.partial = Buffer.concat([this.partial, chunk.subarray(at, at + available)])
      at += available
      if (this.partial.length < n) return null
      const whole = this.partial
      this.partial = Buffer.alloc(0)
      return whole
    }
    while (at < chunk.length) {
      switch (this.state) {
        case 'header': {
          const header = take(HEADER_BYTES)
          if (header === null) return
          if (!header.subarray(0, SIGNATURE.length).equals(SIGNATURE)) throw new Error('Not a binary COPY stream')
          this.remaining = header.readInt32BE(SIGNATURE.length + 4)
          this.state = 'extension'
          break
        }
        case 'extension': {
          const skipped = Math.min(this.remaining, chunk.length - at)
          at += skipped
          this.remaining -= skipped
          if (this.remaining === 0) this.state = 'count'
          break
        }
        case 'count': {
          const count = take(2)
          if (count === null) return
          const fields = count.readInt16BE(0)
          if (fields === -1) this.state = 'done'
          else if (fields !== 1) throw new Error(`A COPY row of ${fields} fields; one was expected`)
          else this.state = 'length'
          break
        }
        case 'length': {
          const length = take(4)
          if (length === null) return
          this.remaining = length.readInt32BE(0)
          if (this.remaining < 0) throw new Error('A NULL in the COPY stream')
          this.state = this.remaining === 0 ? 'count' : 'bytes'
          break
        }
        case 'bytes': {
          const bytes = chunk.subarray(at, at + Math.min(this.remaining, chunk.length - at))
          at += bytes.length
          this.remaining -= bytes.length
          this.push(bytes)
          if (this.remaining === 0) this.state = 'count'
          break
        }
        case 'done': throw new Error('Bytes after the end of the COPY stream')
      }
    }
  }
}
