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
 * Text input becomes paragraphs; HTML input is sanitised. The stored value is
 * always HTML and says so: Plone reports the raw input type next to HTML
 * data, so a client that sends back what it read gets its markup escaped.
 */
export function toRichText (input: string | { data: string, 'content-type'?: string }): RichTextValue {
  const raw = typeof input === 'string' ? { data: input, 'content-type': 'text/html' } : input
  const html = raw['content-type'] === 'text/plain'
    ? raw.data.replace(/\r\n?/g, '\n').split(/\n{2,}/).map(p => `<p>${escapeHtml(p).replace(/\n/g, '<br />')}</p>`).join('')
    : sanitizeHtml(raw.data, allowed)
  return { data: html, 'content-type': 'text/html', encoding: 'utf-8' }
}

/** The characters a reader sees: what the rich-text limits count. */
export function htmlToText (html: string): string {
  return sanitizeHtml(html, { allowedTags: [], allowedAttributes: {} })
    .replace(/&nbsp;/g, ' ').replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&amp;/g, '&')
}

/** Characters of text in HTML, as a reader counts them (code points, so an emoji is one). */
export function textLength (html: string): number {
  return [...htmlToText(html)].length
}

function escapeHtml (text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;')
}
