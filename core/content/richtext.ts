import sanitizeHtml from 'sanitize-html'
import { nestsDeeperThan } from './markup-depth.js'

/**
 * Rich text is kept as sanitised HTML: sanitize-html's allow-list removes
 * scripts, event handlers and `javascript:` URLs, which a hand-written filter
 * would get wrong.
 */
const allowed: sanitizeHtml.IOptions = {
  allowedTags: [...sanitizeHtml.defaults.allowedTags, 'img', 'h1', 'h2', 'span'],
  allowedAttributes: { ...sanitizeHtml.defaults.allowedAttributes, '*': ['class', 'id', 'title', 'lang'], img: ['src', 'alt', 'width', 'height'] },
  allowedSchemes: ['http', 'https', 'mailto', 'tel']
}

export interface RichTextValue {
  data: string
  'content-type': string
  encoding: 'utf-8'
}

/**
 * Markup characters a rich text may send per character of text its field
 * allows: `details` (2,000 characters) may come as 32,000 characters of HTML,
 * room for a link every few words, and no more. Parsing is what costs:
 * sanitize-html reads 32,000 characters of the densest markup within the
 * nesting limit in about 20 ms on the reference machine (docs/performance-history.md).
 */
const MARKUP_PER_CHARACTER = 16
/** The markup of a rich text whose field sets no text limit. */
const MARKUP_WITHOUT_TEXT_LIMIT = 32_000
/** Elements nested in a rich text at most: editors write fewer than 20; the parser's cost grows faster than the nesting. */
export const MAX_MARKUP_DEPTH = 64

/** The longest markup (UTF-16 units, as a JSON string counts them) a rich text with this text limit may send. */
export const maxMarkupLength = (maxTextLength: number | undefined): number =>
  maxTextLength !== undefined ? MARKUP_PER_CHARACTER * maxTextLength : MARKUP_WITHOUT_TEXT_LIMIT

/**
 * Why a rich text's markup is refused before it is parsed, or null: longer
 * than its field's text limit can justify, or nested deeper than MAX_MARKUP_DEPTH
 * (a linear scan, core/content/markup-depth.ts). Plain text is bounded alike.
 */
export function markupProblem (data: string, maxTextLength: number | undefined): string | null {
  const longest = maxMarkupLength(maxTextLength)
  if (data.length > longest) {
    const limit = maxTextLength !== undefined ? ` (${MARKUP_PER_CHARACTER} for each of the ${maxTextLength} characters of text it may hold)` : ''
    return `The rich text is ${data.length} characters long with its markup; at most ${longest} are accepted${limit}.`
  }
  if (nestsDeeperThan(data, MAX_MARKUP_DEPTH)) return `The rich text nests elements deeper than ${MAX_MARKUP_DEPTH} levels.`
  return null
}

/** What sanitize-html's escaped text can hold, as the reader sees it (a non-breaking space counts as a space). */
const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'", nbsp: ' ' }
const unescapeText = (escaped: string): string => escaped.replace(/&(amp|lt|gt|quot|#39|nbsp);/g, (_, name: string) => ENTITIES[name])

/**
 * Text input becomes paragraphs; HTML input is sanitised. The stored value is
 * always HTML and says so: Plone reports the raw input type next to HTML
 * data, so a client that sends back what it read gets its markup escaped.
 * Callers bound the input first (`markupProblem`).
 */
export function toRichText (input: string | { data: string, 'content-type'?: string }): RichTextValue {
  const raw = typeof input === 'string' ? { data: input, 'content-type': 'text/html' } : input
  const html = raw['content-type'] === 'text/plain'
    ? raw.data.replace(/\r\n?/g, '\n').split(/\n{2,}/).map(p => `<p>${escapeHtml(p).replace(/\n/g, '<br />')}</p>`).join('')
    : sanitizeHtml(raw.data, allowed)
  return { data: html, 'content-type': 'text/html', encoding: 'utf-8' }
}

/**
 * The characters a reader sees in sanitised HTML (what the rich-text limits
 * count and the indexes search), without parsing it again: sanitize-html
 * escapes `<` and `>` in text and in attribute values, so every `<` of its
 * output starts a tag that ends at the next `>`, and the text is what lies
 * between tags — the text sanitize-html kept (test/unit/richtext.test.ts
 * checks both against sanitize-html). Linear in the HTML, and nothing kept.
 */
export function htmlToText (html: string): string {
  let text = ''
  let at = 0
  for (let open = html.indexOf('<'); open >= 0; open = html.indexOf('<', at)) {
    text += html.slice(at, open)
    const close = html.indexOf('>', open)
    if (close < 0) return unescapeText(text)
    at = close + 1
  }
  return unescapeText(text + html.slice(at))
}

/** Characters of text in sanitised HTML, as a reader counts them (code points, so an emoji is one). */
export function textLength (html: string): number {
  return [...htmlToText(html)].length
}

function escapeHtml (text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;')
}
