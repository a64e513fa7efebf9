// The read channels that answer with summaries of other objects, beside those of
// read-channels.ts (not a test file): every object with `@components` expanded, the component
// services themselves, `@querystring-search` and the tags vocabulary — each answer checked by
// read-channels.ts's assertNoLeak (summaries.ts walks it) and by the oracle of its own shape.
import fc from 'fast-check'
import { deniedStatus, isListed, mayView, STATES, withinPath, type Caller, type Item, type State } from './permission-model.js'
import { assertErrorShape, assertNoLeak, B_SIZES, checkPaged, fail, itemAt, query, send, type Channels, type Params, type ReadProperty } from './read-channels.js'
import { breadcrumbsProblem, historyStatus, navigationProblem, workflowHistoryProblem, type Problem, type Reading } from './summaries.js'
import { SUBJECTS, WORDS } from './world.js'

// ---------------------------------------------------------------- @components and their services

/** The components every object lists (docs/api.md, `expand`), and `translations`, shown when expanded. */
const COMPONENTS = ['actions', 'breadcrumbs', 'contextnavigation', 'navigation', 'navroot', 'translations', 'types', 'workflow'] as const
type Service = '' | '/@breadcrumbs' | '/@contextnavigation' | '/@navigation' | '/@navroot' | '/@workflow' | '/@history'
const SERVICES: Service[] = ['', '/@breadcrumbs', '/@contextnavigation', '/@navigation', '/@navroot', '/@workflow', '/@history']
interface ComponentsRequest { caller: Caller, path: string, api: boolean, service: Service, expand: string[], depth?: number }

/** The checks of each component's answer, by its name (as a service or expanded). */
function componentProblem (r: Reading, item: Item, name: string, answer: any, depth: number): Problem {
  if (name === 'breadcrumbs') return breadcrumbsProblem(item.path, answer)
  if (name === 'navigation') return navigationProblem(r, depth, answer, Date.now())
  if (name === 'workflow') return workflowHistoryProblem(r, item, answer.history)
  if (name === 'history') return Array.isArray(answer) && answer.length > 0 ? null : `@history is ${JSON.stringify(answer)}; expected its entries`
  return null
}

/**
 * GET of any object (talks and folders) with a random `expand`, or one of the services
 * that are components (`@breadcrumbs`, `@navigation` with its depth, `@navroot`, `@workflow`)
 * and `@history`: View decides, and each summary in the answer says what the caller may know.
 */
export function componentsProperty (ch: Channels): ReadProperty<ComponentsRequest> {
  return {
    name: 'GET <object>?expand=… and the component services',
    arbitrary: fc.record({
      caller: fc.constantFrom(...ch.world.callers),
      path: fc.constantFrom(...ch.world.items.map(i => i.path)),
      api: fc.boolean(),
      service: fc.constantFrom(...SERVICES),
      expand: fc.subarray([...COMPONENTS]),
      depth: fc.integer({ min: 1, max: 4 })
    }, { requiredKeys: ['caller', 'path', 'api', 'service', 'expand'] }),
    check: async ({ caller, path, api, service, expand, depth }) => {
      const item = itemAt(ch.world, path)!
      const reading = { world: ch.world, caller }
      const params: Params = [
        ...(service === '' && expand.length > 0 ? [['expand', expand.join(',')]] as Params : []),
        ...(depth !== undefined ? [['expand.navigation.depth', depth]] as Params : [])
      ]
      const url = `${api ? '/++api++' : ''}${path}${service}${query(params)}`
      const answer = await send(ch, caller, url)
      const allowed = service === '/@history' ? historyStatus(reading, item) === 'entries' : mayView(caller, item)
      const expected = allowed ? 200 : deniedStatus(caller)
      if (answer.status !== expected) fail(caller, url, answer, `expected ${expected}: ${item.path} is ${item.state}, owner ${item.owner}`)
      assertNoLeak(ch, caller, url, answer)
      if (answer.status !== 200) { assertErrorShape(caller, url, answer); return }
      const body = JSON.parse(answer.body)
      const answers: Array<[string, unknown]> = service === ''
        ? expand.filter(name => name !== 'translations').map(name => [name, body['@components']?.[name]])
        : [[service.slice(2), body]]
      for (const [name, component] of answers) {
        const problem = componentProblem(reading, item, name, component, depth ?? 1)
        if (problem !== null) fail(caller, url, answer, `${name}: ${problem}`)
      }
    }
  }
}

// ---------------------------------------------------------------- @querystring-search

const OP = 'plone.app.querystring.operation.'
interface QuerystringRequest {
  caller: Caller
  api: boolean
  path: { base: string, depth?: number }
  portalTypes?: string[]
  states?: State[]
  subjects?: string[]
  text?: string
  fullobjects: boolean
  bSize?: number
  bStart: number
}

/**
 * `GET <site>/@querystring-search?query=…` (Volto's listing block) with path, selection and
 * text rows, as summaries or full objects: the listing the oracle expects, every summary
 * checked. On Solr every query has a text row, which sends it to Solr.
 */
export function querystringProperty (ch: Channels): ReadProperty<QuerystringRequest> {
  const { world } = ch
  const markers = world.items.flatMap(i => i.marker === null ? [] : [i.marker])
  const text = fc.oneof({ arbitrary: fc.constantFrom(...WORDS), weight: 3 }, fc.constantFrom(...markers))
  return {
    name: `@querystring-search (${ch.engine}${ch.solrMayLag === true ? ', outbox not yet delivered' : ''})`,
    arbitrary: fc.record({
      caller: fc.constantFrom(...world.callers),
      api: fc.boolean(),
      // Mostly the whole site or /talks, so that most queries expect some items.
      path: fc.record({
        base: fc.oneof({ arbitrary: fc.constantFrom('/', '/talks'), weight: 3 }, fc.constantFrom(...world.items.map(i => i.path))),
        depth: fc.constantFrom(1, 2, 3)
      }, { requiredKeys: ['base'] }),
      portalTypes: fc.subarray(['talk', 'folder'], { minLength: 1 }),
      states: fc.subarray([...STATES], { minLength: 1 }),
      subjects: fc.subarray([...SUBJECTS], { minLength: 1 }),
      text,
      fullobjects: fc.boolean(),
      bSize: fc.constantFrom(...B_SIZES),
      bStart: fc.oneof(fc.constant(0), fc.nat({ max: 24 }))
    }, { requiredKeys: ['caller', 'api', 'path', 'fullobjects', 'bStart'] }).chain(r => ch.engine === 'solr' && r.text === undefined ? text.map(t => ({ ...r, text: t })) : fc.constant(r)),
    check: async r => {
      const rows = [
        { i: 'path', o: `${OP}string.absolutePath`, v: r.path.depth === undefined ? r.path.base : `${r.path.base}::${r.path.depth}` },
        ...(r.portalTypes !== undefined ? [{ i: 'portal_type', o: `${OP}selection.any`, v: r.portalTypes }] : []),
        ...(r.states !== undefined ? [{ i: 'review_state', o: `${OP}selection.any`, v: r.states }] : []),
        ...(r.subjects !== undefined ? [{ i: 'Subject', o: `${OP}selection.any`, v: r.subjects }] : []),
        ...(r.text !== undefined ? [{ i: 'SearchableText', o: `${OP}string.contains`, v: r.text }] : [])
      ]
      const urlOf = (bStart: number | undefined): string => {
        const body = { query: rows, ...(r.bSize !== undefined ? { b_size: r.bSize } : {}), ...(bStart !== undefined ? { b_start: bStart } : {}), ...(r.fullobjects ? { fullobjects: 1 } : {}) }
        // plone.restapi decodes the parameter once more: clients encode the JSON before putting it in the URL.
        return `${r.api ? '/++api++' : ''}/@querystring-search?query=${encodeURIComponent(encodeURIComponent(JSON.stringify(body)))}`
      }
      await checkPaged(ch, {
        caller: r.caller,
        urlOf,
        bSize: r.bSize,
        bStart: r.bStart,
        showInactive: false,
        matches: item => withinPath(item.path, r.path.base, r.path.depth) &&
          (r.portalTypes === undefined || r.portalTypes.includes(item.portalType)) &&
          (r.states === undefined || r.states.includes(item.state)) &&
          (r.subjects === undefined || r.subjects.some(s => item.subjects.includes(s))) &&
          (r.text === undefined || item.words.includes(r.text) || item.marker === r.text)
      })
    }
  }
}

// ---------------------------------------------------------------- the tags vocabulary

/** `@vocabularies/plone.app.vocabularies.Keywords`: the tags of the content the caller may see in listings, no other. */
export function keywordsProperty (ch: Channels): ReadProperty<{ caller: Caller }> {
  return {
    name: '@vocabularies/plone.app.vocabularies.Keywords',
    arbitrary: fc.record({ caller: fc.constantFrom(...ch.world.callers) }),
    check: async ({ caller }) => {
      const url = '/@vocabularies/plone.app.vocabularies.Keywords?b_size=-1'
      const now = Date.now()
      const answer = await send(ch, caller, url)
      if (answer.status !== 200) fail(caller, url, answer, 'expected 200')
      assertNoLeak(ch, caller, url, answer)
      const tokens = (JSON.parse(answer.body).items as Array<{ token: string }>).map(t => t.token).sort()
      const expected = [...new Set(ch.world.items.filter(i => isListed(caller, i, now, false)).flatMap(i => i.subjects))].sort()
      if (JSON.stringify(tokens) !== JSON.stringify(expected)) fail(caller, url, answer, `tags ${tokens.join(' ')}; expected ${expected.join(' ')}`)
    }
  }
}
