import sanitizeHtml from 'sanitize-html'

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
 * The text of the HTML this process sanitised or read last, so that a write
 * parses its rich text once: sanitising yields the text too, which validation
 * counts and the catalogue (and Solr's document) then index. Parsing is the
 * largest share of a create's own CPU after PostgreSQL's protocol; a few
 * dozen recent values cover the writes under way (ten at once, two rich-text
 * fields each, hold 20).
 */
const recentTexts = new Map<string, string>()
const RECENT_TEXTS = 64

function remember (html: string, text: string): string {
  if (recentTexts.size >= RECENT_TEXTS) recentTexts.delete(recentTexts.keys().next().value!)
  recentTexts.set(html, text)
  return text
}

/** What sanitize-html's escaped text can hold, as the reader sees it (a non-breaking space counts as a space). */
const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'", nbsp: ' ' }
const unescapeText = (escaped: string): string => escaped.replace(/&(amp|lt|gt|quot|#39|nbsp);/g, (_, name: string) => ENTITIES[name])

/**
 * Text input becomes paragraphs; HTML input is sanitised. The stored value is
 * always HTML and says so: Plone reports the raw input type next to HTML
 * data, so a client that sends back what it read gets its markup escaped.
 */
export function toRichText (input: string | { data: string, 'content-type'?: string }): RichTextValue {
  const raw = typeof input === 'string' ? { data: input, 'content-type': 'text/html' } : input
  if (raw['content-type'] === 'text/plain') {
    const html = raw.data.replace(/\r\n?/g, '\n').split(/\n{2,}/).map(p => `<p>${escapeHtml(p).replace(/\n/g, '<br />')}</p>`).join('')
    return { data: html, 'content-type': 'text/html', encoding: 'utf-8' }
  }
  // The text the reader will see is what sanitize-html keeps of the text: collected in the same pass.
  let text = ''
  const html = sanitizeHtml(raw.data, { ...allowed, textFilter: escaped => { text += escaped; return escaped } })
  remember(html, unescapeText(text))
  return { data: html, 'content-type': 'text/html', encoding: 'utf-8' }
}

/** The characters a reader sees: what the rich-text limits count and the indexes search. */
export function htmlToText (html: string): string {
  return recentTexts.get(html) ?? remember(html, unescapeText(sanitizeHtml(html, { allowedTags: [], allowedAttributes: {} })))
}

/** Characters of text in HTML, as a reader counts them (code points, so an emoji is one). */
export function textLength (html: string): number {
  return [...htmlToText(html)].length
}

function escapeHtml (text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;')
}
