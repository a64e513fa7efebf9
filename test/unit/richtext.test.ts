import t from 'tap'
import sanitizeHtml from 'sanitize-html'
import { htmlToText, textLength, toRichText } from '../../core/content/richtext.js'

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
  t.equal(textLength('<p>&eacute;&nbsp;&amp;</p>'), 3, 'an entity is one character')
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
