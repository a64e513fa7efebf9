import fc from 'fast-check'
import { Parser } from 'htmlparser2'
import t, { type Test } from 'tap'
import { nestsDeeperThan } from '../../core/content/markup-depth.js'
import { toRichText } from '../../core/content/richtext.js'

/**
 * The nesting scan never finds markup shallower than the parser sanitize-html
 * uses (htmlparser2) builds it — else deep markup would reach the parser —
 * and finds sanitised markup exactly as deep, so that what the service wrote
 * itself is never refused when it is sent back. The oracle is htmlparser2:
 * the deepest its stack of open elements gets (void elements, which open and
 * close at once, nest nothing), on tag soup made of the parser's hard cases.
 */
const VOIDS = new Set(['area', 'base', 'basefont', 'br', 'col', 'command', 'embed', 'frame', 'hr', 'img', 'input', 'isindex', 'keygen', 'link', 'meta', 'param', 'source', 'track', 'wbr'])

function parserDepth (html: string): number {
  let depth = 0
  let deepest = 0
  const parser = new Parser({
    onopentag: name => { if (!VOIDS.has(name)) deepest = Math.max(deepest, ++depth) },
    onclosetag: name => { if (!VOIDS.has(name)) depth-- }
  }, { decodeEntities: true })
  parser.write(html)
  parser.end()
  return deepest
}

const soup = fc.array(fc.oneof(
  fc.constantFrom('<p>', '</p>', '<P>', '</DIV>', '<b>', '</b>', '<div>', '</div>', '<div/>', '<li>', '</li>', '<ul>', '<dl>', '<dt>', '<dd>',
    '<table>', '<tr>', '<td>', '<th>', '<thead>', '<tbody>', '<tfoot>', '<select>', '<option>', '<optgroup>', '<button>', '<input>', '<rt>', '<rp>',
    '<h1>', '<form>', '<script>', '</script>', '<style>', '<textarea>', '</textarea>', '<title>', '</title>', '<xmp>', '<iframe>', '<noscript>',
    '</style>', '</xmp>', '</SCRIPT>', '</script ', '<script/>', '<title x=y/>', '<style a="b"/>', '<scriptx>', '</scriptx>',
    '<plaintext>', '<svg>', '<path/>', '</svg>', '<math>', '<x-y>', '</x-y>', '<img src=x>', '<br/>', '<br>', '</br>', '<!--', '-->', '<!-->',
    '<!--->', '<![CDATA[', ']]>', '<!doctype html>', '<?x ?>', '</ x>', '<a href="x>y">', '<a x= ="', "<a title='>'>", '</a>', '<', '>', '"', "'",
    '=', '/', ' ', '\t', '</math>', '<svg/>', '<math/>', '<b/>', '<p/>', '<foreignObject>', '</foreignObject>', '<mi>', '</mi>', '<desc/>',
    '<title/>', '<annotation-xml>', '</annotation-xml>', '</<', '</ ', '</b/>', '</b\u00a0>', '\v', '\u00a0', '<![CDATA[>', '</1'),
  fc.string({ maxLength: 3 })
), { maxLength: 60 }).map(pieces => pieces.join(''))

/** Whether the scan finds `html` as deep as the parser builds it (deeper than one level less). */
const asDeepAsParsed = (html: string): boolean => nestsDeeperThan(html, parserDepth(html) - 1)

/** Each case found as deep as the parser builds it. */
function allAsDeepAsParsed (t: Test, cases: string[]): void {
  for (const html of cases) t.ok(asDeepAsParsed(html), `${html}: as deep as the parser builds it (${parserDepth(html)})`)
}

t.test('never shallower than the parser builds it', async t => {
  fc.assert(fc.property(soup, html => {
    const depth = parserDepth(html)
    return depth === 0 || nestsDeeperThan(html, depth - 1)
  }), { numRuns: 20_000 })
  t.pass('the scan found every nesting the parser built')
})

t.test('sanitised markup exactly as deep as the parser builds it', async t => {
  fc.assert(fc.property(soup, html => {
    const sanitised = toRichText(html).data
    return !nestsDeeperThan(sanitised, parserDepth(sanitised))
  }), { numRuns: 20_000 })
  t.pass('no sanitised markup was found deeper than it is')
})

t.test('the text of raw-text elements holds no tags, and only their own end tag ends it', async t => {
  // Found by the property above (fast-check seed 6234562): a comment's start inside a script is text.
  allAsDeepAsParsed(t, [
    '<script><!--</script><button><p>',
    '<style><!--</STYLE ><div><p>',
    '<textarea><a title=\'</textarea><div><p>',
    '<title><?</title><div><p>',
    '<xmp><!doctype</xmp ><div><p>',
    '<script>a</scriptx></script><div><p>',
    '<script/><!--</script>--><div><p>',
    '<script a=b/><!--</script><div><p>'
  ])
  t.notOk(nestsDeeperThan('<script>' + '<div>'.repeat(1000) + '</script>', 1), 'tags in a script are its text')
  t.ok(nestsDeeperThan('<script/>' + '<div>'.repeat(10), 5), 'a script that closes itself holds nothing')
  t.notOk(nestsDeeperThan('<script>' + '<div>'.repeat(1000), 1), 'a script without its end tag: the rest is text')
})

t.test('inside svg and math a self-closing start tag closes its element; their HTML integration points open HTML again', async t => {
  // Found by the first property (fast-check seed 3207013): `<style a="b"/>` in svg is closed, so `</style>` closes nothing of the rest.
  allAsDeepAsParsed(t, [
    '<svg><style a="b"/><noscript></style><p><tbody>',
    '<math><b/><i></b><u><s>',
    '<svg/><b/><i></b><u><s>',
    '<svg></svg><b/><i></b><u>',
    '<svg><foreignObject><b/><i></b></foreignObject><b/><i></b><u>',
    '</svg><b/><i></b><u><s>',
    '<svg><title/><b/><i></b><u>'
  ])
  t.ok(nestsDeeperThan('<svg>' + '<g/>'.repeat(100) + '<g>'.repeat(10), 10), 'closed elements in svg are siblings, open ones nest')
  t.notOk(nestsDeeperThan('<svg>' + '<g/>'.repeat(100), 2), 'a hundred closed elements in svg nest nothing')
})

t.test('what `</` starts: an end tag only with a letter, whose name runs to a space or `>`; character data to `]]>`', async t => {
  // Found by the first property once the soup held svg's cases: `</<script>` is a comment, not text and a script.
  allAsDeepAsParsed(t, [
    '</<script><th><p>',
    '</<textarea><p><foreignObject>',
    '<b></1 </b><i><u>',
    '<b></ b><i><u>',
    '<b></ ><i><u>',
    '<b></b/><i><u>',
    '<b></b\u00a0><i><u>',
    '<b></b\v><i><u>',
    '<b><![CDATA[></b>]]><i><u>',
    '<b><![cdata[></b>]]><i><u>',
    '<b></p x'
  ])
})

t.test('deep markup is found in one linear pass, however it hides', async t => {
  const deep = (open: string): string => open.repeat(100_000)
  for (const open of ['<div>', '<em>', '<x-a class="b">', '<div title=\'>\'>', '<li><ul>', '<td><table>']) t.ok(nestsDeeperThan(deep(open), 64), open)
  t.notOk(nestsDeeperThan('<li>a'.repeat(100_000) + '<p>b'.repeat(100_000) + '<br>'.repeat(100_000), 64), 'siblings and void elements')
  t.notOk(nestsDeeperThan('<!--' + '<div>'.repeat(1000) + '-->' + '<a x="' + '<div>'.repeat(1000) + '">', 64), 'in a comment or a quoted value there is no element')
  t.ok(nestsDeeperThan('<a x= ="' + '<div>'.repeat(100) + '">', 64), 'a quote that does not follow = opens no value')
})
