/**
 * Pages built of Volto's blocks for the benchmark (core/content/blocks.ts):
 * a title block and Slate paragraphs, as Volto 18 writes them, each page's
 * text its own. The words are a vocabulary of their own, none of the talks'
 * (bench/talks.mjs), so that the pages the bench creates are never found by
 * the talks' full-text queries measured after them.
 */
import { randomUUID } from 'node:crypto'
import { seededRandom } from './talks.mjs'

const WORDS = `lorem ipsum dolor sit amet consectetur adipiscing elit sed eiusmod tempor incididunt labore dolore
  magna aliqua enim minim veniam quis nostrud exercitation ullamco laboris nisi aliquip commodo consequat duis aute
  irure reprehenderit voluptate velit esse cillum fugiat nulla pariatur excepteur sint occaecat cupidatat proident
  sunt culpa officia deserunt mollit anim laborum curabitur pretium tincidunt lacus nulla gravida orci blandit
  vulputate faucibus lectus aliquam porta mauris fringilla bibendum sollicitudin ultricies vestibulum maecenas
  pellentesque habitant morbi tristique senectus netus malesuada fames turpis egestas`.split(/\s+/).filter(Boolean)

/** Blocks a page of the benchmark holds: what the issue names as a page (a title and 49 paragraphs). */
export const PAGE_BLOCKS = 50

const capitalise = text => text.charAt(0).toUpperCase() + text.slice(1)

/** A Slate paragraph block as Volto 18 writes it: its value and its plain text. */
export function paragraph (text) {
  return { '@type': 'slate', value: [{ type: 'p', children: [{ text }] }], plaintext: text }
}

/**
 * Page number `n` as Volto POSTs it: PAGE_BLOCKS blocks by new UUIDs (as
 * Volto makes them), paragraphs of 10 to 60 words drawn for `n`, and
 * `label` in its title, which makes its id unique.
 */
export function pageBody (n, label) {
  const next = seededRandom(n + 1)
  const sentence = words => capitalise(Array.from({ length: words }, () => WORDS[Math.floor(next() * WORDS.length)]).join(' ')) + '.'
  const ids = Array.from({ length: PAGE_BLOCKS }, () => randomUUID())
  const blocks = { [ids[0]]: { '@type': 'title' } }
  for (const id of ids.slice(1)) blocks[id] = paragraph(sentence(10 + Math.floor(next() * 51)))
  return { '@type': 'Document', title: `${sentence(3)} ${label}`, description: sentence(12), blocks, blocks_layout: { items: ids } }
}
