import type { Queryable } from '../db/db.js'
import { can } from '../security/permissions.js'
import { Permission } from '../security/roles.js'
import type { Located } from './rows.js'
import type { Reader } from './summaries.js'
import { urlOf } from './urls.js'

/**
 * Links inside blocks to objects of the site, kept by UID (plone.restapi's
 * resolveuid deserializers and serializers): stored as
 * `../resolveuid/<uid><rest>`, served as the object's URL for a reader who
 * may view it, so that a move or rename does not break them and a private
 * object's path reaches nobody who may not see it.
 */

/** The keys of a block whose values are links (plone.restapi's "smart fields"): a string, or a list of strings or `{"@id": …}`. */
const LINK_KEYS = ['url', 'href', 'preview_image']

/** A link kept by UID: `../resolveuid/<uid>` (any number of `../`, or none), then what follows the object (a view, a scale). */
const BY_UID = /^(?:\.\.\/)*resolveuid\/([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})(.*)$/is

const isObject = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value)

/** A copy of a Slate value with each link element's `data.url` mapped. */
function mapSlate (nodes: unknown, map: (link: string) => string): unknown {
  if (!Array.isArray(nodes)) return nodes
  return nodes.map(node => {
    if (!isObject(node)) return node
    const mapped: Record<string, unknown> = { ...node }
    if (node.type === 'link' && isObject(node.data) && typeof node.data.url === 'string') mapped.data = { ...node.data, url: map(node.data.url) }
    if (Array.isArray(node.children)) mapped.children = mapSlate(node.children, map)
    return mapped
  })
}

/**
 * What a block becomes once its links are mapped (`kept` the block as it
 * was, `mapped` its copy), for blocks served other than as kept (a teaser).
 */
export type BlockTransform = (kept: Record<string, unknown>, mapped: Record<string, unknown>) => Record<string, unknown>

/** A copy of one block with its links mapped: its smart fields, a Slate value's links, and the blocks it holds; then `each`. */
function mapBlock (block: unknown, map: (link: string) => string, each?: BlockTransform): unknown {
  if (!isObject(block)) return block
  const mapped: Record<string, unknown> = { ...block }
  for (const key of LINK_KEYS) {
    const value = block[key]
    if (typeof value === 'string') mapped[key] = map(value)
    else if (Array.isArray(value)) {
      mapped[key] = value.map(item => typeof item === 'string' ? map(item) : isObject(item) && typeof item['@id'] === 'string' ? { ...item, '@id': map(item['@id']) } : item)
    }
  }
  if (block['@type'] === 'slate' && Array.isArray(block.value)) mapped.value = mapSlate(block.value, map)
  if (isObject(block.blocks)) mapped.blocks = mapBlocks(block.blocks, map, each)
  if (isObject(block.data) && isObject(block.data.blocks)) mapped.data = { ...block.data, blocks: mapBlocks(block.data.blocks, map, each) }
  return each === undefined ? mapped : each(block, mapped)
}

/** A copy of a page's blocks with every link `map` gives another form, each block then passed to `each` (the original is not changed). */
export function mapBlocks (blocks: Record<string, unknown>, map: (link: string) => string, each?: BlockTransform): Record<string, unknown> {
  return Object.fromEntries(Object.entries(blocks).map(([id, block]) => [id, mapBlock(block, map, each)]))
}

/** Every link of a page's blocks. */
export function linksOf (blocks: Record<string, unknown>): string[] {
  const links: string[] = []
  mapBlocks(blocks, link => { links.push(link); return link })
  return links
}

/** The UID a link keeps and what follows it, or null for a link that is not by UID. */
export function byUid (link: string): { uid: string, rest: string } | null {
  const match = BY_UID.exec(link)
  return match === null ? null : { uid: match[1].toLowerCase(), rest: match[2] }
}

/**
 * The path of the site a link names and what follows the object (a view,
 * a scale, a fragment), or null for a link elsewhere: an absolute URL under
 * `baseUrl` or a path from the site root (as Volto writes links, its own
 * address taken off). What follows is from the first step that names a view
 * or a service (`@@images/…`, `@@download/…`, `view`), a query or a fragment.
 */
export function sitePathOf (link: string, baseUrl: string): { path: string, rest: string } | null {
  let local: string
  if (link.startsWith(`${baseUrl}/`) || link === baseUrl) local = link.slice(baseUrl.length) || '/'
  else if (link.startsWith('/') && !link.startsWith('//')) local = link
  else return null
  const cut = local.search(/[?#]|\/(?:@|\+\+|view(?:[/?#]|$))/)
  const path = (cut < 0 ? local : local.slice(0, cut)).replace(/\/+$/, '') || '/'
  return { path, rest: cut < 0 ? '' : local.slice(cut) }
}

/** The link by UID for an object's path, as plone.restapi stores it. */
const uidLink = (uid: string, rest: string): string => `../resolveuid/${uid}${rest}`

/**
 * How links are kept (plone.restapi's resolveuid deserializers): each link to
 * an object of the site (by its URL under `baseUrl`, or by its path) by that
 * object's UID; links elsewhere, to nothing, or by UID already, as they are.
 * One read for all of a write's links.
 */
export async function keptLinks (q: Queryable, baseUrl: string, links: Iterable<string>): Promise<Map<string, string>> {
  const local = new Map<string, { path: string, rest: string }>()
  for (const link of links) {
    const inSite = sitePathOf(link, baseUrl)
    if (inSite !== null) local.set(link, inSite)
  }
  const kept = new Map<string, string>()
  if (local.size === 0) return kept
  const paths = [...new Set([...local.values()].map(l => l.path))]
  const { rows } = await q.query<{ uid: string, path: string }>('SELECT uid::text AS uid, path FROM content WHERE path = ANY($1)', [paths])
  const uidAt = new Map(rows.map(row => [row.path, row.uid]))
  for (const [link, { path, rest }] of local) {
    const uid = uidAt.get(path)
    if (uid !== undefined) kept.set(link, uidLink(uid, rest))
  }
  return kept
}

const ATTRIBUTE_ENTITIES: Record<string, string> = { amp: '&', quot: '"', lt: '<', gt: '>', '#39': "'" }

/**
 * A copy of sanitised HTML (core/content/richtext.ts) with the `href` and
 * `src` of its elements mapped. sanitize-html writes every attribute value in
 * double quotes with `&`, `"`, `<` and `>` escaped, and every `<` of its
 * output starts a tag that ends at the next `>`: the attributes are found in
 * the tags without parsing again, and text that reads like one is not one.
 */
export function mapHtmlLinks (html: string, map: (link: string) => string): string {
  if (!html.includes('href="') && !html.includes('src="')) return html
  return html.replace(/<[^>]*>/g, tag => tag.replace(/(\s(?:href|src)=")([^"]*)"/g, (_, name: string, escaped: string) => {
    const link = escaped.replace(/&(amp|quot|lt|gt|#39);/g, (__, entity: string) => ATTRIBUTE_ENTITIES[entity])
    return `${name}${map(link).replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;')}"`
  }))
}

/** Every link (`href`, `src`) of sanitised HTML. */
export function linksOfHtml (html: string): string[] {
  const links: string[] = []
  mapHtmlLinks(html, link => { links.push(link); return link })
  return links
}

/** The links of a field value of a kind that holds them (blocks, rich text); none for another. */
export function linksOfField (kind: string | undefined, value: unknown): string[] {
  if (kind === 'blocks' && isObject(value)) return linksOf(value)
  if (kind === 'richtext' && isObject(value) && typeof value.data === 'string') return linksOfHtml(value.data)
  return []
}

/** The UIDs the links of these objects' blocks and rich texts keep. */
function linkedUids (objects: Located[]): string[] {
  const uids = new Set<string>()
  for (const { obj, type } of objects) {
    for (const [name, field] of type.fields) {
      const value = obj.data[name]
      // A rich text that keeps no link by UID is not scanned (a talk's details, at every GET).
      if (field.kind === 'richtext' && !(isObject(value) && typeof value.data === 'string' && value.data.includes('resolveuid/'))) continue
      for (const link of linksOfField(field.kind, value)) {
        const kept = byUid(link)
        if (kept !== null) uids.add(kept.uid)
      }
    }
  }
  return [...uids]
}

/**
 * The URLs, for this reader, of the objects that the blocks and rich texts
 * of `objects` link by UID: those the reader may view (plone.restapi resolves a UID with
 * the reader's own catalogue search); a link to any other stays by UID,
 * naming no path. One read for all of them (a page of full objects too).
 */
export async function linkTargets (reader: Reader, objects: Located[], locateMany: (uids: string[]) => Promise<Map<string, Located>>): Promise<Map<string, LinkTarget>> {
  const uids = linkedUids(objects)
  const targets = new Map<string, LinkTarget>()
  if (uids.length === 0) return targets
  for (const [uid, target] of await locateMany(uids)) {
    if (can(reader.principal, Permission.View, target)) targets.set(uid, { url: urlOf(reader.baseUrl, target.obj.path), located: target })
  }
  return targets
}

/** An object a link names by UID, which the reader may view: its URL, and itself. */
export interface LinkTarget { url: string, located: Located }

/** A link by UID as a reader gets it: its object's URL when `targets` has it, else as it is kept. */
export function servedLink (link: string, targets: ReadonlyMap<string, LinkTarget>): string {
  const kept = byUid(link)
  const url = kept === null ? undefined : targets.get(kept.uid)?.url
  return url === undefined ? link : `${url}${kept!.rest}`
}

/** The text of a teaser that comes from its target unless the editor wrote their own. */
const TEASER_TEXT = ['title', 'description', 'head_title']

/**
 * A teaser block as plone.restapi 10 serves it (TeaserBlockSerializerBase):
 * its target (`href`, kept by UID) summarised as it is now — `summary` of a
 * target the reader may view, its `@id` included — and, unless the editor customised the
 * teaser (`overwrite`), its title and description taken from that summary.
 * A target the reader may not view (or gone) empties `href`, and the text
 * the teaser copied from it, saying nothing of it. A teaser saved before
 * the option existed (no `overwrite`) is otherwise served as kept.
 */
export function servedTeaser (kept: Record<string, unknown>, mapped: Record<string, unknown>, targets: ReadonlyMap<string, LinkTarget>,
  summary: (target: LinkTarget) => Record<string, unknown>): Record<string, unknown> {
  if (kept['@type'] !== 'teaser') return mapped
  const href = Array.isArray(kept.href) ? kept.href[0] : kept.href
  const link = typeof href === 'string' ? href : isObject(href) && typeof href['@id'] === 'string' ? href['@id'] : ''
  const byItsUid = byUid(link)
  // A link kept as it was given (outside the site): served as kept.
  if (link === '' || byItsUid === null) return mapped
  const target = targets.get(byItsUid.uid)
  if (target === undefined) {
    // Nothing of a target the reader may not view: not its link, nor the text the block copied from it when it was picked
    // (plone.restapi keeps that text; the rule of every summary here is stricter: docs/api.md). An editor's own text stays.
    const served: Record<string, unknown> = { ...mapped, href: [] }
    if (kept.overwrite !== true) for (const key of TEASER_TEXT) if (key in served) served[key] = ''
    return served
  }
  // Saved before the option existed: its data is its own (plone.restapi serves it so, adding `overwrite: true`; not added
  // here, so that a block read and sent back is kept as it was).
  if (!('overwrite' in kept)) return mapped
  const described = summary(target)
  const first = Array.isArray(mapped.href) && isObject(mapped.href[0]) ? mapped.href[0] : {}
  const served: Record<string, unknown> = { ...mapped, href: [{ ...first, ...described }] }
  if (kept.overwrite !== true) {
    for (const key of TEASER_TEXT) if (key in described) served[key] = described[key]
  }
  return served
}
