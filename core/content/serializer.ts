import type { ContentRow, Located } from './rows.js'
import { BadRequest } from '../errors.js'
import { textOf } from '../query/zope.js'
import type { ContentType, ContentTypeRegistry } from './registry.js'
import { imageValue, imageVersion, type ImageMeta } from './image/scales.js'
import { imageScales } from '../catalog/indexes.js'
import { imageFieldsOf } from './indexable.js'
import { mapBlocks, mapHtmlLinks, servedLink, servedTeaser, type LinkTarget } from './links.js'
import { summaryOf, type Reader, type Summary } from './summaries.js'
import { isoDate, urlOf } from './urls.js'
import { versionable } from './versions.js'

const NO_LINKS: ReadonlyMap<string, LinkTarget> = new Map()

/** The keys every summary has (plone.restapi's default summary). */
const SUMMARY_COLUMNS: Record<string, string> = {
  '@type': 'portal_type', title: 'Title', description: 'Description', review_state: 'review_state', type_title: 'Type'
}

/**
 * The metadata a summary reads (SUMMARY_COLUMNS, and the path for `@id`), plus UID for
 * highlighting and full objects: what every engine fetches for a page of results, with the
 * `metadata_fields` asked for. Fetching every metadata column costs parsing for nothing.
 */
export const SUMMARY_METADATA = ['UID', 'path_string', ...Object.values(SUMMARY_COLUMNS)]

const wire = (value: unknown): unknown => value instanceof Date ? isoDate(value) : value

/** plone.restapi's summary of an object, `@id` aside. */
const plonesSummary = (obj: ContentRow, type: ContentType): Record<string, unknown> => ({
  '@type': obj.portal_type,
  title: obj.data.title ?? '',
  description: obj.data.description ?? '',
  review_state: obj.review_state,
  type_title: type.title
})

/** plone.restapi's lock info of an object nobody locked. */
export const UNLOCKED = Object.freeze({ locked: false, stealable: true })

/**
 * What Plone answers for the features this service does not have (discussion,
 * next/previous navigation, working copies, multilingual, rights
 * and contributors as fields), so that clients find every key they read: new
 * lists and objects for every answer, which its caller may change.
 * Next/previous items, once they exist, are summaries: `Serializer.summary`.
 */
function addAbsentFeatures (result: Record<string, unknown>): void {
  result.allow_discussion = false
  result.contributors = []
  result.rights = ''
  result.language = ''
  result.next_item = {}
  result.previous_item = {}
  result.version = 'current'
  result.working_copy = null
  result.working_copy_of = null
}

/**
 * JSON forms of content: the full object (GET) and the summaries of listings
 * and search results (from catalogue metadata, without loading objects).
 */
export class Serializer {
  /** `versioning`: whether edits keep versions (VERSIONS_KEPT > 0), as `versioning_enabled` tells Volto. */
  constructor (private readonly types: ContentTypeRegistry, private readonly versioning = true) {}

  /** Validates `metadata_fields` (`_all` = every metadata column) into column names. */
  metadataFields (requested: unknown): string[] {
    const names = (Array.isArray(requested) ? requested : requested === undefined ? [] : [requested]).map(v => textOf(v, 'metadata_fields'))
    const metadata = [...this.types.indexes.values()].filter(i => i.metadata).map(i => i.name)
    if (names.includes('_all')) return metadata
    for (const name of names) if (!metadata.includes(name)) throw BadRequest(`Unknown metadata field '${name}'.`)
    return [...new Set(names)]
  }

  /**
   * The summary of a search result or a listed item, from its catalogue row: a
   * row of the reader's own query, whose security filter let through only
   * what the reader may view (core/content/summaries.ts).
   */
  resultSummary (reader: Reader, row: Record<string, unknown>, extra: string[]): Record<string, unknown> {
    const summary: Record<string, unknown> = { '@id': urlOf(reader.baseUrl, String(row.path_string)) }
    for (const [key, col] of Object.entries(SUMMARY_COLUMNS)) summary[key] = wire(row[col] ?? (key === 'title' || key === 'description' ? '' : null))
    for (const name of extra) summary[name] = wire(row[name] ?? null)
    return summary
  }

  /**
   * The summary of the object that ends `lineage` (a parent, a breadcrumb) as
   * `reader` may see it: `describe` (by default plone.restapi's summary) when
   * they may view it, else its `@id` alone (core/content/summaries.ts).
   */
  summary (reader: Reader, lineage: ContentRow[], describe: (obj: ContentRow, type: ContentType) => Record<string, unknown> = plonesSummary): Summary {
    return summaryOf(reader, lineage, obj => this.types.get(obj.portal_type), describe)
  }

  /**
   * What a teaser shows of its target (plone.restapi's summary of a catalogue
   * brain): the reader may view it (core/content/links.ts, linkTargets).
   */
  private teaserSummary ({ url, located: { obj, type } }: LinkTarget): Record<string, unknown> {
    // The catalogue's image metadata (core/catalog/indexes.ts), from the row alone: who may view it was decided already.
    const imageFields = imageFieldsOf(type, obj.data)
    return { '@id': url, ...plonesSummary(obj, type), image_field: imageFields[0] ?? null, image_scales: imageScales({ uid: obj.uid, modified: obj.modified, data: obj.data, imageFields }) }
  }

  private fieldValue (url: string, obj: ContentRow, type: ContentType, name: string, value: unknown, links: ReadonlyMap<string, LinkTarget>): unknown {
    const field = type.fields.get(name)
    if (value === undefined || value === null) {
      // A field's declared default (blocks: `{}`, their layout: `{items: []}`, which Volto reads without checking), else Plone's empty values.
      if (field?.default !== undefined) return structuredClone(field.default)
      return name === 'description' || name === 'title' ? '' : name === 'subjects' ? [] : null
    }
    if (field?.kind === 'image') return imageValue(value as ImageMeta, name, imageVersion(obj.uid, value as ImageMeta, obj.modified), `${url}/@@images/`)
    if (field?.kind === 'file') return { ...(value as object), download: `${url}/@@download/${name}` }
    // Every page of blocks, linking or not: a teaser whose target the reader may not view is served without it.
    if (field?.kind === 'blocks') {
      return mapBlocks(value as Record<string, unknown>, link => servedLink(link, links), (kept, mapped) => servedTeaser(kept, mapped, links, target => this.teaserSummary(target)))
    }
    if (field?.kind === 'richtext' && links.size > 0) {
      const rich = value as { data: string }
      return { ...rich, data: mapHtmlLinks(rich.data, link => servedLink(link, links)) }
    }
    return value
  }

  /**
   * The full object, as `GET <path>` answers (docs/api.md, "Endpoints"), for a
   * reader who may view it; `components` (its `@components`, when the answer
   * has them) follows its UID, as plone.restapi writes it. `links`: the URLs
   * of the objects its blocks link by UID that the reader may view
   * (core/content/links.ts, `linkTargets`); without, links stay by UID.
   */
  object (reader: Reader, located: Located, components?: Record<string, unknown>, links: ReadonlyMap<string, LinkTarget> = NO_LINKS): Record<string, unknown> {
    const { obj, type, lineage } = located
    const url = urlOf(reader.baseUrl, obj.path)
    const result: Record<string, unknown> = { '@id': url, '@type': obj.portal_type, UID: obj.uid }
    if (components !== undefined) result['@components'] = components
    result.id = obj.id
    result.type_title = type.title
    result.review_state = obj.review_state
    result.created = isoDate(obj.created)
    result.modified = isoDate(obj.modified)
    result.creators = obj.creators
    result.parent = lineage.length < 2 ? {} : this.summary(reader, lineage.slice(0, -1))
    result.is_folderish = type.folderish
    result.layout = type.layout
    result.effective = isoDate(obj.data.effective as string | undefined)
    result.expires = isoDate(obj.data.expires as string | undefined)
    result.lock = { ...UNLOCKED }
    addAbsentFeatures(result)
    if (versionable(type)) result.versioning_enabled = this.versioning
    for (const name of type.fields.keys()) {
      if (name === 'effective' || name === 'expires') continue
      result[name] = this.fieldValue(url, obj, type, name, obj.data[name], links)
    }
    return result
  }
}
