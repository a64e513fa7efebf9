import fc from 'fast-check'
import t from 'tap'
import sanitizeHtml from 'sanitize-html'
import { MAX_MARKUP_DEPTH, htmlToText, markupProblem, maxMarkupLength, textLength, toRichText } from '../../core/content/richtext.js'

t.test('HTML is sanitised', async t => {
  const dirty = '<p onclick="steal()" class="lead">Hi <a href="javascript:alert(1)">x</a> <a href="https://plone.org">Plone</a></p>' +
    '<script>alert(1)</script><style>p{}</style><iframe src="https://evil.example"></iframe><img src="https://x/y.png" onerror="alert(1)">'
  const { data } = toRichText(dirty)
  t.notMatch(data, /script|onclick|onerror|javascript|iframe|style/)
  t.match(data, '<p class="lead">Hi')
  t.match(data, '<a href="https://plone.org">Plone</a>')
  t.match(data, '<img src="https://x/y.png" />')
})

t.test('a string and {data, content-type, encoding} are the same input', async t => {
  const html = '<p><strong>Bold</strong> move</p>'
  t.same(toRichText(html), { data: html, 'content-type': 'text/html', encoding: 'utf-8' })
  t.same(toRichText({ data: html, 'content-type': 'text/html' }), toRichText(html))
})

t.test('plain text becomes escaped paragraphs, labelled as the HTML it now is', async t => {
  t.same(toRichText({ data: 'a < b & c\r\nnext line\r\n\r\nsecond', 'content-type': 'text/plain' }),
    { data: '<p>a &lt; b &amp; c<br />next line</p><p>second</p>', 'content-type': 'text/html', encoding: 'utf-8' })
})

t.test('what was read can be sent back unchanged', async t => {
  for (const input of ['<p>Caf&eacute; &amp; <em>cr&egrave;me</em> &lt;3</p>', { data: 'x <y>\n\nz', 'content-type': 'text/plain' }]) {
    const once = toRichText(input)
    t.same(toRichText(once), once, JSON.stringify(input))
  }
})

t.test('text length counts what a reader sees', async t => {
  t.equal(htmlToText('<p>a &amp; b &lt;c&gt; &quot;d&quot;</p>'), 'a & b <c> "d"')
  t.equal(textLength('<h1>abc</h1><p><strong>de</strong></p>'), 5, 'markup is not counted')
  t.equal(textLength(toRichText('<p>&eacute;&nbsp;&amp;</p>').data), 3, 'an entity is one character')
  t.equal(textLength('<p>🎉🎉</p>'), 2, 'an emoji is one character')
  t.equal(textLength(toRichText('<script>' + 'x'.repeat(5000) + '</script>ok').data), 2, 'removed content does not count')
})

t.test('the text kept while sanitising is the text of the sanitised HTML', async t => {
  // What sanitize-html keeps as text when it keeps no tags at all: the definition the write's single pass must meet.
  const textOf = (html: string): string => sanitizeHtml(html, { allowedTags: [], allowedAttributes: {} })
    .replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&')
  const inputs = [
    '<p>Caf&eacute; &amp; <em>cr&egrave;me</em> &lt;3 &nbsp;&#x1F389; &#39;q&#39; &quot;d&quot;</p>',
    '<p onclick="x()">a<script>alert("<p>no</p>")</script>b<style>p{}</style>c</p>',
    '<textarea>&lt;b&gt;t</textarea><option>&lt;script&gt;o</option><xmp><b>x</b></xmp><noscript>n</noscript>',
    '<!-- comment --><![CDATA[data]]><p>a<p>b<div>c<span>d</div>e',
    '<a title="x>y" href="javascript:alert(1)">link</a><img alt="a>b" src="https://x/y.png">after',
    'a < b && c > d &amp;lt; &0; &unknown; & <notatag',
    '<svg><title>svg title</title><text>t</text></svg><math><mi>x</mi></math><iframe>i</iframe>',
    '<h1>Title</h1>\n<ul><li>one</li><li>two\u00a0three</li></ul><pre>  pre\n  text </pre><br>tail 🎉',
    '<table><tr><td>cell</td></tr></table><p>x</p><plaintext><p>rest is text'
  ]
  for (const input of inputs) {
    const { data } = toRichText(input)
    t.equal(htmlToText(data), textOf(data), input)
  }
})

t.test('the text of sanitised HTML is what sanitize-html kept as text, for any markup', async t => {
  // The oracle: the text sanitize-html hands its textFilter while it sanitises (escaped as in its output).
  const unescape = (text: string): string => text.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&nbsp;/g, ' ').replace(/&amp;/g, '&')
  const piece = fc.oneof(
    fc.constantFrom('<p>', '</p>', '<b>', '</b>', '<script>', '</script>', '<style>', '</style>', '<textarea>', '</textarea>', '<option>', '<!--', '-->',
      '<![CDATA[', ']]>', '<a href="javascript:x">', '<a title=">">', '</a>', '<img src=x alt="<b>" onerror=y>', '<br/>', '&amp;', '&lt;', '&gt;',
      '&nbsp;', '&#39;', '&#x3c;', '&eacute;', '&bogus;', '<', '>', '"', "'", '&', '\u00a0', '<svg><title>', '</svg>', '<xmp>', '<iframe>',
      '<title>', '<plaintext>', '<!doctype html>', '<?xml ?>', '<table><tr><td>', '<div', ' ', '🎉'),
    fc.string({ maxLength: 4 }))
  fc.assert(fc.property(fc.array(piece, { maxLength: 40 }), pieces => {
    let kept = ''
    const html = sanitizeHtml(pieces.join(''), {
      allowedTags: [...sanitizeHtml.defaults.allowedTags, 'img', 'h1', 'h2', 'span'],
      allowedAttributes: { ...sanitizeHtml.defaults.allowedAttributes, '*': ['class', 'id', 'title', 'lang'], img: ['src', 'alt', 'width', 'height'] },
      allowedSchemes: ['http', 'https', 'mailto', 'tel'],
      textFilter: text => { kept += text; return text }
    })
    t.equal(html, toRichText(pieces.join('')).data, 'the service sanitises with these options')
    return htmlToText(html) === unescape(kept)
  }), { numRuns: 3000 })
})

t.test('markup is bounded by its field\'s text limit and by its nesting, before it is parsed', async t => {
  t.equal(maxMarkupLength(2000), 32_000, 'details: 16 characters of markup for each of its 2,000 of text')
  t.equal(markupProblem('x'.repeat(32_000), 2000), null, 'at the limit')
  t.match(markupProblem('x'.repeat(32_001), 2000), /32001 characters long with its markup; at most 32000/)
  t.equal(markupProblem('<div>'.repeat(MAX_MARKUP_DEPTH), 2000), null, `${MAX_MARKUP_DEPTH} levels`)
  t.match(markupProblem('<div>'.repeat(MAX_MARKUP_DEPTH + 1), 2000), /deeper than 64 levels/)
  t.equal(markupProblem('<p>a<p>b<li>c<li>d</li><br><img src=x>'.repeat(400), 2000), null, 'siblings and void elements nest nothing')
})
