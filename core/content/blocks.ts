import Type from 'typebox'
import { defineBehavior, type Field } from './declaration.js'

/**
 * Volto's blocks (plone.restapi's `volto.blocks` behavior): `blocks`, an
 * object of blocks by id, each `{"@type": …, …}` as its block type's editor
 * wrote it, and `blocks_layout`, `{items: [id, …]}`, their order. Stored as
 * the client sent them (the service does not know every block type a Volto
 * add-on brings), but bounded, and read for `SearchableText`.
 *
 * The behavior lives in core, not in schemas/, because the site root (a core
 * type: Volto's home page is its blocks) has it too.
 */

/** The most JSON text (UTF-16 units) a page's blocks may take: a page of 50 text blocks takes some 50 000. */
export const MAX_BLOCKS_LENGTH = 512 * 1024
/** The most blocks a page may hold, nested ones (a grid's columns) counted. */
export const MAX_BLOCKS = 1000

const isObject = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value)

/** The blocks a block holds itself: a grid's or a container's (`blocks`), a columns block's (`data.blocks`). */
function innerBlocks (block: Record<string, unknown>): Record<string, unknown> | null {
  if (isObject(block.blocks)) return block.blocks
  if (isObject(block.data) && isObject(block.data.blocks)) return block.data.blocks
  return null
}

/** Every block, nested ones after their holder, as the editor's order does not matter to what they say. */
function * everyBlock (blocks: Record<string, unknown>): Generator<Record<string, unknown>> {
  for (const block of Object.values(blocks)) {
    if (!isObject(block)) continue
    yield block
    const inner = innerBlocks(block)
    if (inner !== null) yield * everyBlock(inner)
  }
}

/** Why these blocks are refused, or null: not blocks by id, a block that is not an object or whose `@type` is not text, too many, too long. */
export function blocksProblem (blocks: Record<string, unknown>): string | null {
  const length = JSON.stringify(blocks).length
  if (length > MAX_BLOCKS_LENGTH) return `The blocks take ${length} characters as JSON; at most ${MAX_BLOCKS_LENGTH} are accepted.`
  let count = 0
  const check = (level: Record<string, unknown>): string | null => {
    for (const [id, block] of Object.entries(level)) {
      if (!isObject(block)) return `Block '${id.slice(0, 100)}' is not an object.`
      if (block['@type'] !== undefined && typeof block['@type'] !== 'string') return `Block '${id.slice(0, 100)}' has an '@type' that is not text.`
      if (++count > MAX_BLOCKS) return `More than ${MAX_BLOCKS} blocks.`
      const inner = innerBlocks(block)
      const problem = inner === null ? null : check(inner)
      if (problem !== null) return problem
    }
    return null
  }
  return check(blocks)
}

/** The text of a Slate value (a list of nodes): its leaves' text, a space between elements. */
function slateText (nodes: unknown): string {
  if (!Array.isArray(nodes)) return ''
  const parts: string[] = []
  for (const node of nodes) {
    if (!isObject(node)) continue
    if (typeof node.text === 'string') parts.push(node.text)
    else parts.push(slateText(node.children))
  }
  return parts.filter(Boolean).join(' ')
}

/**
 * What each block type contributes to `SearchableText`, by `@type`, as
 * plone.restapi's block indexers do: a Slate block its `plaintext`, a
 * (Draft.js) text block its paragraphs, a Slate table its cells.
 */
const BLOCK_TEXT: Record<string, (block: Record<string, unknown>) => string> = {
  slate: block => typeof block.plaintext === 'string' ? block.plaintext : slateText(block.value),
  text: block => {
    const text = block.text
    const paragraphs = isObject(text) && Array.isArray(text.blocks) ? text.blocks : []
    return paragraphs.map(p => isObject(p) && typeof p.text === 'string' ? p.text : '').filter(Boolean).join(' ')
  },
  slateTable: block => {
    const table = block.table
    const rows = isObject(table) && Array.isArray(table.rows) ? table.rows : []
    return rows.flatMap(row => isObject(row) && Array.isArray(row.cells) ? row.cells : [])
      .map(cell => isObject(cell) ? slateText(cell.value) : '').filter(Boolean).join(' ')
  }
}

/**
 * The searchable text of a page's blocks (plone.restapi's `SearchableText`
 * indexer for blocks): a block's own `searchableText` when its editor set one
 * (a block type the service does not know can be found this way), else what
 * its type says (BLOCK_TEXT).
 */
export function blocksText (blocks: unknown): string {
  if (!isObject(blocks)) return ''
  const parts: string[] = []
  for (const block of everyBlock(blocks)) {
    if (typeof block.searchableText === 'string' && block.searchableText !== '') parts.push(block.searchableText)
    else if (typeof block['@type'] === 'string' && Object.hasOwn(BLOCK_TEXT, block['@type'])) parts.push(BLOCK_TEXT[block['@type']](block))
  }
  return parts.filter(Boolean).join(' ')
}

/** A page's blocks by id (`kind: 'blocks'`): checked by blocksProblem, read by blocksText. */
export function Blocks (): Field {
  return Type.Record(Type.String(), Type.Unknown(), { title: 'Blocks', default: {}, kind: 'blocks', searchable: true }) as unknown as Field
}

/** The order of a page's blocks: `{items: [id, …]}` (other keys a Volto add-on writes are kept). */
export function BlocksLayout (): Field {
  return Type.Object({ items: Type.Array(Type.String({ maxLength: 1024 }), { maxItems: MAX_BLOCKS }) },
    { title: 'Blocks Layout', default: { items: [] }, kind: 'blocks_layout' }) as unknown as Field
}

/** plone.restapi's `volto.blocks` behavior: a page built of blocks. */
export const voltoBlocks = defineBehavior({
  name: 'volto.blocks',
  fieldset: { id: 'layout', title: 'Layout' },
  schema: Type.Object({
    blocks: Type.Optional(Blocks()),
    blocks_layout: Type.Optional(BlocksLayout())
  })
})
