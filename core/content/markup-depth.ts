/** Elements that hold nothing (void elements, as htmlparser2 lists them): no end tag, no depth. */
const VOID = new Set(['area', 'base', 'basefont', 'br', 'col', 'command', 'embed', 'frame', 'hr', 'img', 'input', 'isindex', 'keygen', 'link', 'meta', 'param', 'source', 'track', 'wbr'])

const PARAGRAPH = new Set(['p'])
const FORM_CONTROLS = new Set(['input', 'option', 'optgroup', 'select', 'button', 'datalist', 'textarea'])
const TABLE_SECTIONS = new Set(['thead', 'tbody'])
const DEFINITIONS = new Set(['dd', 'dt'])
const RUBY = new Set(['rt', 'rp'])
/**
 * The elements a start tag closes while they are the innermost open one
 * (htmlparser2's `openImpliesClose`, which sanitize-html parses with):
 * `<li>a<li>b` is two items, `<p>a<div>b` a paragraph and a division.
 */
const CLOSED_BY = new Map<string, Set<string>>([
  ['tr', new Set(['tr', 'th', 'td'])], ['th', new Set(['th'])], ['td', new Set(['thead', 'th', 'td'])], ['body', new Set(['head', 'link', 'script'])],
  ['li', new Set(['li'])], ['option', new Set(['option'])], ['optgroup', new Set(['optgroup', 'option'])], ['dd', DEFINITIONS], ['dt', DEFINITIONS],
  ['rt', RUBY], ['rp', RUBY], ['tbody', TABLE_SECTIONS], ['tfoot', TABLE_SECTIONS],
  ...['select', 'input', 'output', 'button', 'datalist', 'textarea'].map(name => [name, FORM_CONTROLS] as const),
  ...['p', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'address', 'article', 'aside', 'blockquote', 'details', 'div', 'dl', 'fieldset', 'figcaption',
    'figure', 'footer', 'form', 'header', 'hr', 'main', 'nav', 'ol', 'pre', 'section', 'table', 'ul'].map(name => [name, PARAGRAPH] as const)
])

const NOTHING = new Set<string>()

/**
 * Elements whose content htmlparser2 reads as text up to their end tag
 * (`</script` and then `>` or a space, in any case), unless their start tag
 * closes itself (`<script/>`): `<script><!--</script><p>` holds no comment.
 */
const RAW_TEXT = new Set(['script', 'style', 'title', 'textarea', 'xmp'])

/**
 * Inside `svg` or `math` (htmlparser2's foreign context) a start tag that
 * closes itself (`<style a="b"/>`) closes its element; the HTML integration
 * elements (`foreignObject`, `title`, …) open HTML again. htmlparser2 keeps
 * these on a stack of their own, pushed by their start tags and popped by
 * their end tags whether or not the element is open.
 */
const FOREIGN = new Set(['svg', 'math'])
const HTML_INTEGRATION = new Set(['mi', 'mo', 'mn', 'ms', 'mtext', 'annotation-xml', 'foreignobject', 'desc', 'title'])

const GT = 0x3e
const SLASH = 0x2f
const EQUALS = 0x3d
const isLetter = (c: number): boolean => (c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a)
/** HTML's whitespace, as htmlparser2's tokenizer reads it. */
const isSpace = (c: number): boolean => c === 0x20 || c === 0x0a || c === 0x09 || c === 0x0c || c === 0x0d

/**
 * Where the start tag whose name ends at `at` ends (the offset after its
 * `>`), reading its attributes as htmlparser2's tokenizer does: a quote opens
 * a value only right after `=`; negative when it closes itself (`/>`, a
 * slash between attributes: the offset after it, negated). 0 when the
 * markup ends first.
 */
function endOfStartTag (markup: string, at: number): number {
  const code = (i: number): number => markup.charCodeAt(i)
  const n = markup.length
  let i = at
  for (;;) {
    const between = i
    while (i < n && (isSpace(code(i)) || code(i) === SLASH)) i++
    if (i >= n) return 0
    if (code(i) === GT) return i > between && code(i - 1) === SLASH ? -(i + 1) : i + 1
    // An attribute's name: its first character whatever it is (`=` too), then up to a space, `/`, `>` or `=`.
    i++
    while (i < n && !isSpace(code(i)) && code(i) !== SLASH && code(i) !== GT && code(i) !== EQUALS) i++
    while (i < n && isSpace(code(i))) i++
    if (i >= n || code(i) !== EQUALS) continue
    i++
    while (i < n && isSpace(code(i))) i++
    if (i >= n) return 0
    const quote = markup[i]
    if (quote === '"' || quote === "'") {
      const closing = markup.indexOf(quote, i + 1)
      if (closing < 0) return 0
      i = closing + 1
    } else {
      while (i < n && !isSpace(code(i)) && code(i) !== GT) i++
    }
  }
}

/** Where the end tag of a raw-text element `name` begins (`</name` and then `>` or a space, in any case), from `at` on; -1 when there is none. */
function endOfRawText (markup: string, at: number, name: string): number {
  for (let i = markup.indexOf('</', at); i >= 0; i = markup.indexOf('</', i + 1)) {
    const after = markup.charCodeAt(i + 2 + name.length)
    if (markup.slice(i + 2, i + 2 + name.length).toLowerCase() === name && (after === GT || isSpace(after))) return i
  }
  return -1
}

/**
 * Whether markup nests deeper than `limit` elements, by one linear pass over
 * it, before an HTML parser builds anything: the cost of sanitize-html (and
 * of htmlparser2 under it) grows faster than the nesting — 100,000 nested
 * `<div>`s held the process for 23 s. The pass follows the parser's rules
 * that keep legitimate markup shallow (void elements; an end tag closes up
 * to its start tag; start tags that close open elements, `CLOSED_BY`) and
 * counts every other start tag one level deeper, but for a self-closing one
 * in foreign context (`FOREIGN`), so that it never finds
 * markup shallower than the parser builds it (test/unit/markup-depth.test.ts
 * holds it to htmlparser2). It skips only what the parser reads as no tags:
 * the text of raw-text elements (`RAW_TEXT`), comments (`<!--` to `-->`, whose dashes may be its own: `<!-->`),
 * character data (`<![CDATA[` to `]]>`), declarations and instructions (`<!…>`, `<?…>`), end tags' insides and
 * what `</` starts without a letter (`</<p>` is a comment),
 * attribute values in quotes; a tag the markup ends inside is the end (the
 * parser reads the rest as text).
 */
export function nestsDeeperThan (markup: string, limit: number): boolean {
  const open: string[] = []
  /** Whether a self-closing start tag closes its element, innermost last (`FOREIGN`). */
  const foreign: boolean[] = [false]
  for (let at = markup.indexOf('<'); at >= 0; at = markup.indexOf('<', at)) {
    const next = markup.charCodeAt(at + 1)
    if (next === SLASH) {
      // After `</` and any spaces: a `>` drops it all, a letter starts an end tag's name (up to a space or `>`), anything else is a comment up to `>`.
      let from = at + 2
      while (from < markup.length && isSpace(markup.charCodeAt(from))) from++
      if (markup.charCodeAt(from) === GT) {
        at = from + 1
        continue
      }
      if (isLetter(markup.charCodeAt(from))) {
        let nameEnd = from
        while (nameEnd < markup.length && !isSpace(markup.charCodeAt(nameEnd)) && markup.charCodeAt(nameEnd) !== GT) nameEnd++
        // A name the markup ends inside is no tag.
        if (nameEnd >= markup.length) return false
        const name = markup.slice(from, nameEnd).toLowerCase()
        if (FOREIGN.has(name) || HTML_INTEGRATION.has(name)) foreign.pop()
        const start = open.lastIndexOf(name)
        if (start >= 0) open.length = start
        // A `</p>` without its start is an empty paragraph, opened and closed here.
        else if (name === 'p' && open.length >= limit) return true
      }
      at = markup.indexOf('>', from)
      if (at < 0) return false
      continue
    }
    if (!isLetter(next)) {
      // A comment ends at `-->`, character data (`<![CDATA[`) at `]]>`, a declaration (`<!doctype`) or instruction (`<?xml`) at `>`; any other `<` is text.
      const end = markup.startsWith('<!--', at)
        ? markup.indexOf('-->', at + 2)
        : markup.startsWith('<![CDATA[', at) ? markup.indexOf(']]>', at + 9) : next === 0x21 || next === 0x3f ? markup.indexOf('>', at) : at
      if (end < 0) return false
      at = end + 1
      continue
    }
    let nameEnd = at + 1
    while (nameEnd < markup.length && !isSpace(markup.charCodeAt(nameEnd)) && markup.charCodeAt(nameEnd) !== SLASH && markup.charCodeAt(nameEnd) !== GT) nameEnd++
    const name = markup.slice(at + 1, nameEnd).toLowerCase()
    const tagEnd = endOfStartTag(markup, nameEnd)
    if (tagEnd === 0) return false
    at = Math.abs(tagEnd)
    const closes = CLOSED_BY.get(name) ?? NOTHING
    while (open.length > 0 && closes.has(open.at(-1)!)) open.pop()
    if (VOID.has(name)) continue
    open.push(name)
    if (open.length > limit) return true
    if (FOREIGN.has(name)) foreign.push(true)
    else if (HTML_INTEGRATION.has(name)) foreign.push(false)
    if (tagEnd < 0 && foreign.at(-1) === true) open.pop()
    if (tagEnd > 0 && RAW_TEXT.has(name)) {
      // Its text runs to its end tag, which the next turn reads; without one, the rest of the markup is text.
      at = endOfRawText(markup, at, name)
      if (at < 0) return false
    }
  }
  return false
}
