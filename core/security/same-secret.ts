import { timingSafeEqual } from 'node:crypto'

/** Whether two secrets (tokens) are the same, in a time that does not tell how much of them matched. */
export function sameSecret (a: string, b: string): boolean {
  const x = Buffer.from(a)
  const y = Buffer.from(b)
  return x.length === y.length && timingSafeEqual(x, y)
}
