import fc from 'fast-check'
import t from 'tap'
import { blocksProblem, blocksText, MAX_BLOCKS } from '../../core/content/blocks.js'

/**
 * The searchable text of blocks against an oracle built with the blocks: each
 * generated block says which of its words a search must find (`found`) and
 * which it holds only where plone.restapi's indexers do not look (decoys, in
 * an image's alt, a block's other keys, a slate value beside its plaintext).
 */
interface Generated { block: Record<string, unknown>, found: string[], decoys: string[] }

const word = fc.integer({ min: 0, max: 999 }).map(n => `w${n}`)
const decoy = fc.integer({ min: 0, max: 999 }).map(n => `d${n}`)
const words = fc.array(word, { maxLength: 4 })

/** A Slate value holding `texts`, nested at random (marks, links, list items). */
const slateValue = (texts: string[]): fc.Arbitrary<unknown[]> =>
  fc.array(fc.integer({ min: 0, max: 2 }), { minLength: texts.length, maxLength: texts.length }).map(depths =>
    texts.map((text, i) => {
      let node: Record<string, unknown> = { text }
      for (let d = 0; d < depths[i]; d++) node = { type: d % 2 === 0 ? 'strong' : 'li', children: [node] }
      return { type: 'p', children: [node] }
    }))

const leaf: fc.Arbitrary<Generated> = fc.oneof(
  // Slate with its plaintext: the plaintext is what is found; its value may say anything.
  fc.tuple(words, fc.array(decoy, { maxLength: 2 })).chain(([texts, decoys]) => slateValue(decoys).map(value =>
    ({ block: { '@type': 'slate', value, plaintext: texts.join(' ') }, found: texts, decoys }))),
  // Slate without plaintext (an older block): its leaves' text.
  words.chain(texts => slateValue(texts).map(value => ({ block: { '@type': 'slate', value }, found: texts, decoys: [] }))),
  // Draft.js text: its paragraphs.
  fc.tuple(words, decoy).map(([texts, d]) => ({ block: { '@type': 'text', text: { blocks: texts.map(text => ({ key: d, text })), entityMap: {} } }, found: texts, decoys: [d] })),
  // A Slate table: its cells.
  words.chain(texts => fc.tuple(...texts.map(text => slateValue([text]))).map(values =>
    ({ block: { '@type': 'slateTable', table: { rows: [{ key: 'r', cells: values.map(value => ({ key: 'c', type: 'data', value })) }] } }, found: texts, decoys: [] }))),
  // Any type with its own searchableText: that, and nothing else of it (an empty one is none: below).
  fc.tuple(fc.constantFrom('slate', 'acmeMap', 'text'), fc.array(word, { minLength: 1, maxLength: 4 }), decoy).map(([type, texts, d]) =>
    ({ block: { '@type': type, searchableText: texts.join(' '), plaintext: d, caption: d }, found: texts, decoys: [d] })),
  // A block type without text.
  decoy.map(d => ({ block: { '@type': 'image', alt: d, url: `https://example.org/${d}.png` }, found: [], decoys: [d] })),
  // Something that is not a block (refused on writes; read as nothing if it is stored).
  decoy.map(d => ({ block: { '@type': 7, plaintext: d } as Record<string, unknown>, found: [], decoys: [d] }))
)

const blocksOf = (children: Generated[]): Record<string, unknown> => Object.fromEntries(children.map((c, i) => [`b${i}`, c.block]))
const merge = (children: Generated[], block: Record<string, unknown>): Generated =>
  ({ block, found: children.flatMap(c => c.found), decoys: children.flatMap(c => c.decoys) })

const { tree } = fc.letrec<{ tree: Generated }>(tie => ({
  tree: fc.oneof({ depthSize: 'small', withCrossShrink: true },
    leaf,
    // A grid or container: its blocks under `blocks`; a columns block: under `data.blocks`.
    fc.array(tie('tree'), { maxLength: 3 }).map(children => merge(children, { '@type': 'gridBlock', blocks: blocksOf(children), blocks_layout: { items: children.map((_, i) => `b${i}`) } })),
    fc.array(tie('tree'), { maxLength: 3 }).map(children => merge(children, { '@type': 'columnsBlock', data: { blocks: blocksOf(children) } })))
}))

t.test('blocksText finds the words of the searchable places of every block, nested ones too, and no other', async t => {
  fc.assert(fc.property(fc.array(tree, { maxLength: 6 }), pages => {
    const text = blocksText(blocksOf(pages)).split(/\s+/).filter(Boolean)
    const expected = pages.flatMap(p => p.found)
    if ([...text].sort().join(' ') !== [...expected].sort().join(' ')) throw new Error(`found ${text.join(' ')}, expected ${expected.join(' ')}`)
    const decoys = new Set(pages.flatMap(p => p.decoys))
    if (text.some(w => decoys.has(w))) throw new Error('a decoy was found')
  }), { numRuns: 500 })
  t.pass('500 pages')
})

t.test('an empty searchableText is none: the block type\'s text is found, as plone.restapi reads it', async t => {
  t.equal(blocksText({ a: { '@type': 'slate', searchableText: '', plaintext: 'harbour' } }), 'harbour')
  t.equal(blocksText({ a: { '@type': 'acmeMap', searchableText: '', caption: 'harbour' } }), '')
})

t.test('blocksProblem counts nested blocks and refuses what is not a block, wherever it is', async t => {
  t.equal(blocksProblem({ a: { '@type': 'slate' } }), null)
  const flat = (n: number): Record<string, unknown> => Object.fromEntries(Array.from({ length: n }, (_, i) => [`b${i}`, { '@type': 'x' }]))
  t.equal(blocksProblem(flat(MAX_BLOCKS)), null, `${MAX_BLOCKS} blocks are accepted`)
  t.match(blocksProblem(flat(MAX_BLOCKS + 1)), /More than/)
  t.match(blocksProblem({ g: { '@type': 'gridBlock', blocks: flat(MAX_BLOCKS) } }), /More than/, 'the grid counts as one')
  t.match(blocksProblem({ c: { '@type': 'columnsBlock', data: { blocks: { x: 'text' } } } }), /Block 'x' is not an object/)
  t.match(blocksProblem({ ['k'.repeat(500)]: 1 }), new RegExp(`Block '${'k'.repeat(100)}' is`), 'a long id is cut in the message')
})
