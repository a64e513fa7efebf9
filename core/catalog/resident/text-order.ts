/** A UTF-16 unit's place in code-point order: a surrogate (0xD800–0xDFFF) stands for a code point above 0xFFFF, above every other unit. */
const codePointRank = (unit: number): number => unit >= 0xd800 && unit <= 0xdfff ? unit + 0x10000 : unit

/** Code-point order, as PostgreSQL compares text under the C collation (and Python's ZCatalog compares strings); JavaScript's `<` compares UTF-16 units. */
export function compareText (a: string, b: string): number {
  // Shared values (a creator, a state) are one string: equal ones are found without reading them.
  if (a === b) return 0
  const n = Math.min(a.length, b.length)
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i)
    const y = b.charCodeAt(i)
    if (x !== y) return codePointRank(x) - codePointRank(y)
  }
  return a.length - b.length
}
