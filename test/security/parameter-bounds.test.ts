import { setImmediate as turn } from 'node:timers/promises'
import t, { type Test } from 'tap'
import { build, talkBody, type TestApp } from '../helper.js'
import { buildWithSolr, startSolr } from '../solr/helper.js'
import {
  differenceOf, groupsOf, persistentDifference, INT_EDGES, isolate, ploneParameters, problemOf, PROTOTYPE_NAMES, QUERY_EXTREMES, queryString, routesOf, sameRefusal, SEND_BUDGET, takesBytes, UNKNOWN_NAME,
  type Answer, type Extreme, type Parameter, type Route
} from './parameter-space.js'
import { ROW_VALUES, rowCombinations, SEARCH_BODY_KEYS, type RowCombination } from './querystring-rows.js'
import { costOf, HELD_LOOP_LIMIT_MS, RETAINED_HEAP_LIMIT_BYTES, type WorkCost } from './work-watch.js'

/**
 * Resource bounds of parameters (issue 22, findings 6 and 10): every route the
 * OpenAPI document lists × every query parameter a client may send it (its
 * schema's, every catalogue index plainly and as a range record, Plone's
 * query-wide and expansion parameters) × extreme values (int32 and int64
 * edges, numbers JavaScript reads loosely, long and repeated values, Zope's
 * converters), as anonymous and as Manager; then @querystring-search's JSON
 * rows (every index × each of its operations × extreme values, and the body's
 * other keys). Every answer is 2xx or a 4xx in the contract's shape; no route
 * holds the event loop or keeps memory beyond work-watch.ts's limits; with
 * Solr answering the searches, nothing accepted makes Solr fail (the
 * catalogue's fallback would hide a number Solr refused). And a name every
 * object inherits (`__proto__`, `toString` …), wherever a name is given, is
 * answered as an unknown name is.
 */
// Tens of thousands of requests, two services and a Solr: minutes on a loaded machine, not the 300 s of an ordinary file.
t.setTimeout(900_000)
const plain = await build(t)
const withSolr = await buildWithSolr(t, await startSolr(t))

/** What the GET form of @querystring-search carries when `query` is not the parameter probed. */
const SEARCH = { query: [{ i: 'portal_type', o: 'plone.app.querystring.operation.selection.any', v: ['talk'] }] }
/** API.md §1: these three as keys are refused (400) wherever they appear. */
const CONTRACT_PROTOTYPE_KEYS = ['__proto__', 'constructor', 'prototype']
const NOTHING: Extreme = { label: '', suffix: '', values: [] }

interface Role { name: string, token?: string }
interface Site { app: TestApp, roles: Role[], routes: Route[], parameters: Parameter[], expand: string, expands: Set<Route> }

/**
 * A request, then a turn of the event loop, as between a real client's
 * requests: inject answers without one when nothing waits for I/O, so that a
 * burst would otherwise count as one hold of the loop, and light-my-request's
 * pending writes would keep every answer of the burst in memory.
 */
async function send (app: TestApp, method: Route['method'], url: string, body: unknown, token: string | undefined): Promise<Answer> {
  const res = await app.call(method, url, body, token)
  await turn()
  return res
}

/** A site with a published and a private talk; its routes with real path parameters (a member its listing names, where there is one). */
async function siteOf (app: TestApp): Promise<Site> {
  const manager = await app.tokenFor('admin')
  const published = await app.call('POST', '/talks', talkBody({ title: 'Bounded talk', subjects: ['bounds'] }), manager)
  await app.call('POST', `${new URL(published.json()['@id']).pathname}/@workflow/publish`, {}, manager)
  await app.call('POST', '/talks', talkBody({ title: 'Private talk' }), manager)
  const members = new Map<string, string>()
  for (const parent of ['/@types', '/@vocabularies', '/@controlpanels', '/@users']) {
    const listed = new RegExp(`"@id":"http://localhost:80${parent}/([^"/?]+)"`).exec((await app.call('GET', parent, undefined, manager)).body)
    if (listed !== null) members.set(parent, listed[1])
  }
  const fixed: Record<string, string> = { '*': 'talks', field: 'image', transition: 'publish', op: 'schema' }
  // Services on a folder, as clients call them (a search below it, a path depth from its level).
  const routes = (await routesOf(app.app, (name, template) => members.get(template.slice(0, template.lastIndexOf('/'))) ?? fixed[name] ?? name))
    .map(route => route.url.startsWith('/@') ? { ...route, url: `/talks${route.url}` } : route)
  const expand = Object.keys((await app.call('GET', '/talks', undefined, manager)).json()['@components']).join(',')
  // Every component expanded where a route takes `expand` (plone.restapi's content GET); a search would take it for an index.
  const expands = new Set<Route>()
  for (const route of routes.filter(r => r.method === 'GET')) if ((await app.call('GET', `${route.url}?expand=${expand}`, undefined, manager)).statusCode < 400) expands.add(route)
  return { app, roles: [{ name: 'anonymous' }, { name: 'Manager', token: manager }], routes, parameters: ploneParameters(app.app, routes), expand, expands }
}

/** The route's URL with `parameters` sent as `extreme` says, and what the route needs besides: every component expanded, its required parameters. */
function urlWith (site: Site, route: Route, parameters: Parameter[], extreme: Extreme): string {
  const probed = new Set(parameters.map(p => p.name))
  const baseline: Record<string, string> = { ...site.expands.has(route) ? { expand: site.expand } : {}, ...route.required.includes('query') ? { query: JSON.stringify(SEARCH) } : {} }
  for (const parameter of parameters) Object.assign(baseline, parameter.with)
  return `${route.url}?${queryString(Object.entries(baseline).filter(([name]) => !probed.has(name)), parameters, extreme)}`
}

/** With Solr answering every search, a search it failed on was answered by the fallback, which says so. */
const fellBack = (res: Answer): string | null => res.headers['x-search-fallback'] !== undefined ? `Solr failed on it; the catalogue answered ${res.statusCode}` : null

function assertCost (t: Test, cost: WorkCost, what: string): void {
  t.ok(cost.heldLoopMs < HELD_LOOP_LIMIT_MS, `${what}: the event loop was held at most ${cost.heldLoopMs.toFixed(0)} ms`)
  t.ok(cost.retainedHeapBytes < RETAINED_HEAP_LIMIT_BYTES, `${what}: ${(cost.retainedHeapBytes / 1e6).toFixed(1)} MB retained`)
}

/**
 * Every query parameter × every extreme, and every prototype name as a plain
 * value, on one route, for each role at once. With Solr answering, the
 * extremes only, as anonymous: names are looked up before either engine is
 * asked, and what Solr is sent does not depend on who asks.
 */
async function probeQueries (t: Test, site: Site, route: Route, solrAnswers: boolean): Promise<void> {
  const failures: string[] = []
  const roles = solrAnswers ? site.roles.filter(role => role.token === undefined) : site.roles
  const cost = await costOf(async () => await Promise.all(roles.map(async role => {
    const probe = async (parameters: Parameter[], extreme: Extreme): Promise<Answer> => await send(site.app, route.method, urlWith(site, route, parameters, extreme), undefined, role.token)
    const bare = await probe([], NOTHING)
    const settled = (res: Answer, problem: string | null): boolean => problem === null && (res.statusCode < 400 || sameRefusal(res, bare))
    const report = (what: string) => (subset: Parameter[], problem: string) => failures.push(`${role.name}: ${subset.map(p => p.name).join(', ')} ${what}: ${problem}`)
    for (const extreme of QUERY_EXTREMES) {
      for (const group of groupsOf(site.parameters, extreme)) {
        await isolate(group, async subset => {
          const res = await probe(subset, extreme)
          const problem = problemOf(res) ?? (solrAnswers ? fellBack(res) : null)
          return { settled: settled(res, problem), problem }
        }, report(extreme.label))
      }
    }
    // Not as a range's bound: there an unknown name compares differently from a prototype name, as any two words do.
    for (const name of solrAnswers ? [] : PROTOTYPE_NAMES) {
      const as = (value: string): Extreme => ({ label: value, suffix: '', values: [value] })
      await isolate(site.parameters.filter(p => p.with === undefined), async subset => {
        const [a, b] = [await probe(subset, as(name)), await probe(subset, as(UNKNOWN_NAME))]
        const problem = problemOf(a) ?? problemOf(b) ?? differenceOf(a, b, name, UNKNOWN_NAME)
        return { settled: settled(a, problem), problem }
      }, report(`= '${name}' is not answered as an unknown name`))
    }
  })))
  t.same(failures, [], `${route.method} ${route.template}: every answer is 2xx or a 4xx in the contract's shape, a prototype name as an unknown one`)
  assertCost(t, cost, `${route.method} ${route.template}`)
}

const sites = { plain: await siteOf(plain), solr: await siteOf(withSolr) }
// Every search goes to Solr first (an empty `required` list), so that what Solr is sent is tested too.
await withSolr.call('PATCH', '/@controlpanels/solr-controlpanel', { required: [] }, await withSolr.tokenFor('admin'))
const reads = (site: Site): Route[] => site.routes.filter(r => r.method === 'GET')
/** The routes that search (their answer says which engine answered). */
const searches = async (site: Site): Promise<Route[]> => (await Promise.all(reads(site).map(async route =>
  (await send(site.app, 'GET', urlWith(site, route, [], NOTHING), undefined, undefined)).headers['x-search-engine'] !== undefined ? [route] : []))).flat()

t.test('query parameters: every route, every parameter, every extreme (the catalogue answers)', async t => {
  for (const route of reads(sites.plain)) await t.test(`${route.method} ${route.template}`, async t => { await probeQueries(t, sites.plain, route, false) })
})

t.test('query parameters of the searches, Solr answering them', async t => {
  const found = await searches(sites.solr)
  t.ok(found.length >= 2, `@search and @querystring-search at least: ${found.map(r => r.template).join(', ')}`)
  for (const route of found) await t.test(`${route.method} ${route.template}`, async t => { await probeQueries(t, sites.solr, route, true) })
})

t.test('prototype names as query keys are refused; any other inherited name is an unknown one', async t => {
  const failures: string[] = []
  for (const route of reads(sites.plain)) {
    for (const role of sites.plain.roles) {
      for (const name of PROTOTYPE_NAMES) {
        for (const key of [name, `x.${name}`, `path.${name}`, `${name}.query`, `b_size:${name}`]) {
          const probe = async (k: string): Promise<Answer> => await send(plain, 'GET', `${route.url}?${new URLSearchParams([[k, '1']]).toString()}`, undefined, role.token)
          const refused = CONTRACT_PROTOTYPE_KEYS.includes(name)
          const wrong = await persistentDifference(async () => {
            const [a, b] = [await probe(key), await probe(key.replace(name, UNKNOWN_NAME))]
            return problemOf(a) ?? problemOf(b) ?? (refused ? (a.statusCode === 400 ? null : `${a.statusCode}, not 400`) : differenceOf(a, b, name, UNKNOWN_NAME))
          })
          if (wrong !== null) failures.push(`${role.name} ${route.template}?${key}=1: ${wrong}`)
        }
      }
    }
  }
  t.same(failures, [])
})

t.test('prototype names as path parameters and body keys are answered as unknown names', async t => {
  const failures: string[] = []
  const writes = sites.plain.routes.filter(r => r.method !== 'GET' && r.method !== 'DELETE' && !/@log(out|in-renew)/.test(r.template))
  for (const role of sites.plain.roles) {
    for (const name of PROTOTYPE_NAMES) {
      for (const route of sites.plain.routes.filter(r => r.pathParameters.length > 0 && r.method !== 'DELETE')) {
        const [a, b] = await Promise.all([name, UNKNOWN_NAME].map(async value => await send(plain, route.method, route.template.replace(/\{[^}]+\}/g, value), route.method === 'GET' ? undefined : {}, role.token)))
        const wrong = problemOf(a) ?? problemOf(b) ?? differenceOf(a, b, name, UNKNOWN_NAME)
        if (wrong !== null) failures.push(`${role.name} ${route.method} ${route.template} with '${name}': ${wrong}`)
      }
      for (const route of writes) {
        // API.md §1: the three prototype keys are refused (400) wherever they are; any other name as an unknown one.
        const [a, b] = await Promise.all([name, UNKNOWN_NAME].map(async key => await send(plain, route.method, route.url, JSON.parse(`{"${key}": 1}`), role.token)))
        const refused = CONTRACT_PROTOTYPE_KEYS.includes(name)
        // An upload's PATCH reads no JSON: any JSON body is 415 before a key of it is read.
        const refusal = takesBytes(plain.app, route.method, route.template) ? 415 : 400
        const wrong = problemOf(a) ?? problemOf(b) ?? (refused ? (a.statusCode === refusal ? null : `${a.statusCode}, not ${refusal}`) : differenceOf(a, b, name, UNKNOWN_NAME))
        if (wrong !== null) failures.push(`${role.name} ${route.method} ${route.template} with the key '${name}': ${wrong}`)
      }
    }
  }
  t.same(failures, [])
})

/** Every row of `combinations` with each value, in requests of rows on different indexes; then the body's other keys. */
async function probeRows (t: Test, site: Site, solrAnswers: boolean): Promise<void> {
  const combinations = await rowCombinations(site.app)
  const failures: string[] = []
  const roles = solrAnswers ? site.roles.filter(role => role.token === undefined) : site.roles
  const cost = await costOf(async () => await Promise.all(roles.map(async role => {
    const post = async (body: string): Promise<Answer> => {
      const res = await site.app.inject({
        method: 'POST', url: '/talks/@querystring-search', payload: body, headers: { 'content-type': 'application/json', ...role.token !== undefined ? { authorization: `Bearer ${role.token}` } : {} }
      })
      await turn()
      return res
    }
    const check = (res: Answer): { settled: boolean, problem: string | null } => {
      const problem = problemOf(res) ?? (solrAnswers ? fellBack(res) : null)
      return { settled: problem === null && res.statusCode < 400, problem }
    }
    const rows = (subset: RowCombination[], value: string): string => `{"query": [${subset.map(c => `{"i": ${JSON.stringify(c.i)}, "o": ${JSON.stringify(c.o)}, "v": ${value}}`).join(', ')}]}`
    for (const value of ROW_VALUES) {
      // Rows on different indexes, as many as one request's budget holds.
      const perRequest = Math.max(1, Math.floor(SEND_BUDGET / (value.length + 100)))
      for (const layer of combinations) {
        for (let at = 0; at < layer.length; at += perRequest) {
          await isolate(layer.slice(at, at + perRequest), async subset => check(await post(rows(subset, value))),
            (subset, problem) => failures.push(`${role.name}: ${rows(subset, value.length > 40 ? `<${value.length} characters>` : value)}: ${problem}`))
        }
      }
      for (const key of SEARCH_BODY_KEYS) {
        const body = `{"query": ${JSON.stringify(SEARCH.query)}, "${key}": ${value}}`
        const { problem } = check(await post(body))
        if (problem !== null) failures.push(`${role.name}: ${key}: ${value.slice(0, 40)}: ${problem}`)
      }
    }
    for (const name of solrAnswers ? [] : PROTOTYPE_NAMES) {
      const bodies = [
        (n: string) => ({ query: [{ i: n, o: 'plone.app.querystring.operation.string.is', v: 'x' }] }),
        (n: string) => ({ query: [{ i: 'Title', o: n, v: 'x' }] }),
        (n: string) => ({ query: [{ i: 'Title', o: `plone.app.querystring.operation.${n}`, v: 'x' }] }),
        (n: string) => ({ ...SEARCH, sort_on: n }),
        (n: string) => ({ ...SEARCH, metadata_fields: [n] })
      ]
      for (const body of bodies) {
        const [a, b] = [await post(JSON.stringify(body(name))), await post(JSON.stringify(body(UNKNOWN_NAME)))]
        const wrong = problemOf(a) ?? problemOf(b) ?? differenceOf(a, b, name, UNKNOWN_NAME)
        if (wrong !== null) failures.push(`${role.name}: ${JSON.stringify(body(name))} is not answered as an unknown name: ${wrong}`)
      }
    }
  })))
  t.same(failures, [], 'every row and every body key: 2xx or a 4xx in the contract\'s shape; a prototype name as an unknown one')
  assertCost(t, cost, 'POST /@querystring-search')
}

t.test('@querystring-search rows: every index × its operations × extremes (the catalogue answers)', async t => { await probeRows(t, sites.plain, false) })
t.test('@querystring-search rows, Solr answering them', async t => { await probeRows(t, sites.solr, true) })

/** A setting's value as JSON text: int32 and int64 edges, what JavaScript reads loosely, fractions a timer cannot wait. */
const SETTING_VALUES = [...INT_EDGES, '-1', '0', '-0', '1.5', '1e308', '1e-7', '0.0005']

t.test('control panel numbers: a 204 or a 400 for every extreme; what is accepted never breaks a search or a write', async t => {
  const manager = await withSolr.tokenFor('admin')
  const panel = (await withSolr.call('GET', '/@controlpanels/solr-controlpanel', undefined, manager)).json() as { data: Record<string, unknown>, schema: { properties: Record<string, { type?: string }> } }
  const numeric = Object.entries(panel.schema.properties).filter(([, p]) => p.type === 'integer' || p.type === 'number').map(([name]) => name)
  t.ok(numeric.length >= 8, `the numeric settings, from the panel's schema: ${numeric.join(', ')}`)
  const patch = async (body: string): Promise<Answer> => await withSolr.inject({ method: 'PATCH', url: '/@controlpanels/solr-controlpanel', payload: body, headers: { 'content-type': 'application/json', authorization: `Bearer ${manager}` } })
  const talk = new URL((await withSolr.call('POST', '/talks', talkBody({ title: 'Set and searched' }), manager)).json()['@id']).pathname
  await withSolr.call('POST', `${talk}/@workflow/publish`, {}, manager)
  const failures: string[] = []
  for (const [name, body] of [...numeric.map(name => [name, (v: string) => `{"${name}": ${v}}`] as const), ['boost_rules', (v: string) => `{"boost_rules": {"Title": ${v}}}`] as const]) {
    for (const value of SETTING_VALUES) {
      const set = await patch(body(value))
      const problem = problemOf(set)
      if (problem !== null || (set.statusCode !== 204 && set.statusCode !== 400)) { failures.push(`${name} = ${value}: ${problem ?? set.statusCode}`); continue }
      if (set.statusCode === 400) continue
      const wrote = await withSolr.call('PATCH', talk, { description: `${name} ${value}` }, manager)
      // Anonymous: a search that applies the effective-date filter (a Manager's does not).
      const searched = await withSolr.call('GET', '/@search?SearchableText=searched&hl=true')
      // A timeout shorter than a second may pass before Solr answers: then the catalogue does, as it should.
      const mayTimeOut = name.endsWith('_timeout') && Number(value) < 1
      const wrong = problemOf(wrote) ?? problemOf(searched) ?? (mayTimeOut ? null : fellBack(searched))
      if (wrong !== null) failures.push(`${name} = ${value} was accepted, then: ${wrong}`)
      await patch(JSON.stringify({ [name]: panel.data[name] }))
    }
  }
  t.same(failures, [])
})
