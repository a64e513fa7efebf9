// Random requests over every read channel, each with its check against the permission model
// (not a test file). A check throws on the first property it finds broken, with the
// request, the answer and the oracle's expectation in the message, so that fast-check can
// shrink the request and print it.
// Over 300 lines on purpose: the channels share the generators and the oracle's checks;
// each channel is one function of its own.
import fc from 'fast-check'
import type { TestApp } from '../helper.js'
import { deniedStatus, facetCounts, isListed, mayView, STATES, withinPath, type Caller, type FacetField, type Item, type State } from './permission-model.js'
import { summariesProblem, userFactsProblem, workflowHistoryProblem } from './summaries.js'
import { pathOf, SUBJECTS, WORDS, type World } from './world.js'

export interface Channels {
  app: TestApp
  world: World
  /** `solr`: searches carry `use_solr=true` and must be answered by Solr. */
  engine: 'catalogue' | 'solr'
  /**
   * Solr may lag behind the database (after an outage, the outbox not yet delivered): an answer that Solr gave
   * is then held to soundness only (nothing the caller may not see, no marker leaked);
   * an answer from the catalogue is held to everything.
   */
  solrMayLag?: boolean
  /** How many HTTP requests the checks sent, which engine answered the lists, and how many lists expected some item. */
  stats: { requests: number, engines: Record<string, number>, nonEmpty: number }
}

/** A named property: an arbitrary of requests and the check of one request. */
export interface ReadProperty<T = any> { name: string, arbitrary: fc.Arbitrary<T>, check: (request: T) => Promise<void> }

export interface Answer { status: number, body: string, headers: Record<string, unknown> }

const describeCaller = (caller: Caller): string => `${caller.userId ?? 'anonymous'} [${caller.roles.join(', ')}]`

export async function send (ch: Channels, caller: Caller, url: string, accept?: string): Promise<Answer> {
  const token = ch.world.token(caller)
  const res = await ch.app.inject({
    method: 'GET',
    url,
    headers: { ...(accept !== undefined ? { accept } : {}), ...(token !== undefined ? { authorization: `Bearer ${token}` } : {}) }
  })
  ch.stats.requests++
  return { status: res.statusCode, body: res.body, headers: res.headers }
}

export function fail (caller: Caller, url: string, answer: Answer, problem: string): never {
  const message = `${describeCaller(caller)} GET ${url} → ${answer.status}: ${problem}\n  body: ${answer.body.slice(0, 600)}`
  // The stack says nothing about a broken property; fast-check's report quotes the message alone.
  throw Object.assign(new Error(message), { stack: message })
}

/**
 * No answer may carry the private marker of an object the caller may not view (unless the
 * URL itself quoted it), nor what the site knows of a user besides its id; every summary of
 * another object in it says what the caller may know of that object (summaries.ts).
 */
export function assertNoLeak (ch: Channels, caller: Caller, url: string, answer: Answer): void {
  // The summaries first: their problem names the field.
  const reading = { world: ch.world, caller, staleStates: ch.solrMayLag }
  const problem = (answer.status === 200 && String(answer.headers['content-type']).includes('json') ? summariesProblem(reading, JSON.parse(answer.body)) : null) ?? userFactsProblem(reading, answer.body)
  if (problem !== null) fail(caller, url, answer, problem)
  for (const item of ch.world.items) {
    if (item.marker === null || mayView(caller, item) || url.includes(item.marker)) continue
    if (answer.body.includes(item.marker)) fail(caller, url, answer, `the answer contains ${item.marker}, the private marker of ${item.path} (${item.state}, owner ${item.owner})`)
  }
}

export function assertErrorShape (caller: Caller, url: string, answer: Answer): void {
  const body = JSON.parse(answer.body)
  const type = answer.status === 401 ? 'Unauthorized' : answer.status === 403 ? 'Forbidden' : 'NotFound'
  if (body.type !== type || typeof body.message !== 'string') fail(caller, url, answer, `expected an error {type: ${type}, message}`)
}

export const itemAt = (world: World, path: string): Item | undefined => world.items.find(i => i.path === path)

// ---------------------------------------------------------------- objects by URL

type ObjectService = '' | '/@workflow' | '/@@download/image'
interface ObjectRequest { caller: Caller, path: string, api: boolean, accept?: string }

/** GET of a talk (optionally `/@workflow` or `/@@download/image`): View decides, denials as docs/api.md says. */
export function objectProperty (ch: Channels, service: ObjectService): ReadProperty<ObjectRequest> {
  const talks = ch.world.items.filter(i => i.portalType === 'talk').map(i => i.path)
  return {
    name: `GET <talk>${service}`,
    arbitrary: fc.record({
      caller: fc.constantFrom(...ch.world.callers),
      path: fc.constantFrom(...talks),
      api: fc.boolean(),
      accept: fc.constantFrom('application/json', '*/*')
    }, { requiredKeys: ['caller', 'path', 'api'] }),
    check: async ({ caller, path, api, accept }) => {
      const item = itemAt(ch.world, path)!
      const url = `${api ? '/++api++' : ''}${path}${service}`
      const answer = await send(ch, caller, url, accept)
      const visible = mayView(caller, item)
      const expected = !visible ? deniedStatus(caller) : service === '/@@download/image' && !item.hasImage ? 404 : 200
      if (answer.status !== expected) {
        fail(caller, url, answer, `expected ${expected}: the talk is ${item.state}, owner ${item.owner}, ${visible ? 'viewable' : 'not viewable'} by the caller`)
      }
      assertNoLeak(ch, caller, url, answer)
      if (answer.status !== 200) { assertErrorShape(caller, url, answer); return }
      if (service === '/@@download/image') {
        if (answer.headers['content-type'] !== 'image/png') fail(caller, url, answer, 'expected the image/png bytes')
        return
      }
      const body = JSON.parse(answer.body)
      const state = service === '' ? body.review_state : body.state?.id
      if (state !== item.state) fail(caller, url, answer, `the state is ${item.state}`)
      if (service === '' && !String(body.details?.data).includes(item.marker!)) fail(caller, url, answer, 'the details lack the talk\'s marker')
      const history = service === '/@workflow' ? workflowHistoryProblem({ world: ch.world, caller }, item, body.history) : null
      if (history !== null) fail(caller, url, answer, history)
    }
  }
}

// ---------------------------------------------------------------- paged lists

/** What every page of a paged answer must hold, and which items the pages must add up to. */
export interface Paged {
  caller: Caller
  /** The URL of the page starting at `bStart` (undefined: no b_start parameter). */
  urlOf: (bStart: number | undefined) => string
  bSize: number | undefined
  bStart: number
  showInactive: boolean
  /** Does the item satisfy the query's criteria (the oracle's match, permissions aside)? */
  matches: (item: Item) => boolean
  /** `facet=true` with these `facet.field` (empty: the default facets). */
  facetFields?: FacetField[]
}

const DEFAULT_B_SIZE = 25

/** Items of a page as world items: each must exist and be one the caller may see. */
function pageItems (ch: Channels, p: Paged, url: string, answer: Answer, body: any, now: number): Item[] {
  if (!Array.isArray(body.items)) fail(p.caller, url, answer, 'no items')
  return body.items.map((summary: any) => {
    const item = itemAt(ch.world, pathOf(summary['@id']))
    if (item === undefined) fail(p.caller, url, answer, `${summary['@id']} is not an object of the world`)
    if (!isListed(p.caller, item, now, p.showInactive)) {
      fail(p.caller, url, answer, `${item.path} is listed but the caller may not see it (${item.state}, owner ${item.owner}, ${mayView(p.caller, item) ? 'viewable but inactive' : 'not viewable'})`)
    }
    return item
  })
}

/** Facets compared by value: fields and values in any order, a field without values the same as none. */
const byValue = (facets: Record<string, Record<string, number>>): string =>
  JSON.stringify(Object.entries(facets).filter(([, counts]) => Object.keys(counts).length > 0).sort()
    .map(([field, counts]) => [field, Object.entries(counts).sort()]))

/** The `facets` setting's default (docs/search.md). */
const DEFAULT_FACETS: FacetField[] = ['portal_type', 'review_state']

/** The answer's facets for these fields must be the counts over these items. */
function checkFacets (body: any, items: Item[], fields: FacetField[], problem: (what: string) => never): void {
  const shown = Object.fromEntries(fields.map(field => [field, body.facets?.[field] ?? {}]))
  const wanted = facetCounts(items, fields)
  if (byValue(shown) !== byValue(wanted)) problem(`facets ${JSON.stringify(shown)}, expected ${JSON.stringify(wanted)}`)
}

/** The items of the pages from the start up to `total`, each checked by pageItems. */
async function walk (ch: Channels, p: Paged, size: number, total: number, first: { bStart: number, answer: Answer }, now: number): Promise<Item[]> {
  const seen: Item[] = []
  for (let start = 0; start < total; start += size) {
    const url = p.urlOf(start)
    const page = start === first.bStart ? first.answer : await send(ch, p.caller, url)
    if (page.status !== 200) fail(p.caller, url, page, 'expected 200')
    assertNoLeak(ch, p.caller, url, page)
    seen.push(...pageItems(ch, p, url, page, JSON.parse(page.body), now))
  }
  return seen
}

export async function checkPaged (ch: Channels, p: Paged): Promise<void> {
  const now = Date.now()
  const expected = ch.world.items.filter(i => isListed(p.caller, i, now, p.showInactive) && p.matches(i))
  if (expected.length > 0) ch.stats.nonEmpty++
  // The first page is asked without b_start, the default, when it starts at 0.
  const url = p.urlOf(p.bStart === 0 ? undefined : p.bStart)
  const answer = await send(ch, p.caller, url)
  if (answer.status !== 200) fail(p.caller, url, answer, 'expected 200')
  assertNoLeak(ch, p.caller, url, answer)
  const engine = String(answer.headers['x-search-engine'] ?? 'listing')
  ch.stats.engines[engine] = (ch.stats.engines[engine] ?? 0) + 1
  if (ch.engine === 'solr' && ch.solrMayLag !== true && engine !== 'solr') fail(p.caller, url, answer, 'expected Solr to answer (X-Search-Engine: solr)')
  const body = JSON.parse(answer.body)
  const onPage = pageItems(ch, p, url, answer, body, now)
  const size = p.bSize ?? DEFAULT_B_SIZE
  const facetFields = p.facetFields === undefined ? undefined : p.facetFields.length === 0 ? DEFAULT_FACETS : p.facetFields
  const first = { bStart: p.bStart, answer }

  if (engine === 'solr' && ch.solrMayLag === true) {
    // Solr's documents may be stale: what it shows must add up to what it counts, and it
    // may count nothing the caller may not see (review states aside: Solr's may be old).
    const problem = (what: string): never => fail(p.caller, url, answer, what)
    if (!Number.isInteger(body.items_total) || body.items_total > ch.world.items.length) problem(`items_total ${body.items_total}`)
    const seen = await walk(ch, p, size, body.items_total, first, now)
    const distinct = new Set(seen.map(i => i.path)).size
    if (distinct !== seen.length || seen.length !== body.items_total) problem(`the pages of ${size} add up to ${seen.length} items (${distinct} distinct), items_total ${body.items_total}`)
    if (facetFields !== undefined) checkFacets(body, seen, facetFields.filter(f => f !== 'review_state'), problem)
    return
  }

  const problem = (what: string): never => fail(p.caller, url, answer, `${what}; expected ${expected.length} items: ${expected.map(i => i.path).join(' ') || 'none'}`)
  for (const [n, item] of onPage.entries()) {
    if (!p.matches(item)) problem(`${item.path} does not match the query`)
    if (body.items[n].review_state !== item.state) problem(`${item.path} is shown ${body.items[n].review_state}, it is ${item.state}`)
  }
  if (body.items_total !== expected.length) problem(`items_total ${body.items_total}`)
  if (onPage.length !== Math.max(0, Math.min(size, expected.length - p.bStart))) problem(`${onPage.length} items on the page`)
  if (facetFields !== undefined) checkFacets(body, expected, facetFields, problem)

  // Completeness: the pages, walked from the start, give every expected item once.
  const seen = (await walk(ch, p, size, expected.length, first, now)).map(i => i.path)
  const missing = expected.filter(i => !seen.includes(i.path)).map(i => i.path)
  const extra = seen.filter(path => !expected.some(i => i.path === path))
  const repeated = seen.filter((path, i) => seen.indexOf(path) !== i)
  if (missing.length + extra.length + repeated.length > 0) {
    problem(`walking the pages of ${size}: missing ${missing.join(' ') || 'none'}, extra ${extra.join(' ') || 'none'}, repeated ${repeated.join(' ') || 'none'}`)
  }
}

export const B_SIZES = [1, 2, 3, 5, 8, 25, 100]

/** Query-string pairs in order, so that a URL is a pure function of the request. */
export type Params = Array<[string, string | number]>
export const query = (params: Params): string => params.length === 0 ? '' : '?' + params.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join('&')

export function batchParams (bSize: number | undefined, bStart: number | undefined, marshal: boolean): Params {
  return [
    ...(bSize !== undefined ? [[marshal ? 'b_size:int' : 'b_size', bSize]] as Params : []),
    ...(bStart !== undefined ? [['b_start', bStart]] as Params : [])
  ]
}

interface ListingRequest { caller: Caller, folder: string, api: boolean, bSize?: number, bStart: number, marshal: boolean, fullobjects: boolean, allMetadata: boolean }

/** GET <folder>: the folder's items, paged, as summaries, with every metadata column, or as full objects; a folder the caller may not view is denied. */
export function listingProperty (ch: Channels): ReadProperty<ListingRequest> {
  const folders = ch.world.items.filter(i => i.portalType === 'folder').map(i => i.path)
  return {
    name: 'GET <folder> (listing)',
    arbitrary: fc.record({
      caller: fc.constantFrom(...ch.world.callers),
      // Mostly /talks, which holds most talks.
      folder: fc.oneof({ arbitrary: fc.constant('/talks'), weight: folders.length }, fc.constantFrom(...folders)),
      api: fc.boolean(),
      bSize: fc.constantFrom(...B_SIZES),
      bStart: fc.nat({ max: 24 }),
      marshal: fc.boolean(),
      fullobjects: fc.boolean(),
      allMetadata: fc.boolean()
    }, { requiredKeys: ['caller', 'folder', 'api', 'bStart', 'marshal', 'fullobjects', 'allMetadata'] }),
    check: async r => {
      const urlOf = (bStart: number | undefined): string => `${r.api ? '/++api++' : ''}${r.folder}` + query([
        ...batchParams(r.bSize, bStart, r.marshal),
        ...(r.allMetadata ? [['metadata_fields', '_all']] as Params : []),
        ...(r.fullobjects ? [['fullobjects', 1]] as Params : [])
      ])
      const folder = itemAt(ch.world, r.folder)!
      if (!mayView(r.caller, folder)) {
        const url = urlOf(undefined)
        const answer = await send(ch, r.caller, url)
        if (answer.status !== deniedStatus(r.caller)) fail(r.caller, url, answer, `expected ${deniedStatus(r.caller)}: the folder is ${folder.state}, owner ${folder.owner}`)
        assertErrorShape(r.caller, url, answer)
        assertNoLeak(ch, r.caller, url, answer)
        return
      }
      await checkPaged(ch, {
        caller: r.caller,
        urlOf,
        bSize: r.bSize,
        bStart: r.bStart,
        showInactive: false,
        matches: item => withinPath(item.path, r.folder, 1)
      })
    }
  }
}

// ---------------------------------------------------------------- @search

type Style = 'plain' | 'list' | 'record'
interface Values<T> { values: T[], style: Style }
interface SearchRequest {
  caller: Caller
  api: boolean
  context: '' | '/talks'
  portal_type?: Values<string>
  review_state?: Values<State>
  SearchableText?: string
  Subject?: Values<string>
  path?: { query?: string, depth?: number }
  sort_on?: string
  sort_order?: string
  bSize?: number
  bStart: number
  marshal: boolean
  fullobjects: boolean
  allMetadata: boolean
  /** facet=true with these facet.field (none: the default facets). */
  facet?: FacetField[]
  showInactive: boolean
}

/** Zope marshalling of a list criterion: repeated plain names, `:list`, or the record form `.query`. */
function listParams (name: string, { values, style }: Values<string>): Params {
  const key = style === 'plain' ? name : style === 'list' ? `${name}:list` : `${name}.query`
  return values.map(v => [key, v])
}

function pathParams (path: SearchRequest['path']): Params {
  if (path === undefined) return []
  const params: Params = []
  if (path.query !== undefined) params.push([path.depth === undefined ? 'path' : 'path.query', path.query])
  if (path.depth !== undefined) params.push(['path.depth', path.depth])
  return params
}

/** The oracle's match of a search: every criterion given, as docs/search.md defines it. */
function searchMatches (r: SearchRequest, item: Item): boolean {
  const base = r.path?.query ?? (r.context === '' ? '/' : r.context)
  return withinPath(item.path, base, r.path?.depth) &&
    (r.portal_type === undefined || r.portal_type.values.includes(item.portalType)) &&
    (r.review_state === undefined || r.review_state.values.includes(item.state)) &&
    (r.Subject === undefined || r.Subject.values.some(s => item.subjects.includes(s))) &&
    (r.SearchableText === undefined || item.words.includes(r.SearchableText) || item.marker === r.SearchableText)
}

/** @search on the catalogue or on Solr with every parameter kind. */
export function searchProperty (ch: Channels): ReadProperty<SearchRequest> {
  const { world } = ch
  const values = <T>(options: readonly T[]): fc.Arbitrary<Values<T>> =>
    fc.record({ values: fc.subarray([...options], { minLength: 1 }), style: fc.constantFrom<Style>('plain', 'list', 'record') })
  const markers = world.items.flatMap(i => i.marker === null ? [] : [i.marker])
  const objects = world.items.filter(i => i.path !== '/talks').map(i => i.path)
  return {
    name: `@search (${ch.engine}${ch.solrMayLag === true ? ', outbox not yet delivered' : ''})`,
    arbitrary: fc.record({
      caller: fc.constantFrom(...world.callers),
      api: fc.boolean(),
      context: fc.constantFrom<'' | '/talks'>('', '/talks'),
      portal_type: values(['talk', 'folder']),
      review_state: values(STATES),
      // Mostly criteria that many talks match, so that most searches expect some items.
      SearchableText: fc.oneof({ arbitrary: fc.constantFrom(...WORDS), weight: 3 }, fc.constantFrom(...markers)),
      Subject: values(SUBJECTS),
      path: fc.record({
        query: fc.oneof({ arbitrary: fc.constantFrom('/', '/talks'), weight: 3 }, fc.constantFrom(...objects)),
        depth: fc.constantFrom(0, 1, 2)
      }, { requiredKeys: [] }),
      sort_on: fc.constantFrom('sortable_title', 'created', 'modified', 'effective', 'Date'),
      sort_order: fc.constantFrom('ascending', 'descending', 'reverse'),
      bSize: fc.constantFrom(...B_SIZES),
      bStart: fc.oneof(fc.constant(0), fc.nat({ max: 24 })),
      marshal: fc.boolean(),
      fullobjects: fc.boolean(),
      allMetadata: fc.boolean(),
      facet: fc.subarray<FacetField>(['portal_type', 'review_state', 'Subject']),
      showInactive: fc.boolean()
    }, { requiredKeys: ['caller', 'api', 'context', 'bStart', 'marshal', 'fullobjects', 'allMetadata', 'showInactive'] }),
    check: async r => {
      const criteria: Params = [
        ...(r.portal_type !== undefined ? listParams('portal_type', r.portal_type) : []),
        ...(r.review_state !== undefined ? listParams('review_state', r.review_state) : []),
        ...(r.SearchableText !== undefined ? [['SearchableText', r.SearchableText]] as Params : []),
        ...(r.Subject !== undefined ? listParams('Subject', r.Subject) : []),
        ...pathParams(r.path),
        ...(r.sort_on !== undefined ? [['sort_on', r.sort_on]] as Params : []),
        ...(r.sort_order !== undefined ? [['sort_order', r.sort_order]] as Params : []),
        ...(r.allMetadata ? [['metadata_fields', '_all']] as Params : []),
        ...(r.fullobjects ? [['fullobjects', 1]] as Params : []),
        ...(r.facet !== undefined ? [['facet', 'true'], ...r.facet.map(f => ['facet.field', f])] as Params : []),
        ...(r.showInactive ? [[r.marshal ? 'show_inactive:boolean' : 'show_inactive', 'true']] as Params : []),
        ...(ch.engine === 'solr' ? [['use_solr', 'true']] as Params : [])
      ]
      await checkPaged(ch, {
        caller: r.caller,
        urlOf: bStart => `${r.api ? '/++api++' : ''}${r.context}/@search` + query([...criteria, ...batchParams(r.bSize, bStart, r.marshal)]),
        bSize: r.bSize,
        bStart: r.bStart,
        showInactive: r.showInactive,
        matches: item => searchMatches(r, item),
        facetFields: r.facet
      })
    }
  }
}

// ---------------------------------------------------------------- hostile keys

/** Zope-marshalled query keys whose parts name `__proto__`, `constructor` or `prototype` (docs/api.md: → 400). */
const HOSTILE_KEYS = [
  '__proto__.Anonymous:list', '__proto__.roles:list', 'constructor.prototype.Anonymous',
  'path.__proto__.Anonymous', 'portal_type.constructor.prototype', 'review_state.prototype:record'
]
const HOSTILE_TARGETS = ['/@search', '/talks/@search', '/talks']
interface HostileRequest { caller: Caller, target: string, key: string }

const hostileRequests = (ch: Channels): fc.Arbitrary<HostileRequest> => fc.record({
  caller: fc.constantFrom(...ch.world.callers),
  target: fc.constantFrom(...HOSTILE_TARGETS),
  key: fc.constantFrom(...HOSTILE_KEYS)
})
const hostileUrl = ({ target, key }: HostileRequest): string => `${target}?${encodeURIComponent(key)}=Manager&portal_type=talk`

const prototypeNames = (): string[] => Object.getOwnPropertyNames(Object.prototype)
/** Undoes a pollution at once: left in place, it would fail every later run of every property. */
function unpollute (added: string[]): void {
  for (const name of added) delete (Object.prototype as Record<string, unknown>)[name]
}

/**
 * A hostile key changes nothing for anyone: Object.prototype stays as it was, and the
 * anonymous caller still cannot see a talk it could not see before.
 */
export function hostileKeyHarmlessProperty (ch: Channels): ReadProperty<HostileRequest> {
  const anonymous = ch.world.callers.find(c => c.userId === null)!
  const hidden = ch.world.items.find(i => i.portalType === 'talk' && !mayView(anonymous, i))
  return {
    name: 'hostile query keys change nothing',
    arbitrary: hostileRequests(ch),
    check: async request => {
      const before = prototypeNames()
      const url = hostileUrl(request)
      const answer = await send(ch, request.caller, url)
      const added = prototypeNames().filter(name => !before.includes(name))
      const probe = hidden === undefined ? undefined : await send(ch, anonymous, hidden.path)
      unpollute(added)
      const effect = probe === undefined ? '' : `; then anonymous GET ${hidden!.path} (${hidden!.state}) → ${probe.status}`
      if (added.length > 0) fail(request.caller, url, answer, `Object.prototype gained ${added.join(', ')}${effect}`)
      if (probe !== undefined && probe.status !== 401) fail(request.caller, url, answer, `the request changed what anonymous callers see${effect}`)
    }
  }
}

/** A hostile key is refused with 400 wherever query parameters are read. */
export function hostileKeyRefusedProperty (ch: Channels): ReadProperty<HostileRequest> {
  return {
    name: 'hostile query keys are refused (400)',
    arbitrary: hostileRequests(ch),
    check: async request => {
      const before = prototypeNames()
      const url = hostileUrl(request)
      const answer = await send(ch, request.caller, url)
      // Pollution is the other property's finding.
      unpollute(prototypeNames().filter(name => !before.includes(name)))
      if (answer.status !== 400 || JSON.parse(answer.body).type !== 'BadRequest') fail(request.caller, url, answer, 'expected 400 BadRequest')
    }
  }
}
